"""The Strategy protocol every baseline (and the SolidCoder adapter) implements, and what they share.

A strategy gets a problem (statement and public tests only: the runner never hands it hidden tests) and a
`SolveContext` (the model, the prompt library, and `check` to run code on the public tests in the sandbox), and
returns an `Attempt`: the final code, whether the strategy verified it on tests of its own, what stopped it early
(a typed cause), the stages it ran and the tests it kept. `solve` and `bench` read those fields; `record` holds the
strategy's own figures (routing's tiers, the loop's oracle rounds), written to results and trajectories as they
are and never read to decide anything. Model errors propagate: the runner records them as infrastructure errors,
never as wrong answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from solidcoder.core.context import SolveContext
from solidcoder.errors import ProblemBudgetExceeded
from solidcoder.execution.judge import JudgeReport
from solidcoder.problem import Problem
from solidcoder.requirements import Requirement
from solidcoder.stages.live import GeneratedTest


@dataclass(kw_only=True)
class Attempt:
    """A strategy's answer for one problem. `verified`: None when the strategy ran no tests of its own on `code`,
    else whether at least one ran and `code` passed every one (public and kept); `kept`: None for a strategy that
    keeps no tests; `alternatives`: other answers given at once (see the field)."""

    code: str
    verified: bool | None = None
    stopped: ProblemBudgetExceeded | None = None
    stages: list[str] = field(default_factory=list)
    kept: list[GeneratedTest] | None = None
    record: dict[str, Any] = field(default_factory=dict)
    # other answers the strategy gives at once, by name (best-of-n: the pick among the first k samples, by k); bench
    # judges each on the hidden tests too (`alternatives_passed`), so one run prices several budgets
    alternatives: dict[str, str] = field(default_factory=dict)

    def notes(self) -> dict[str, Any]:
        """What a bench row and a trajectory record as `notes` (the keys runs have always had)."""
        notes: dict[str, Any] = dict(self.record)
        notes |= {"stages": self.stages} if self.stages else {}
        notes |= {"verified": self.verified} if self.verified is not None else {}
        notes |= {"stopped": str(self.stopped)} if self.stopped is not None else {}
        if self.kept is not None:
            notes |= {"kept_tests": len(self.kept), "kept": [test.to_dict() for test in self.kept]}
        return notes


class Strategy(Protocol):
    """A way of turning a problem into code. `settings()` and the text of its `templates` (the prompts it renders)
    are hashed into the run's configuration key: editing another template leaves a run resumable. `requires` names
    the tools and packages it runs beyond the base install, checked before a command's first model call."""

    name: str
    templates: tuple[str, ...]
    requires: tuple[Requirement, ...]
    takes_seed: bool  # whether `seeded` starts it from a given program (solve --prerank)

    def with_loop(self, changes: dict[str, Any]) -> Strategy | None:
        """A copy with solve's loop flags (`PaperSettings` fields: p, d, a, candidates, components) applied to its
        loop, or None when it has no loop to change."""
        ...

    def seeded(self, code: str) -> Strategy:
        """A copy that starts from `code` instead of writing its first program (when `takes_seed`)."""
        ...

    def settings(self) -> dict[str, Any]: ...

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt: ...


class NoLoop:
    """For a strategy without a loop to resize or a first program to seed: solve's loop flags and --prerank do not
    apply to it, and it needs nothing beyond the base install."""

    requires: tuple[Requirement, ...] = ()
    takes_seed = False

    def with_loop(self, changes: dict[str, Any]) -> None:
        return None

    def seeded(self, code: str) -> NoLoop:
        return self


def test_report(problem: Problem, report: JudgeReport, limit: int = 3) -> str:
    """A short text account of the failing public tests, for debugging prompts."""
    lines = [f"Passed {report.pass_count} of {report.total} sample tests."]
    tests = problem.public_tests
    for verdict in report.failures()[:limit]:
        test = tests[verdict.index] if verdict.index < len(tests) else None
        what = (test.stdin if test and test.kind == "stdio" else (test.script or test.call)) if test else "?"
        lines.append(f"- Test input: {what!s:.400}\n  Expected: {verdict.expected!s:.300}\n"
                     f"  Got: {verdict.actual!s:.300}\n  Verdict: {verdict.status} {verdict.detail:.300}")
    return "\n".join(lines)
