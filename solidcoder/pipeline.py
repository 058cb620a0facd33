"""The S.O.L.I.D. loop: Shift-left planning, Oracle assertions, Live execution, Intermediate simulation, Defensive
accumulation — with code generation and debugging from real traces. Read `solve` top to bottom.

Up to `plans` plans; per plan, K code candidates and up to `debug_rounds` debug rounds shared by the public-test
fixes and `oracle_rounds` rounds of assumption breaking. A candidate is verified only when at least one test was
executed on it and it passed every executed test: every public and accumulated test, and the generated tests it
was run on, apart from crash-only ones, which check no answer (`Evaluation.verified`); with none, the answer is
unverified, "no tests ran". Model failures are never scored: a budget cap ends the run as `unverified` with the
best candidate; any other model error (after retries) or a sandbox failure ends it as `infrastructure_error`.

`solve` is synchronous and thread-safe (the sandbox pool, the budget and the model backends are); `asolve` runs it
in a worker thread so an asyncio runner can await many problems at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from solidcoder.errors import BudgetExceeded, ModelError, SandboxFailure
from solidcoder.execution.executor import Executor
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.accumulation import decide_fix
from solidcoder.stages.base import Event
from solidcoder.stages.live import Evaluation, Outcome, SuiteTest
from solidcoder.stages.planning import FailedPlan
from solidcoder.stages.run import Run
from solidcoder.trajectory import Trajectory, Usage


@dataclass
class SolveConfig:
    """Loop sizes, ablations (all on by default) and sampling."""

    plans: int = 5
    debug_rounds: int = 5
    oracle_rounds: int = 3
    candidates: int = 3
    shift_left: bool = True
    simulation: bool = True
    oracle: bool = True
    live: bool = True
    defensive: bool = True
    replan_temperature: float = 0.8
    candidate_temperature: float = 0.8
    max_tokens: int | None = None
    temperature: float | None = None  # calls that do not sample on purpose (bench --temperature); None: the model's
    run_dir: Path | None = None
    seed_code: str | None = None  # a program chosen beforehand (solve --prerank): the first plan's first candidate


@dataclass
class SolveResult:
    """What `solve` produced. `status`: verified, unverified (loop or budget exhausted) or infrastructure_error."""

    code: str
    verified: bool
    status: str
    reason: str
    plans_used: int
    debug_rounds: int
    usage: Usage
    elapsed_s: float
    accumulated_tests: list[dict] = field(default_factory=list)
    trajectory: Trajectory | None = None
    cause: str | None = None  # why a run stopped early: "budget", "model" or "sandbox"; None otherwise
    error: Exception | None = None  # the typed exception behind `cause` (BudgetExceeded, ModelError, SandboxFailure)

    def summary(self) -> dict:
        return {"status": self.status, "verified": self.verified, "reason": self.reason, "cause": self.cause,
                "plans_used": self.plans_used, "debug_rounds": self.debug_rounds, "usage": asdict(self.usage),
                "elapsed_s": round(self.elapsed_s, 3), "accumulated_tests": len(self.accumulated_tests)}


def solve(problem: Problem, models, pool: Executor, config: SolveConfig | None = None, *,
          prompts: PromptLibrary | None = None, on_event: Callable[[Event], None] | None = None) -> SolveResult:
    """Run the S.O.L.I.D. loop on `problem`. `models` is a Model or a roster with `for_role(role)`."""
    run = Run(problem, models, pool, config or SolveConfig(), prompts or PromptLibrary.from_env(), on_event)
    error = None
    try:
        _loop(run)
    except BudgetExceeded as exc:
        error = exc
        run.stop("unverified", f"budget ran out: {exc}", cause="budget")
    except (ModelError, SandboxFailure) as exc:
        error = exc
        cause = "sandbox" if isinstance(exc, SandboxFailure) else "model"
        run.stop("infrastructure_error", f"{type(exc).__name__}: {exc}", cause=cause)
    return replace(run.result(SolveResult), error=error)


async def asolve(problem: Problem, models, pool: Executor, config: SolveConfig | None = None, *,
                 prompts: PromptLibrary | None = None, on_event: Callable[[Event], None] | None = None) -> SolveResult:
    """`solve` in a worker thread, for asyncio callers."""
    return await asyncio.to_thread(solve, problem, models, pool, config, prompts=prompts, on_event=on_event)


def _loop(run: Run) -> None:
    failed: list[FailedPlan] = []
    for plan_no in range(1, run.config.plans + 1):
        run.begin_plan(plan_no)
        plan = run.planner.plan(failed)                        # S: shift-left planning (+ plan simulation)
        current = run.coder.best(plan, run.suite.tests)        # K candidates; I: simulation; L: live execution
        current = _debug(run, current, extra=None)             # fix public/accumulated failures from real traces
        for round_no in range(1, run.config.oracle_rounds + 1):
            if not current.green:
                break
            current = _break_assumption(run, current, round_no)  # O: oracle assertions; D: accumulation
        run.consider(current)
        if current.green:                                      # verified, or no test ran (another plan cannot help)
            run.stop(*current.verdict(), current)
            return
        failed.append(FailedPlan(plan, _how(current)))
    run.stop("unverified", f"no verified program after {run.config.plans} plan(s)")


def _break_assumption(run: Run, current: Evaluation, round_no: int) -> Evaluation:
    """One red-team round: a judged test against the current candidate; if it fails, keep it and debug."""
    test = run.oracle.propose(current.code, f"oracle round {round_no}")
    if test is None:
        return current
    suite_test = run.suite.wrap(test)
    if not run.config.live:                                    # --no-live: a mental trace decides
        broken, reasoning = run.simulator.breaks(current.code, test)
        if not broken:
            return current
        failure = Outcome(suite_test.id, False, "fail", input=test.text(), expected="every check in the test holds",
                          actual="(not executed: the model's trace says the test fails)")
        return _debug(run, current, extra=None, mental=(failure, reasoning))
    result = run.live.evaluate(current.code, [suite_test])
    run.record_test(suite_test, result)
    if result.green:                                           # a passed checking test is evidence too
        return current if test.crash_only else Evaluation(current.code, current.outcomes + result.outcomes)
    run.keep(suite_test)                                       # D: defensive accumulation
    current = run.live.evaluate(current.code, run.suite.with_extra(suite_test))
    return _debug(run, current, extra=suite_test)


def _debug(run: Run, current: Evaluation, extra: SuiteTest | None,
           mental: tuple[Outcome, str] | None = None) -> Evaluation:
    """Debug rounds until green or this plan's rounds run out; a fix that regresses any test is rejected."""
    tests, rejected = run.suite.with_extra(extra), 0
    while (mental or not current.green) and run.rounds_left > 0:
        run.rounds_left -= 1
        failures = current.failures()  # after a rejected fix, the next round shows the next failing test
        failure, trace = mental if mental else (failures[rejected % len(failures)], None)
        fix = run.live.evaluate(run.debugger.fix(current.code, failure, trace), tests)
        decision = decide_fix(current, fix, require_progress=mental is None)
        run.record_fix(fix, decision)
        if decision.accepted:
            current, mental, rejected = fix, None, 0
        else:
            rejected += 1
    return current


def _how(current: Evaluation) -> str:
    failure = current.failures()[0]
    return f"{current.summary()}; first failure on input {failure.input[:300]!r}: {failure.status} {failure.detail}"
