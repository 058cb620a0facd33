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
from dataclasses import dataclass, field
from typing import Any, Protocol

from solidcoder.core.calls import Limiter, RecordingModel
from solidcoder.errors import (
    BudgetExceeded,
    InfrastructureError,
    InternalError,
    ModelError,
    ModelFatalError,
    ProblemBudgetExceeded,
)
from solidcoder.models.base import Model
from solidcoder.store import ResultStore


class BenchTask(Protocol):
    """What the runner runs: units with ids, each scored to a row (must contain `passed`)."""

    items: list

    async def run_one(self, item: Any, model: RecordingModel) -> dict[str, Any]: ...


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

    def base_row(self, item_id: str, sample: int) -> dict[str, Any]:
        return {"key": self.key(item_id, sample), "dataset": self.dataset, "id": item_id, "sample": sample,
                "strategy": self.strategy, "model": self.model, "config_hash": self.config_hash}


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
                 on_row: Callable[[dict, RunTotals], None] | None = None, max_calls: int | None = None,
                 units_in_flight: int | None = None):
        self.spec, self.task, self.model, self.store = spec, task, model, store
        self.limiter = Limiter(concurrency)
        self.concurrency = concurrency
        self.on_row = on_row
        self.max_calls = max_calls  # per (problem, sample); None = unlimited
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
        model = RecordingModel(self.model, self.store, row["key"], self.limiter, self.max_calls)
        start = time.monotonic()
        try:
            row.update(await self.task.run_one(item, model))
        except (ModelError, InfrastructureError) as exc:
            self._error(row, exc, model, time.monotonic() - start)
            await asyncio.to_thread(self.store.fsync)
            return
        except Exception as exc:  # noqa: BLE001 - one unit's unexpected failure ends that unit, never the run
            self._error(row, InternalError.of(exc), model, time.monotonic() - start)
            await asyncio.to_thread(self.store.fsync)
            return
        row.update(usage_fields(model), wall_s=round(time.monotonic() - start, 3))
        self.store.add_result(row)  # written now (safe from kill -9); fsynced below without blocking the loop
        self.totals.finished += 1
        self.totals.passed += bool(row["passed"])
        self._report(row)
        await asyncio.to_thread(self.store.fsync)

    def _error(self, row: dict, exc: Exception, model: RecordingModel, wall_s: float) -> None:
        kind = "internal" if isinstance(exc, InternalError) else \
            "sandbox" if isinstance(exc, InfrastructureError) else "model"
        row.update(usage_fields(model), error_kind=kind, error=f"{type(exc).__name__}: {exc}"[:1000],
                   wall_s=round(wall_s, 3))
        self.store.add_error(row)
        self.totals.errors += 1
        if isinstance(exc, (BudgetExceeded, ModelFatalError)) and not isinstance(exc, ProblemBudgetExceeded):
            self.totals.stopped = str(exc)
        self._report(row)

    def _report(self, row: dict) -> None:
        if self.on_row is not None:
            self.on_row(row, self.totals)


def usage_fields(model: RecordingModel) -> dict[str, Any]:
    u = model.usage
    return {"calls": u.calls, "replayed_calls": u.replayed, "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens, "cost_usd": round(u.cost_usd, 6), "model_s": round(u.model_s, 3),
            "template_usage": model.template_usage}
