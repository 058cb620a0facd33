"""The asyncio bench runner: every (problem, sample) unit of a task, concurrently, resumable, append-only.

Units already in results.jsonl under the same key are skipped; anything else runs. A unit whose model or sandbox
failed, or that raised anything unexpected (`InternalError`: one unit's failure, never the run's end), is written to
errors.jsonl (retried by the next run, never scored); a finished one to results.jsonl, the
moment it finishes. A budget or fatal model error stops new units from starting (running ones finish).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from solidcoder.core.calls import Limiter, RecordingModel, ReplyLog
from solidcoder.errors import (
    BudgetExceeded,
    InfrastructureError,
    InternalError,
    ModelError,
    ModelFatalError,
    ProblemBudgetExceeded,
)
from solidcoder.models.base import Model
from solidcoder.store import ResultRow, ResultStore


class BenchTask(Protocol):
    """What the runner runs: units with ids, each scored to a row: its verdict (`passed`) and the fields of its kind;
    the runner adds the unit's identity and usage."""

    items: list

    async def run_one(self, item: Any, model: RecordingModel) -> ResultRow: ...


@dataclass(frozen=True)
class RunSpec:
    """What identifies a run's rows besides the problem: resume keys are built from it."""

    dataset: str
    strategy: str
    model: str
    config_hash: str
    samples: int = 1
    config: dict = field(default_factory=dict, compare=False)

    def key(self, item_id: str, sample: int) -> str:
        return "|".join((self.dataset, item_id, self.strategy, self.model, self.config_hash, str(sample)))

    def base_row(self, item_id: str, sample: int) -> ResultRow:
        return ResultRow(key=self.key(item_id, sample), dataset=self.dataset, id=item_id, sample=sample,
                         strategy=self.strategy, model=self.model, config_hash=self.config_hash)


@dataclass(frozen=True)
class UnitRecorder:
    """The run's model as each unit sees it: recorded under the unit's key, its calls bounded by the run's `limiter`
    and by `max_calls` per unit. Every bench unit's `RecordingModel` is made here: by the runner, and on each Ray
    node (bench/distributed.py)."""

    model: Model
    limiter: Limiter
    max_calls: int | None = None  # per (problem, sample); None = unlimited

    def record(self, log: ReplyLog, key: str) -> RecordingModel:
        return RecordingModel(self.model, log, key, self.limiter, self.max_calls)


@dataclass
class RunTotals:
    done_before: int = 0
    finished: int = 0
    passed: int = 0
    errors: int = 0
    stopped: str = ""


class BenchRunner:
    """Runs `task` for `spec` with at most `concurrency` model calls in flight."""

    def __init__(self, *, spec: RunSpec, task: BenchTask, model: Model, store: ResultStore, concurrency: int,
                 on_row: Callable[[ResultRow, RunTotals], None] | None = None, max_calls: int | None = None,
                 units_in_flight: int | None = None):
        self.spec, self.task, self.store = spec, task, store
        self.recorder = UnitRecorder(model, Limiter(concurrency), max_calls)
        self.on_row = on_row
        # Default: twice as many units as call slots, so one unit's sandbox time overlaps another's model call.
        self.units_in_flight = units_in_flight or max(2 * concurrency, 2)
        self.totals = RunTotals()

    def pending(self) -> list[tuple[Any, int]]:
        units = [(item, s) for item in self.task.items for s in range(self.spec.samples)]
        todo = [(item, s) for item, s in units if not self.store.done(self.spec.key(item.id, s))]
        self.totals.done_before = len(units) - len(todo)
        return todo

    async def run(self) -> RunTotals:
        gate = asyncio.Semaphore(self.units_in_flight)
        await asyncio.gather(*(self._gated(gate, item, s) for item, s in self.pending()))  # Ctrl-C cancels them
        return self.totals

    async def _gated(self, gate: asyncio.Semaphore, item: Any, sample: int) -> None:
        async with gate:
            if not self.totals.stopped:
                await self._unit(item, sample)

    async def _unit(self, item: Any, sample: int) -> None:
        row = self.spec.base_row(item.id, sample)
        model = self.recorder.record(self.store, row.key)
        start = time.monotonic()
        try:
            row = (await self.task.run_one(item, model)).of_unit(row)
        except (ModelError, InfrastructureError) as exc:
            self._error(row, exc, model, time.monotonic() - start)
            await asyncio.to_thread(self.store.fsync)
            return
        except Exception as exc:  # noqa: BLE001 - one unit's unexpected failure ends that unit, never the run
            self._error(row, InternalError.of(exc), model, time.monotonic() - start)
            await asyncio.to_thread(self.store.fsync)
            return
        row = replace(row, **usage_fields(model), wall_s=round(time.monotonic() - start, 3))
        self.store.add_result(row)  # written now (safe from kill -9); fsynced below without blocking the loop
        self.totals.finished += 1
        self.totals.passed += bool(row.passed)
        self._report(row)
        await asyncio.to_thread(self.store.fsync)

    def _error(self, row: ResultRow, exc: Exception, model: RecordingModel, wall_s: float) -> None:
        kind = "internal" if isinstance(exc, InternalError) else \
            "sandbox" if isinstance(exc, InfrastructureError) else "model"
        row = replace(row, **usage_fields(model), error_kind=kind, error=f"{type(exc).__name__}: {exc}"[:1000],
                      wall_s=round(wall_s, 3))
        self.store.add_error(row)
        self.totals.errors += 1
        if isinstance(exc, (BudgetExceeded, ModelFatalError)) and not isinstance(exc, ProblemBudgetExceeded):
            self.totals.stopped = str(exc)
        self._report(row)

    def _report(self, row: ResultRow) -> None:
        if self.on_row is not None:
            self.on_row(row, self.totals)


def usage_fields(model: RecordingModel) -> dict[str, Any]:
    """The unit's model usage, as `ResultRow` fields."""
    u = model.usage
    return {"calls": u.calls, "replayed_calls": u.replayed, "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens, "cost_usd": round(u.cost_usd, 6), "model_s": round(u.model_s, 3),
            "template_usage": {template: tuple(counts) for template, counts in model.template_usage.items()}}
