"""One problem through the machinery `bench` uses: a strategy, a `SolveContext`, a `RecordingModel`.

The strategy (`solidcoder-routed` by default, or any bench strategy) gets the same context as
in a bench run. Its model is the bench's recording model with the run's trajectory attached, so every call lands
in `trajectory.json` as it happens, written from the same `CallRecord` a bench run logs for replay. With
`prerank`, programs sampled and ranked beforehand (the survivors ordered by `selector`: majority, agreement or an
ORM) give Algorithm 1 its first plan's program. The answer is
verified by the one rule of `Evaluation.verified`: at least one test ran and the program passed every test it
ran. The public tests are run on the final program here, always, so the reason says what passed and what failed;
a strategy that judged its own tests too (Algorithm 1 and routing: the accumulated tests) must have passed them.

Runs are kept and resumed as bench keeps them (`SolveRun`): each goes to a directory of its own under the parent
(`--run-dir`, else `.solidcoder/runs/`), named by the problem and the configuration key (core/keys.py) of what
changes answers: the problem as read, the strategy and its settings, the model, the limits, the templates' text. A
run of another problem, or of the same one with other settings, never writes into it. Its model replies go to its
`calls.jsonl`, under call ids made as bench makes them (core/calls.py); the same problem with the same settings,
run again into the same parent, finds that directory and replays every recorded call instead of paying for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solidcoder.core.calls import MemoryLog, RecordingModel, ReplyLog
from solidcoder.core.context import SolveContext
from solidcoder.core.keys import config_key
from solidcoder.core.trajectory import Trajectory
from solidcoder.errors import BudgetExceeded, InfrastructureError, InternalError, ModelError
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import JudgeReport, TestVerdict
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.base import describe_test
from solidcoder.stages.live import NO_TESTS
from solidcoder.store import CALLS, AppendLog, read_rows
from solidcoder.strategies.base import Attempt, Strategy
from solidcoder.strategies.selection import Selector, sample_and_select


@dataclass(kw_only=True)
class SolveOutcome:
    """What `solve` reports. `status`: verified, unverified (loop or budget exhausted) or infrastructure_error."""

    code: str
    verified: bool
    status: str
    reason: str
    trajectory: Trajectory
    attempt: Attempt | None = None  # None when the run stopped before the strategy answered


@dataclass(kw_only=True)
class SolveLimits:
    """Per-call and per-problem caps, and how many programs to sample and rank first (0: none)."""

    max_tokens: int | None = None
    max_calls: int | None = None
    prerank: int = 0
    prerank_temperature: float = 0.8
    selector: Selector = field(default_factory=Selector)  # how the prerank's survivors are ordered


DEFAULT_PARENT = Path(".solidcoder") / "runs"


@dataclass(frozen=True)
class SolveRun:
    """One solve run's place: its `directory` (the parent, then the problem and the configuration key) and `key`,
    the unit key its call ids start with (as bench's `RunSpec.key`: the problem, strategy, model and key)."""

    directory: Path
    key: str

    @classmethod
    def of(cls, parent: Path | None, problem: Problem, configuration: dict[str, Any]) -> SolveRun:
        """The run of `problem` under `configuration` (strategy, settings, model, limits, templates' digest)."""
        digest = config_key({"problem": problem.to_dict(), **configuration})
        name = re.sub(r"[^A-Za-z0-9_.-]+", "-", problem.id).strip("-.") or "problem"
        key = "|".join(("solve", problem.id, str(configuration.get("strategy")), str(configuration.get("model")),
                        digest, "0"))
        return cls((parent or DEFAULT_PARENT) / f"{name}-{digest}", key)

    def replay_log(self) -> ReplayFile:
        """The run's calls.jsonl, its recorded replies read (a rerun replays them), opened to append new ones."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / CALLS
        return ReplayFile({row["id"]: row for row in read_rows(path) if "id" in row}, AppendLog(path, sync=False))


@dataclass
class ReplayFile:
    """A `ReplyLog` kept in a run directory's calls.jsonl, as bench's `ResultStore` keeps its replies."""

    replies: dict[str, dict]
    calls: AppendLog

    def close(self) -> None:
        self.calls.close()


async def solve_problem(strategy: Strategy, problem: Problem, models, pool: Executor, prompts: PromptLibrary,
                        trajectory: Trajectory, limits: SolveLimits | None = None, log: ReplyLog | None = None,
                        key: str | None = None) -> SolveOutcome:
    """Run `strategy` on `problem`, its calls recorded under `key` in `log` (replayed from it where recorded there;
    default: a log that lives as long as the run); model and sandbox failures become an infrastructure_error
    outcome."""
    limits = limits or SolveLimits()
    model = RecordingModel(models, log or MemoryLog.empty(), key or problem.id, max_calls=limits.max_calls,
                           trajectory=trajectory, one_problem=True)
    ctx = SolveContext(model=model, prompts=prompts, pool=pool, max_tokens=limits.max_tokens,
                       executions=model.executions)
    try:
        if limits.prerank:
            strategy = await _seeded(strategy, problem, ctx, limits, trajectory)
        attempt = await strategy.solve(problem, ctx)
        final = await model.executions.judge(pool, "final").ajudge(problem, attempt.code, problem.public_tests)
        return _judged(attempt, problem, final, trajectory)
    except BudgetExceeded as exc:  # spent before the strategy had any code (while sampling for --prerank)
        return _stopped(trajectory, "unverified", f"budget ran out: {exc}")
    except (ModelError, InfrastructureError) as exc:  # a sandbox failure is one (SandboxFailure), as in a bench run
        return _stopped(trajectory, "infrastructure_error", str(exc))
    except Exception as exc:  # noqa: BLE001 - as in a bench unit: one line, the trajectory kept, never a traceback
        return _stopped(trajectory, "infrastructure_error", str(InternalError.of(exc)))


async def _seeded(strategy, problem: Problem, ctx: SolveContext, limits: SolveLimits, trajectory: Trajectory):
    """Sample and select `limits.prerank` programs (strategies/selection.py, as routing's tier 1); the best one
    seeds Algorithm 1's first plan."""
    chosen = await sample_and_select(problem, ctx, limits.prerank, limits.prerank_temperature, limits.selector)
    trajectory.header["prerank"] = {"samples": limits.prerank, "pruned": chosen.pruned,
                                    "survivors": len(chosen.ranked), "selector": limits.selector.name}
    return strategy.seeded(chosen.programs[0]) if chosen.ranked else strategy


def _judged(attempt: Attempt, problem: Problem, report: JudgeReport, trajectory: Trajectory) -> SolveOutcome:
    """`report` is the public tests run on the answer here, whatever the strategy ran, so the reason says what
    passed and what failed."""
    verified = _verified(report, attempt.verified)
    reason = _reason(problem, report, len(attempt.kept or ()), verified)
    if attempt.stopped is not None:
        reason += f"; stopped early: {attempt.stopped}"
    status = "verified" if verified else "unverified"
    trajectory.outcome = {"status": status, "reason": reason, "verified": verified, "code": attempt.code,
                          "notes": attempt.notes().to_dict()}
    trajectory.save()
    return SolveOutcome(code=attempt.code, verified=verified, status=status, reason=reason, trajectory=trajectory,
                        attempt=attempt)


def _verified(report: JudgeReport, own: bool | None) -> bool:
    """The public tests all passed, and the strategy's own verdict (`own`: its public and accumulated tests, when it
    ran them) is not a failure; with no public tests, only the strategy's tests can verify."""
    if report.total == 0:
        return own is True
    return report.passed and own is not False


def _reason(problem: Problem, report: JudgeReport, kept: int, verified: bool) -> str:
    """What ran on the answer and what failed: "2 of 3 public tests passed; first failure: ..."."""
    ran = [f"{report.total} public tests"] * bool(report.total) + [f"{kept} accumulated tests"] * bool(kept)
    if verified:
        return f"passes its {' and its '.join(ran)}"
    failures = report.failures()
    if not failures:  # every public test passes (or there are none); a test the strategy generated does not
        if not ran:
            return NO_TESTS
        public = f"passes its {report.total} public tests but" if report.total else "has no public tests and"
        return f"{public} fails {f'one of its {kept} accumulated tests' if kept else 'a test the strategy generated'}"
    return f"{report.pass_count} of {report.total} public tests passed; first failure: {_failure(problem, failures[0])}"


def _failure(problem: Problem, verdict: TestVerdict, limit: int = 300) -> str:
    test = describe_test(problem.public_tests[verdict.index])
    what = verdict.detail or f"expected {verdict.expected!s}, got {verdict.actual!s}"
    return " ".join(f"test {verdict.index + 1} ({test.input.strip()}): {verdict.status}: {what}".split())[:limit]


def _stopped(trajectory: Trajectory, status: str, reason: str) -> SolveOutcome:
    trajectory.outcome = {"status": status, "reason": reason, "verified": False, "code": ""}
    trajectory.save()
    return SolveOutcome(code="", verified=False, status=status, reason=reason, trajectory=trajectory)
