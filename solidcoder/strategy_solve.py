"""`solve --strategy NAME`: any bench strategy on one problem, through the machinery `bench` uses.

The strategy gets the same `SolveContext` as in a bench run (the model, the prompts, `check` on the public tests,
the sandbox pool). The model is wrapped so that every call lands in the run's `trajectory.json` as it happens
(prompt, reply or error, tokens, template). The answer is verified by the one rule of `Evaluation.verified`: at
least one test ran and the program passed every test it ran. A strategy that judged its own tests (Algorithm 1:
public and kept tests) reports that; otherwise the public tests are run on the final program here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from solidcoder.errors import BudgetExceeded, InfrastructureError, ModelError, ProblemBudgetExceeded
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge
from solidcoder.models.base import Completion, Message
from solidcoder.models.factory import DEFAULT_ROLE, as_roster
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.strategies import make_strategy
from solidcoder.strategies.base import SolveContext
from solidcoder.trajectory import Trajectory


class TrajectoryModel:
    """A model (or roster) whose every call is recorded in a trajectory; roles keep their own models.

    `max_calls` caps the calls of the problem (`--max-calls`): past it a call raises `ProblemBudgetExceeded`, and
    the strategy answers with its code so far, as in a bench run.
    """

    def __init__(self, model, trajectory: Trajectory, max_calls: int | None = None):
        self.roster = as_roster(model)
        self.model, self.trajectory, self.max_calls = self.roster.for_role(DEFAULT_ROLE), trajectory, max_calls
        self.name = self.model.name

    def for_role(self, role: str) -> TrajectoryModel:
        inner = self.roster.for_role(role)
        return self if inner is self.model else TrajectoryModel(inner, self.trajectory, self.max_calls)

    async def acomplete(self, messages: list[Message], **kwargs) -> Completion:
        self._reserve()
        try:
            completion = await self.model.acomplete(messages, **kwargs)
        except ModelError as exc:
            self._record(messages, None, kwargs, f"{type(exc).__name__}: {exc}")
            raise
        return self._record(messages, completion, kwargs)

    def complete(self, messages: list[Message], **kwargs) -> Completion:
        self._reserve()
        try:
            completion = self.model.complete(messages, **kwargs)
        except ModelError as exc:
            self._record(messages, None, kwargs, f"{type(exc).__name__}: {exc}")
            raise
        return self._record(messages, completion, kwargs)

    def _reserve(self) -> None:
        if self.max_calls is not None and len(self.trajectory.calls()) >= self.max_calls:
            raise ProblemBudgetExceeded(f"per-problem cap of {self.max_calls} model calls reached")

    def _record(self, messages, completion, kwargs, error: str | None = None):
        template = next((m.template for m in messages if m.template), "") or "unknown"
        stage = template.rsplit("/", 1)[-1]
        self.trajectory.call(stage, template, messages, completion, kwargs.get("temperature"), error)
        return completion


@dataclass
class StrategyOutcome:
    """What `solve --strategy` reports: the same fields the pipeline's result has, as far as they apply."""

    code: str
    verified: bool
    status: str  # verified, unverified or infrastructure_error
    reason: str
    trajectory: Trajectory


def solve_with_strategy(name: str, problem: Problem, models, pool: Executor, prompts: PromptLibrary,
                        trajectory: Trajectory, max_tokens: int | None = None,
                        max_calls: int | None = None) -> StrategyOutcome:
    """Run strategy `name` on `problem`; model and sandbox failures become an infrastructure_error outcome."""
    strategy, judge = make_strategy(name), Judge(pool)

    async def check(p: Problem, code: str):
        return await asyncio.to_thread(judge.judge, p, code, p.public_tests)

    model = TrajectoryModel(models, trajectory, max_calls)
    ctx = SolveContext(model, prompts, check, max_tokens=max_tokens, pool=pool)
    try:
        attempt = asyncio.run(strategy.solve(problem, ctx))
    except BudgetExceeded as exc:  # tokens or cost (the strategies answer a spent --max-calls with their code)
        return _stopped(trajectory, "unverified", f"budget ran out: {exc}")
    except (ModelError, InfrastructureError) as exc:
        return _stopped(trajectory, "infrastructure_error", f"{type(exc).__name__}: {exc}")
    return _judged(attempt.code, attempt.notes, problem, judge, trajectory)


def _judged(code: str, notes: dict, problem: Problem, judge: Judge, trajectory: Trajectory) -> StrategyOutcome:
    if "verified" in notes:  # the strategy ran its tests (public and its own) on this very program
        verified, reason = bool(notes["verified"]), "its public and accumulated tests"
    else:
        report = judge.judge(problem, code, problem.public_tests)
        verified, reason = report.total > 0 and report.passed, f"{report.pass_count} of {report.total} public tests"
    status = "verified" if verified else "unverified"
    reason = (f"passes {reason}" if verified else f"not verified ({reason}; no tests ran counts as unverified)")
    trajectory.outcome = {"status": status, "reason": reason, "verified": verified, "code": code, "notes": notes}
    trajectory.save()
    return StrategyOutcome(code, verified, status, reason, trajectory)


def _stopped(trajectory: Trajectory, status: str, reason: str) -> StrategyOutcome:
    trajectory.outcome = {"status": status, "reason": reason, "verified": False, "code": ""}
    trajectory.save()
    return StrategyOutcome("", False, status, reason, trajectory)
