"""The shared half of every backend: defaults, message adaptation, budget, retries, timing and cost.

A concrete backend only sends one request (`_send` / `_asend`) and returns a `Reply`, translating its library's
errors into `TransientError` or `ModelFatalError`. Everything that must be the same for all backends lives here.

Several choices of one prompt (`n` > 1) go out as one request where the backend takes `n` (`takes_n`: the setting
`sends_n` for servers, which OpenAI and vLLM honour and llama.cpp's server refuses), else as n requests whose
replies are merged, each prompt counted as billed.

`stop` strings go out with the request where the backend takes them (llama.cpp, OpenAI-compatible servers and
litellm do; OpenAI's own API takes at most four, `max_stop` of the settings), and every reply is cut again at the
first of them here, so a backend that ignores or caps them answers as one that honours them (only the tokens billed
differ). A request whose last message is in the `assistant` role asks the model to continue that text (a prefilled
turn, e.g. an open code fence): llama.cpp in-process and transformers render the chat template up to the assistant's
turn and append the prefix; OpenAI-compatible servers get vLLM's `continue_final_message` (llama.cpp's server
continues a final assistant message by itself); those backends (`continues`) return the continuation, and the
reply's text is the prefix followed by it. litellm's providers differ (OpenAI answers a new turn), so there the
prefix message is not sent and the reply is the model's own whole turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from solidcoder.errors import ModelError
from solidcoder.models.base import Budget, Completion, Message
from solidcoder.models.retry import RetryPolicy, acall_with_retries, call_with_retries
from solidcoder.models.settings import ModelSettings


@dataclass(frozen=True)
class Request:
    """One chat request after defaults and message adaptation."""

    messages: list[dict[str, str]]
    temperature: float
    max_tokens: int
    template: str | None = None  # the prompt template the messages came from, for servers that log it
    top_p: float | None = None  # None: the server's default
    schema: dict | None = None  # a JSON schema the reply must follow, where the backend can enforce one
    n: int = 1  # choices asked for; only sent when > 1
    stop: tuple[str, ...] = ()  # a reply ends before the first of these

    @property
    def prefix(self) -> str:
        """The text a last `assistant` message asks the reply to continue; "" when the last message is not one."""
        last = self.messages[-1]
        return last["content"] if last["role"] == "assistant" else ""

    @property
    def turns(self) -> list[dict[str, str]]:
        """The messages before the prefix: what the chat template renders up to the assistant's turn."""
        return self.messages[:-1] if self.prefix else self.messages

    def response_format(self) -> dict:
        """OpenAI's structured-output request for `schema` (also what litellm passes on)."""
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": self.schema, "strict": True}}


@dataclass(frozen=True)
class Reply:
    """What a backend got back; `cost_usd` None means "price it from the settings"."""

    text: str | None
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None
    cost_usd: float | None = None
    choices: tuple[str | None, ...] = ()  # every choice's text when more than one was asked for


def cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    """`text` up to the first occurrence of any of `stop` (all of it when none occurs)."""
    ends = [found for found in (text.find(s) for s in stop if s) if found >= 0]
    return text[:min(ends)] if ends else text


def merged(replies: list[Reply]) -> Reply:
    """The replies of n one-choice requests as one n-choice reply: every prompt counted, as each was billed."""
    costs = [r.cost_usd for r in replies]
    return Reply(replies[0].text, sum(r.prompt_tokens for r in replies), sum(r.completion_tokens for r in replies),
                 replies[0].finish_reason, None if None in costs else sum(costs), tuple(r.text for r in replies))


class ChatBackend:
    """Base class for backends; subclasses implement `_send` and `_asend` and set `where` for messages."""

    where = "model"
    continues = True  # a final assistant message is continued and the reply holds only the continuation

    def __init__(self, name: str, settings: ModelSettings, policy: RetryPolicy, budget: Budget | None = None):
        self.name = name
        self.settings = settings
        self.policy = policy
        self.budget = budget or Budget()

    def complete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None, n: int = 1, stop: tuple[str, ...] = (),
    ) -> Completion:
        request = self._request(messages, temperature, max_tokens, top_p, schema, n, stop)
        start, replies = time.monotonic(), []
        for one in self._requests(request):
            self.budget.reserve()
            replies.append(call_with_retries(self.policy, self._what(), lambda one=one: self._send(one)))
        return self._finish(merged(replies) if len(replies) > 1 else replies[0], start, request)

    async def acomplete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None, n: int = 1, stop: tuple[str, ...] = (),
    ) -> Completion:
        request = self._request(messages, temperature, max_tokens, top_p, schema, n, stop)
        start, replies = time.monotonic(), []
        for one in self._requests(request):
            self.budget.reserve()
            replies.append(await acall_with_retries(self.policy, self._what(), lambda one=one: self._asend(one)))
        return self._finish(merged(replies) if len(replies) > 1 else replies[0], start, request)

    @property
    def takes_n(self) -> bool:
        """Whether one request can carry n choices (servers: the `sends_n` setting)."""
        return self.settings.sends_n

    def _requests(self, request: Request) -> list[Request]:
        """The request itself, or n one-choice copies of it for a backend that does not take `n`."""
        return [request] if request.n == 1 or self.takes_n else [replace(request, n=1)] * request.n

    def _send(self, request: Request) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _asend(self, request: Request) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    def _what(self) -> str:
        return f"model {self.name} ({self.where})"

    def _request(self, messages: list[Message], temperature: float | None, max_tokens: int | None,
                 top_p: float | None = None, schema: dict | None = None, n: int = 1,
                 stop: tuple[str, ...] = ()) -> Request:
        if not messages or n < 1:
            raise ValueError("a chat request needs at least one message and asks for at least one choice")
        adapted = self.settings.adapt(messages)
        return Request(
            messages=[{"role": m.role, "content": m.content} for m in adapted],
            temperature=self.settings.temperature if temperature is None else temperature,
            max_tokens=self.settings.max_tokens if max_tokens is None else max_tokens,
            template=next((m.template for m in messages if m.template), None),
            top_p=top_p,
            schema=schema,
            n=n,
            # stop strings end the continuation of a prefix; a backend that answers a fresh turn instead (its own
            # opening fence, prose first) would be cut at them
            stop=tuple(stop) if self.continues or messages[-1].role != "assistant" else (),
        )

    def _finish(self, reply: Reply, start: float, request: Request) -> Completion:
        latency = time.monotonic() - start
        cost = reply.cost_usd
        if cost is None:
            cost = self.settings.cost(reply.prompt_tokens, reply.completion_tokens)
        reply = self._ended(reply, request)
        completion = Completion(
            text=reply.text or "",
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost_usd=cost,
            latency_s=latency,
            model=self.name,
            choices=tuple(text or "" for text in reply.choices) if len(reply.choices) > 1 else (),
        )
        # The tokens were spent even when the reply is unusable, so they count against the budget first.
        self.budget.record(completion)
        if not any((text or "").strip() for text in reply.choices or (reply.text,)):
            raise ModelError(f"{self._what()}: empty reply (finish_reason={reply.finish_reason}); not scoring it")
        return completion

    def _ended(self, reply: Reply, request: Request) -> Reply:
        """`reply` with each choice cut at the request's stop strings and, where this backend continued a prefix,
        that prefix put back in front (a choice with no text stays empty: the empty-reply check must see it)."""
        prefix = request.prefix if self.continues else ""

        def end(text: str | None) -> str | None:
            return prefix + cut_at_stop(text, request.stop) if text else text

        return replace(reply, text=end(reply.text), choices=tuple(end(text) for text in reply.choices))
