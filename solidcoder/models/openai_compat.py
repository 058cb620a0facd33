"""Backend for any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, OpenAI itself) via the `openai` client.

Requests go through the client's `post` rather than `chat.completions.create`: the body is already plain JSON,
and `create` runs it through the SDK's typed-dict transform first, ~2 ms of CPU per call, which at 32 calls in
flight on a small machine was a third of the client's time (benchmarks/bench_concurrency.py). The reply is parsed
into the same `ChatCompletion`, and errors are the same exceptions.

The client's own retries are off (`max_retries=0`) so that our policy in `retry.py` is the only one, and its
timeout is the per-call timeout, which also bounds a server that accepts the request and then hangs.
`translate_error` is shared with the litellm backend, whose exceptions subclass the openai ones.
"""

from __future__ import annotations

import json
import os
from email.utils import parsedate_to_datetime
from typing import Any

from solidcoder.errors import ModelFatalError
from solidcoder.models.backend import ChatBackend, Reply, Request
from solidcoder.models.base import Budget
from solidcoder.models.retry import RetryPolicy, TransientError
from solidcoder.models.settings import ModelSettings

CHAT_PATH = "/chat/completions"
TEMPLATE_HEADER = "X-Solidcoder-Template"
_CONTEXT_HINTS = ("context length", "context window", "context_length", "maximum context", "too many tokens")


class OpenAICompatModel(ChatBackend):
    """Talks to `api_base` with the openai client; `name` is what the server calls the model."""

    def __init__(
        self,
        name: str,
        api_base: str,
        settings: ModelSettings,
        policy: RetryPolicy,
        budget: Budget | None = None,
        api_key: str | None = None,
    ):
        super().__init__(name, settings, policy, budget)
        self.api_base = api_base
        self.where = api_base
        # Local servers ignore the key, but the client refuses to start without one.
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key-needed"
        self._client: Any = None
        self._aclient: Any = None

    def _send(self, request: Request) -> Reply:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(**self._client_args())
        return self._call(lambda: self._client.post(CHAT_PATH, body=self._body(request), cast_to=_completion_type(),
                                                    options=_options(request)))

    async def _asend(self, request: Request) -> Reply:
        if self._aclient is None:
            import openai

            self._aclient = openai.AsyncOpenAI(**self._client_args())
        try:
            response = await self._aclient.post(CHAT_PATH, body=self._body(request), cast_to=_completion_type(),
                                                options=_options(request))
        except Exception as exc:
            raise translate_error(exc, self._what()) from exc
        return parse_response(response, self._what())

    def _call(self, send: Any) -> Reply:
        try:
            response = send()
        except Exception as exc:
            raise translate_error(exc, self._what()) from exc
        return parse_response(response, self._what())

    def _client_args(self) -> dict[str, Any]:
        return {"api_key": self._api_key, "base_url": self.api_base, "max_retries": 0, "timeout": self.policy.timeout_s}

    def _body(self, request: Request) -> dict[str, Any]:
        body = {
            "model": self.name,
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.schema is not None:
            body["response_format"] = request.response_format()
        if request.n > 1:
            body["n"] = request.n
        if request.stop:
            body["stop"] = list(request.stop[:self.settings.max_stop])
        if request.prefix:  # vLLM's names; llama.cpp's server continues a final assistant message by itself
            body |= {"continue_final_message": True, "add_generation_prompt": False}
        return body


def _options(request: Request) -> dict[str, Any]:
    """Per-request client options: the template's name travels as a header (servers may log it; tests route by it)."""
    return {"headers": {TEMPLATE_HEADER: request.template}} if request.template else {}


def _completion_type() -> type:
    from openai.types.chat import ChatCompletion

    return ChatCompletion


def parse_response(response: Any, what: str) -> Reply:
    """Pull text (every choice's, when there are several), usage and finish reason out of a ChatCompletion-shaped
    object (openai or litellm)."""
    try:
        choice = response.choices[0]
        usage = response.usage
        return Reply(
            text=choice.message.content,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            finish_reason=choice.finish_reason,
            choices=tuple(c.message.content for c in response.choices) if len(response.choices) > 1 else (),
        )
    except (AttributeError, IndexError, TypeError) as exc:
        raise TransientError(f"{what}: reply is not a chat completion ({exc})") from exc


def translate_error(exc: Exception, what: str) -> Exception:
    """Map an openai/litellm exception to `TransientError` (retry) or `ModelFatalError` (stop, say what to do)."""
    import openai

    if isinstance(exc, openai.RateLimitError):
        return TransientError(f"{what}: rate limited (429)", retry_after=_retry_after(exc))
    if isinstance(exc, openai.APITimeoutError):
        return TransientError(f"{what}: no answer within the per-call timeout")
    if isinstance(exc, openai.APIConnectionError):
        return TransientError(f"{what}: cannot connect ({exc}); is the server running?")
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return TransientError(f"{what}: server sent a malformed reply ({exc})")
    if isinstance(exc, openai.APIStatusError):
        return _from_status(exc, what)
    return exc


def _from_status(exc: Any, what: str) -> Exception:
    code = exc.status_code
    text = str(exc)
    if code >= 500 or code in (408, 409):
        return TransientError(f"{what}: server error {code}: {text}", retry_after=_retry_after(exc))
    if code in (401, 403):
        return ModelFatalError(f"{what}: authentication failed ({code}); check the API key (e.g. OPENAI_API_KEY)")
    if code == 404:
        return ModelFatalError(f"{what}: model or endpoint not found (404); check --model and --api-base")
    if _is_context_error(exc, text):
        return ModelFatalError(
            f"{what}: prompt does not fit the context window; use a model with a larger window, raise its "
            f"context_window/--max-model-len, or shorten the input ({text})"
        )
    return ModelFatalError(f"{what}: request rejected ({code}): {text}; check the model's settings and parameters")


def _is_context_error(exc: Any, text: str) -> bool:
    if type(exc).__name__ == "ContextWindowExceededError":  # litellm's own class; avoid importing litellm here
        return True
    return any(hint in text.lower() for hint in _CONTEXT_HINTS)


def _retry_after(exc: Any) -> float | None:
    """Seconds from a Retry-After header (seconds or an HTTP date), if the response carried one."""
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import datetime as dt

        return max(0.0, (parsedate_to_datetime(value) - dt.datetime.now(dt.timezone.utc)).total_seconds())
    except (TypeError, ValueError):
        return None
