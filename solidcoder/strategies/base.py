"""The Strategy protocol every baseline (and the SolidCoder adapter) implements, and what they share.

A strategy gets a problem (statement and public tests only: the runner never hands it hidden tests) and a
`SolveContext` (the model, the prompt library, and `check` to run code on the public tests in the sandbox), and
returns an `Attempt`: the final code, whether the strategy verified it on tests of its own, what stopped it early
(a typed cause), the stages it ran and the tests it kept, and the typed records `show` and the report read:
routing's `route` (the tier it ended in, what each tier cost) and Algorithm 1's `oracle` rounds. `figures` holds
the strategy's other counts, written to results and trajectories as they are and read by nothing. `notes()` is all
of it as a result row holds it (store.py: `Notes`). Model errors propagate: the runner records them as
infrastructure errors, never as wrong answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from solidcoder.core.context import SolveContext
from solidcoder.errors import ProblemBudgetExceeded
from solidcoder.execution.build import not_compiling
from solidcoder.execution.judge import JudgeReport
from solidcoder.problem import Problem
from solidcoder.requirements import Requirement
from solidcoder.stages.live import GeneratedTest
from solidcoder.store import KeptTest, Notes, OracleRounds, Route


@dataclass(kw_only=True)
class Attempt:
    """A strategy's answer for one problem. `verified`: None when the strategy ran no tests of its own on `code`,
    else whether at least one ran and `code` passed every one (public and kept); `kept`: None for a strategy that
    keeps no tests; `route`: routing's record, `oracle`: Algorithm 1's oracle rounds (None for other strategies);
    `alternatives`: other answers given at once (see the field)."""

    code: str
    verified: bool | None = None
    stopped: ProblemBudgetExceeded | None = None
    stages: list[str] = field(default_factory=list)
    kept: list[GeneratedTest] | None = None
    route: Route | None = None
    oracle: OracleRounds | None = None
    figures: dict[str, Any] = field(default_factory=dict)  # the strategy's other counts, read by nothing
    # other answers the strategy gives at once, by name (best-of-n: the pick among the first k samples, by k); bench
    # judges each on the hidden tests too (`alternatives_passed`), so one run prices several budgets
    alternatives: dict[str, str] = field(default_factory=dict)

    def notes(self) -> Notes:
        """What a bench row and a trajectory record as `notes`."""
        kept = None if self.kept is None else \
            tuple(KeptTest(t.kind, t.source, t.stdin, t.crash_only, t.origin, t.prop) for t in self.kept)
        return Notes(stages=tuple(self.stages) or None, verified=self.verified,
                     stopped=None if self.stopped is None else str(self.stopped), kept=kept, route=self.route,
                     oracle=self.oracle, figures=dict(self.figures))


class Strategy(Protocol):
    """A way of turning a problem into code. `settings()` and the text of its `templates` (the prompts it renders)
    are hashed into the run's configuration key: editing another template leaves a run resumable. `requires` names
    the tools and packages it runs beyond the base install, checked before a command's first model call."""

    name: str
    templates: tuple[str, ...]
    requires: tuple[Requirement, ...]
    takes_seed: bool  # whether `seeded` starts it from a given program (solve --prerank)
    python_only: str  # why it writes only Python (traces Python, Python prompts), "" when any language goes

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
    python_only = ""

    def with_loop(self, changes: dict[str, Any]) -> None:
        return None

    def seeded(self, code: str) -> NoLoop:
        return self


def test_report(problem: Problem, report: JudgeReport, limit: int = 3) -> str:
    """A short text account of the failing public tests, for debugging prompts."""
    failures = report.failures()
    if unbuilt := not_compiling(failures):
        return unbuilt
    lines = [f"Passed {report.pass_count} of {report.total} sample tests."]
    tests = problem.public_tests
    for verdict in failures[:limit]:
        test = tests[verdict.index] if verdict.index < len(tests) else None
        what = (test.stdin if test and test.kind == "stdio" else (test.script or test.call)) if test else "?"
        lines.append(f"- Test input: {what!s:.400}\n  Expected: {verdict.expected!s:.300}\n"
                     f"  Got: {verdict.actual!s:.300}\n  Verdict: {verdict.status} {verdict.detail:.300}")
    return "\n".join(lines)
