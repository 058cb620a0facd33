"""What every model backend shares: messages, completions, errors and the run-wide budget.

The pipeline sees only `Model`. A backend either returns a `Completion` with non-empty text or raises; it never
turns a failure into an empty answer, because the pipeline would execute and score that answer as if it were real.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from solidcoder.errors import BudgetExceeded
from solidcoder.wording import counted


@dataclass(frozen=True)
class Message:
    """One chat turn; `template` names the prompt template it was rendered from (not part of the text)."""

    role: str
    content: str
    template: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Completion:
    """A model's reply and what it cost. A request for n > 1 choices has every choice's text in `choices` (`text` is
    the first) and the tokens of all of them: the prompt counted as the backend billed or evaluated it."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    model: str
    choices: tuple[str, ...] = ()

    @property
    def texts(self) -> tuple[str, ...]:
        """Every choice's text: `choices`, or `text` alone for a one-choice request."""
        return self.choices or (self.text,)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class Model(Protocol):
    """A chat model, whatever serves it. `top_p` None leaves nucleus sampling at the server's default. `schema` (a
    JSON schema) asks for a reply that is one JSON object of that shape, enforced where the backend can (a grammar
    on llama.cpp, `response_format` on OpenAI-compatible servers and litellm); callers still parse defensively. `n` > 1
    asks for that many choices of one prompt (`Completion.choices`); a server may return fewer. `stop` strings end a
    reply before them (sent where the backend takes them, and cut again from every reply, so all backends agree). A
    last message in the `assistant` role is a prefix the reply continues (`ChatBackend` docstring: where each
    backend can, and what the reply's text holds)."""

    name: str

    def complete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None, n: int = 1, stop: tuple[str, ...] = (),
    ) -> Completion: ...

    async def acomplete(
        self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        top_p: float | None = None, schema: dict | None = None, n: int = 1, stop: tuple[str, ...] = (),
    ) -> Completion: ...


@dataclass(kw_only=True)
class BudgetConfig:
    """Run-wide caps; None means unlimited."""

    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None


@dataclass
class Budget:
    """Counts calls, tokens and cost across a run and refuses calls once a cap is reached.

    A threading lock guards the counters: sections are tiny and never await, so the same lock is safe to take
    from worker threads and from coroutines on the event loop.
    """

    config: BudgetConfig = field(default_factory=BudgetConfig)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def reserve(self) -> None:
        """Count one call about to be made, or raise `BudgetExceeded` if a cap is already reached."""
        with self._lock:
            reason = self._exhausted()
            if reason:
                raise BudgetExceeded(f"run budget exhausted: {reason}; raise the cap or shorten the run")
            self.calls += 1

    def record(self, completion: Completion) -> None:
        """Add a finished call's tokens and cost."""
        with self._lock:
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            self.cost_usd += completion.cost_usd

    def _exhausted(self) -> str | None:
        cfg = self.config
        if cfg.max_calls is not None and self.calls >= cfg.max_calls:
            return f"{counted(self.calls, 'call')} made, cap {cfg.max_calls}"
        if cfg.max_tokens is not None and self.tokens >= cfg.max_tokens:
            return f"{self.tokens} tokens used, cap {cfg.max_tokens}"
        if cfg.max_cost_usd is not None and self.cost_usd >= cfg.max_cost_usd:
            return f"${self.cost_usd:.4f} spent, cap ${cfg.max_cost_usd:.4f}"
        return None
