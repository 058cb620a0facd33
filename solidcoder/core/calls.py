"""Recorded model access for one (problem, sample): roles, the per-problem call cap, the limiter, and replay.

Every call gets an id made of the unit's key, its position in the unit and a hash of the request (`request_hash`;
the options a request gained after logs were recorded are left out at their old values, `LATER_REQUEST`, by the
rule of core/keys.py, so those logs still replay). A reply already in the replay log under that id is returned
again (a resumed run pays for nothing twice); any other is asked for, under the run's limiter, and appended to the
log. Each call - answered, replayed or failed - is one `CallRecord`, from which both the replay log's row and the
trajectory's step are written: the two can never disagree.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from solidcoder.core.executions import UnitExecutions
from solidcoder.core.keys import without_later_defaults
from solidcoder.core.trajectory import Trajectory, Usage
from solidcoder.errors import BudgetExceeded, ModelError, ProblemBudgetExceeded
from solidcoder.models.base import Completion, Message, Model
from solidcoder.models.factory import DEFAULT_ROLE, ModelRoster

# A call's options added to its id after logs were recorded, each left out at the value it had before it existed
# (core/keys.py), so those logs still replay: a role's own model (None: the unit's model), top_p, schema, n, stop.
LATER_REQUEST = {"model": None, "top_p": None, "schema": None, "n": 1, "stop": ()}


class Appender(Protocol):
    def append(self, row: dict[str, Any]) -> None: ...


class ReplyLog(Protocol):
    """Where paid replies are kept: `replies` by call id (read on resume), `calls.append` for each new one. A log
    may also have `executions` (an `Appender`): the unit's executions go there (the run directory's
    executions.jsonl)."""

    replies: Mapping[str, dict]
    calls: Appender


@dataclass
class MemoryLog:
    """A replay log that lives as long as the run (`solve` without a run directory to resume from)."""

    replies: dict
    calls: list

    @classmethod
    def empty(cls) -> MemoryLog:
        return cls({}, [])


class Limiter:
    """At most `n` model calls in flight across the run (created lazily, inside the running event loop)."""

    def __init__(self, n: int):
        self.n = n
        self._slots: asyncio.Semaphore | None = None

    @property
    def tasks(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.n)
        return self._slots


@dataclass
class CallRecord:
    """One model call as it happened: what was asked, and the reply (`completion`) or the `error`."""

    id: str
    messages: list[Message]
    temperature: float | None
    completion: Completion | None = None
    error: str | None = None
    replayed: bool = False
    cancelled: bool = False  # the run was stopped while this call was in flight: no reply, or only part of one

    @property
    def template(self) -> str:
        return next((m.template for m in self.messages if m.template), "") or "unknown"

    def replay_row(self) -> dict[str, Any]:
        """The log's row; `choices` only when there are several, so one-choice rows keep their old shape. The
        template (since issue 31) is for readers of the log (`solidcoder show`); replay reads the completion."""
        completion = {k: v for k, v in asdict(self.completion).items() if k != "choices" or v}
        return {"id": self.id, "template": self.template, "completion": completion}


class RecordingModel:
    """The run's model (or its models by role, a `ModelRoster`), recorded for one unit `key`.

    Every role's calls share the unit's position counter, usage and `max_calls` cap (past it a call raises
    `ProblemBudgetExceeded`); `for_role` gives a recording view of that role's model. In a `one_problem` run
    (`solve`) every cap is the problem's, so a spent run-wide budget is raised as `ProblemBudgetExceeded` too, and
    the strategy answers with its code so far.
    """

    def __init__(self, model: Model | ModelRoster, log: ReplyLog, key: str, limiter: Limiter | None = None,
                 max_calls: int | None = None, trajectory: Trajectory | None = None, one_problem: bool = False):
        self.roster = model if isinstance(model, ModelRoster) else None
        self.model = model.for_role(DEFAULT_ROLE) if isinstance(model, ModelRoster) else model
        self.log, self.key, self.limiter = log, key, limiter or Limiter(1)
        self.max_calls, self.trajectory, self.one_problem = max_calls, trajectory, one_problem
        self.name = self.model.name
        self.usage = Usage()
        # template name -> [answered calls, prompt tokens, completion tokens]. "Stage" is a step of a strategy
        # (Algorithm 1's plan, code, execute ...); a call is known by the template it rendered.
        self.template_usage: dict[str, list[int]] = {}
        self._position = 0
        self._cap_reason = ""
        self._lock = threading.Lock()
        # the unit's executions, beside its calls: to the trajectory, and to the log's `executions` when it has one
        self.executions = UnitExecutions(key, lambda: self._position, trajectory, getattr(log, "executions", None))

    def cap_after(self, calls: int, reason: str) -> None:
        """Allow at most `calls` more calls to this unit (a strategy's budget for one of its stages); past them a call
        raises `ProblemBudgetExceeded` with `reason`. A lower cap already set stays."""
        with self._lock:
            if self.max_calls is None or self._position + calls < self.max_calls:
                self.max_calls, self._cap_reason = self._position + calls, reason

    def for_role(self, role: str) -> UnitModel:
        model = self.roster.for_role(role) if self.roster is not None else self.model
        return self if model is self.model else _RoleView(self, model)

    async def acomplete(self, messages: list[Message], *, temperature: float | None = None,
                        max_tokens: int | None = None, top_p: float | None = None, schema: dict | None = None,
                        n: int = 1, stop: tuple[str, ...] = (), model: Model | None = None) -> Completion:
        record = CallRecord(self._call_id(messages, temperature, max_tokens, model, top_p, schema, n, stop),
                            messages, temperature)
        if (row := self.log.replies.get(record.id)) is not None:
            stored = row["completion"]
            record.completion = Completion(**{**stored, "choices": tuple(stored.get("choices", ()))})
            record.replayed = True
            return self._record(record)
        try:
            async with self.limiter.tasks:
                record.completion = await (model or self.model).acomplete(
                    messages, **sampling(temperature, max_tokens, top_p, schema, n, stop))
        except ModelError as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            self._record(record)
            if self.one_problem and isinstance(exc, BudgetExceeded):
                raise ProblemBudgetExceeded(str(exc)) from exc
            raise
        except asyncio.CancelledError:  # Ctrl-C in `solve`: the call is kept, marked, and not in the replay log
            record.error, record.cancelled = "cancelled: stopped (Ctrl-C) before the reply was complete", True
            self._record(record)
            raise
        self.log.calls.append(record.replay_row())
        return self._record(record)

    def _call_id(self, messages: list[Message], temperature: float | None, max_tokens: int | None,
                 model: Model | None, top_p: float | None, schema: dict | None, n: int = 1,
                 stop: tuple[str, ...] = ()) -> str:
        with self._lock:
            if self.max_calls is not None and self._position >= self.max_calls:
                reason = self._cap_reason or f"per-problem cap of {self.max_calls} model calls reached"
                raise ProblemBudgetExceeded(reason)
            self._position += 1
            position = self._position
        role_model = model.name if model is not None and model is not self.model else None  # a role's own model
        options = {"model": role_model, "top_p": top_p, "schema": schema, "n": n, "stop": tuple(stop)}
        return f"{self.key}#{position}#{request_hash(messages, temperature, max_tokens, options)}"

    def _record(self, record: CallRecord) -> Completion | None:
        if (completion := record.completion) is not None:
            self.usage.add(completion, replayed=record.replayed)
            entry = self.template_usage.setdefault(record.template, [0, 0, 0])
            entry[0], entry[1], entry[2] = entry[0] + 1, entry[1] + completion.prompt_tokens, \
                entry[2] + completion.completion_tokens
        if self.trajectory is not None:
            self.trajectory.call(record)
        return record.completion


def request_hash(messages: list[Message], temperature: float | None, max_tokens: int | None,
                 options: dict[str, Any]) -> str:
    """The request part of a call id: 16 hex digits of the SHA-256 of the messages, temperature and max tokens, then
    each of `options` not at its `LATER_REQUEST` value, in that table's order (the role model by name, the others
    as {name: value}). Written as JSON in this order, keys unsorted, as the recorded logs have it."""
    extras = without_later_defaults({name: options[name] for name in LATER_REQUEST}, LATER_REQUEST)
    tail = [value if name == "model" else {name: value} for name, value in extras.items()]
    request = json.dumps([[m.role, m.content] for m in messages] + [temperature, max_tokens] + tail)
    return hashlib.sha256(request.encode()).hexdigest()[:16]


def sampling(temperature: float | None, max_tokens: int | None, top_p: float | None = None,
             schema: dict | None = None, n: int = 1, stop: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keyword arguments for a model call; top_p, schema, n and stop only when set (models need not take them
    otherwise)."""
    extra = {k: v for k, v in (("top_p", top_p), ("schema", schema), ("n", n if n > 1 else None),
                               ("stop", tuple(stop) or None)) if v is not None}
    return {"temperature": temperature, "max_tokens": max_tokens, **extra}


class UnitModel(Protocol):
    """What a strategy's model is: the unit's `RecordingModel`, or a role's view of it (`for_role`)."""

    name: str

    @property
    def usage(self) -> Usage: ...

    def for_role(self, role: str) -> UnitModel: ...

    def cap_after(self, calls: int, reason: str) -> None: ...

    async def acomplete(self, messages: list[Message], **kwargs: Any) -> Completion: ...


class _RoleView:
    """One role's model, recorded by the unit's `RecordingModel`: its calls, usage and caps are the unit's."""

    def __init__(self, recorder: RecordingModel, model: Model):
        self.recorder, self.model, self.name = recorder, model, model.name

    @property
    def usage(self) -> Usage:
        return self.recorder.usage

    def for_role(self, role: str) -> UnitModel:
        return self.recorder.for_role(role)

    def cap_after(self, calls: int, reason: str) -> None:
        self.recorder.cap_after(calls, reason)

    async def acomplete(self, messages: list[Message], **kwargs) -> Completion:
        return await self.recorder.acomplete(messages, model=self.model, **kwargs)
