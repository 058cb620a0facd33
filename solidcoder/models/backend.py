"""The shared half of every backend: defaults, message adaptation, budget, retries, timing and cost.

A concrete backend only sends one request (`_send` / `_asend`) and returns a `Reply`, translating its library's
errors into `TransientError` or `ModelFatalError`. Everything that must be the same for all backends lives here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

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


class ChatBackend:
    """Base class for backends; subclasses implement `_send` and `_asend` and set `where` for messages."""

    where = "model"

    def __init__(self, name: str, settings: ModelSettings, policy: RetryPolicy, budget: Budget | None = None):
        self.name = name
        self.settings = settings
        self.policy = policy
        self.budget = budget or Budget()

    def complete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None,
    ) -> Completion:
        request = self._request(messages, temperature, max_tokens, top_p, schema)
        self.budget.reserve()
        start = time.monotonic()
        reply = call_with_retries(self.policy, self._what(), lambda: self._send(request))
        return self._finish(reply, start)

    async def acomplete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None,
    ) -> Completion:
        request = self._request(messages, temperature, max_tokens, top_p, schema)
        self.budget.reserve()
        start = time.monotonic()
        reply = await acall_with_retries(self.policy, self._what(), lambda: self._asend(request))
        return self._finish(reply, start)

    def _send(self, request: Request) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _asend(self, request: Request) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    def _what(self) -> str:
        return f"model {self.name} ({self.where})"

    def _request(self, messages: list[Message], temperature: float | None, max_tokens: int | None,
                 top_p: float | None = None, schema: dict | None = None) -> Request:
        if not messages:
            raise ValueError("a chat request needs at least one message")
        adapted = self.settings.adapt(messages)
        return Request(
            messages=[{"role": m.role, "content": m.content} for m in adapted],
            temperature=self.settings.temperature if temperature is None else temperature,
            max_tokens=self.settings.max_tokens if max_tokens is None else max_tokens,
            template=next((m.template for m in messages if m.template), None),
            top_p=top_p,
            schema=schema,
        )

    def _finish(self, reply: Reply, start: float) -> Completion:
        latency = time.monotonic() - start
        cost = reply.cost_usd
        if cost is None:
            cost = self.settings.cost(reply.prompt_tokens, reply.completion_tokens)
        completion = Completion(
            text=reply.text or "",
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost_usd=cost,
            latency_s=latency,
            model=self.name,
        )
        # The tokens were spent even when the reply is unusable, so they count against the budget first.
        self.budget.record(completion)
        if not (reply.text or "").strip():
            raise ModelError(f"{self._what()}: empty reply (finish_reason={reply.finish_reason}); not scoring it")
        return completion
