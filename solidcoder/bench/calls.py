"""A per-problem model wrapper: limits calls in flight, counts usage, and replays replies a killed run paid for.

Every reply is logged under an id made of the problem's key, the call's position in that problem and a hash of
the request. A resumed run that asks the same thing again gets the logged reply: nothing is billed twice. The
same wrapper serves async strategies (`acomplete`, an asyncio semaphore) and sync ones run in a thread
(`complete`, a threading semaphore) - a run uses one kind.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from dataclasses import asdict, dataclass

from solidcoder.bench.store import ResultStore
from solidcoder.errors import ModelError, ProblemBudgetExceeded
from solidcoder.models.base import Completion, Message, Model
from solidcoder.models.factory import DEFAULT_ROLE, ModelRoster
from solidcoder.trajectory import Usage as RunUsage


@dataclass
class BenchUsage(RunUsage):
    """A run's usage plus what the bench also reports: calls replayed from calls.jsonl and model time."""

    replayed: int = 0
    model_s: float = 0.0

    def add(self, completion: Completion, replayed: bool = False) -> None:
        super().add(completion)
        self.replayed += replayed
        self.model_s += completion.latency_s


class Limiter:
    """At most `n` model calls in flight across the run."""

    def __init__(self, n: int):
        self.n = n
        self.threads = threading.BoundedSemaphore(n)
        self.stopping = threading.Event()  # set on Ctrl-C: sync strategies in threads stop at their next call
        self._async: asyncio.Semaphore | None = None

    @property
    def tasks(self) -> asyncio.Semaphore:
        if self._async is None:  # created lazily, inside the running event loop
            self._async = asyncio.Semaphore(self.n)
        return self._async


class RecordingModel:
    """Wraps the run's model (or its models by pipeline role, a `ModelRoster`) for one (problem, sample) key.

    Every role's calls share the problem's position counter, usage and `--max-calls` cap; `for_role` gives the
    pipeline a recording view of that role's model.
    """

    def __init__(self, model: Model | ModelRoster, store: ResultStore, key: str, limiter: Limiter,
                 max_calls: int | None = None):
        self.roster = model if isinstance(model, ModelRoster) else None
        self.model = model.for_role(DEFAULT_ROLE) if isinstance(model, ModelRoster) else model
        self.store, self.key, self.limiter = store, key, limiter
        self.max_calls = max_calls
        self.name = self.model.name
        self.usage = BenchUsage()
        self._position = 0
        self._lock = threading.Lock()

    def for_role(self, role: str) -> RecordingModel | _RoleView:
        model = self.roster.for_role(role) if self.roster is not None else self.model
        return self if model is self.model else _RoleView(self, model)

    def _call_id(self, messages: list[Message], temperature: float | None, max_tokens: int | None,
                 model: Model | None = None, top_p: float | None = None, schema: dict | None = None) -> str:
        with self._lock:
            if self.max_calls is not None and self._position >= self.max_calls:
                raise ProblemBudgetExceeded(f"per-problem cap of {self.max_calls} model calls reached")
            self._position += 1
            position = self._position
        # A role's own model is part of the request; the default model is left out so older logs still replay.
        routed = [model.name] if model is not None and model is not self.model else []
        nucleus = [] if top_p is None else [{"top_p": top_p}]  # likewise absent when unset
        nucleus += [] if schema is None else [{"schema": schema}]
        request = json.dumps([[m.role, m.content] for m in messages] + [temperature, max_tokens] + routed + nucleus)
        return f"{self.key}#{position}#{hashlib.sha256(request.encode()).hexdigest()[:16]}"

    def _replay(self, call_id: str) -> Completion | None:
        row = self.store.replies.get(call_id)
        if row is None:
            return None
        completion = Completion(**row["completion"])
        self.usage.add(completion, replayed=True)
        return completion

    def _keep(self, call_id: str, completion: Completion) -> Completion:
        self.store.calls.append({"id": call_id, "completion": asdict(completion)})
        self.usage.add(completion, replayed=False)
        return completion

    async def acomplete(self, messages: list[Message], *, temperature: float | None = None,
                        max_tokens: int | None = None, top_p: float | None = None, schema: dict | None = None,
                        model: Model | None = None) -> Completion:
        call_id = self._call_id(messages, temperature, max_tokens, model, top_p, schema)
        if (cached := self._replay(call_id)) is not None:
            return cached
        async with self.limiter.tasks:
            completion = await (model or self.model).acomplete(messages, **_sampling(temperature, max_tokens, top_p,
                                                                                     schema))
        return self._keep(call_id, completion)

    def complete(self, messages: list[Message], *, temperature: float | None = None, max_tokens: int | None = None,
                 top_p: float | None = None, schema: dict | None = None, model: Model | None = None) -> Completion:
        call_id = self._call_id(messages, temperature, max_tokens, model, top_p, schema)
        if (cached := self._replay(call_id)) is not None:
            return cached
        if self.limiter.stopping.is_set():
            raise ModelError("the bench run was interrupted")
        with self.limiter.threads:
            completion = (model or self.model).complete(messages, **_sampling(temperature, max_tokens, top_p, schema))
        return self._keep(call_id, completion)


def _sampling(temperature: float | None, max_tokens: int | None, top_p: float | None, schema: dict | None) -> dict:
    """Keyword arguments for a model call; top_p and schema only when set (models need not take them otherwise)."""
    extra = {k: v for k, v in (("top_p", top_p), ("schema", schema)) if v is not None}
    return {"temperature": temperature, "max_tokens": max_tokens, **extra}


class _RoleView:
    """One role's model, recorded by the problem's `RecordingModel`."""

    def __init__(self, recorder: RecordingModel, model: Model):
        self.recorder, self.model, self.name = recorder, model, model.name

    async def acomplete(self, messages: list[Message], **kwargs) -> Completion:
        return await self.recorder.acomplete(messages, model=self.model, **kwargs)

    def complete(self, messages: list[Message], **kwargs) -> Completion:
        return self.recorder.complete(messages, model=self.model, **kwargs)
