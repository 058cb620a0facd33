"""Backend for API providers through litellm (extra `api`): "anthropic/claude-...", "gpt-4o", "deepseek/..." etc.

`import litellm` takes seconds, so it happens on the first call, never at import time. litellm's own retries are
off; our policy in `retry.py` is the only one. Its exceptions subclass openai's, so errors are translated by
`openai_compat.translate_error`. Cost comes from our settings table when it prices the model, else from litellm.
"""

from __future__ import annotations

import os
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.models.backend import ChatBackend, Reply, Request
from solidcoder.models.base import Budget
from solidcoder.models.openai_compat import parse_response, translate_error
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings


def import_litellm(spec: str) -> Any:
    """litellm, imported on demand; BadInput says that `spec` was not found as a file either."""
    # Without this, importing litellm tries to download a price table, which stalls for seconds when offline.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError:
        raise BadInput(f"--model {spec}: no file or directory of that name, and API models need litellm: "
                       "pip install 'solidcoder[api]'") from None
    litellm.suppress_debug_info = True  # our error messages already say what happened
    return litellm


def check_known(litellm: Any, spec: str, api_base: str | None) -> None:
    """BadInput when litellm knows no provider for `spec` (a mistyped name), before any call is made."""
    try:
        litellm.get_llm_provider(model=spec, api_base=api_base)
    except Exception:  # litellm raises its BadRequestError, and others for malformed names
        raise BadInput(f"--model {spec}: no file or directory of that name, and no API provider litellm knows "
                       "serves it (e.g. gpt-4o-mini, anthropic/claude-3-5-sonnet-latest; openai/NAME with --api-base "
                       "for a server's model)") from None


class LiteLLMModel(ChatBackend):
    """A model reached through litellm; `api_base` optionally points it at a specific server."""

    where = "litellm"
    continues = False  # the prefix message is left out and the reply is the model's whole turn

    def __init__(
        self,
        name: str,
        settings: ModelSettings,
        policy: RetryPolicy,
        budget: Budget | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
    ):
        super().__init__(name, settings, policy, budget)
        self.api_base = api_base
        self.api_key = api_key
        self._litellm = import_litellm(name)
        check_known(self._litellm, name, api_base)

    def _send(self, request: Request) -> Reply:
        try:
            response = self._litellm.completion(**self._body(request))
        except Exception as exc:
            raise translate_error(exc, self._what()) from exc
        return self._priced(response)

    async def _asend(self, request: Request) -> Reply:
        try:
            response = await self._litellm.acompletion(**self._body(request))
        except Exception as exc:
            raise translate_error(exc, self._what()) from exc
        return self._priced(response)

    def _body(self, request: Request) -> dict[str, Any]:
        body = {
            "model": self.name,
            "messages": request.turns,  # a prefix is not sent: providers differ on it (backend.py)
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "timeout": self.policy.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if request.schema is not None:
            body["response_format"] = request.response_format()
        if request.n > 1:
            body["n"] = request.n
        if request.stop:
            body["stop"] = list(request.stop[:self.settings.max_stop])
        if self.api_base:
            body["api_base"] = self.api_base
            # A self-hosted server usually needs no key, but litellm's openai provider refuses to send without one.
            body["api_key"] = self.api_key or os.environ.get("OPENAI_API_KEY") or "sk-no-key-needed"
        elif self.api_key:
            body["api_key"] = self.api_key
        return body

    def _priced(self, response: Any) -> Reply:
        reply = parse_response(response, self._what())
        if self.settings.cost_per_input_token or self.settings.cost_per_output_token:
            return reply
        try:
            cost = float(self._litellm.completion_cost(completion_response=response))
        except Exception:  # litellm raises for models it cannot price (local, custom); those cost what we say: 0
            cost = None
        return Reply(reply.text, reply.prompt_tokens, reply.completion_tokens, reply.finish_reason, cost, reply.choices)
