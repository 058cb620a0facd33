"""The Strategy protocol every baseline (and the SolidCoder adapter) implements, and what they share.

A strategy gets a problem (statement and public tests only: the runner never hands it hidden tests) and a
`SolveContext` (the model, the prompt library, and `check` to run code on the public tests in the sandbox), and
returns an `Attempt`: the final code and a few notes. Model errors propagate: the runner records them as
infrastructure errors, never as wrong answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from solidcoder.core.context import SolveContext
from solidcoder.execution.judge import JudgeReport
from solidcoder.problem import Problem
from solidcoder.requirements import Requirement


@dataclass
class Attempt:
    """A strategy's answer for one problem."""

    code: str
    notes: dict[str, Any] = field(default_factory=dict)


class Strategy(Protocol):
    """A way of turning a problem into code. `settings()` and the text of its `templates` (the prompts it renders)
    are hashed into the run's configuration key: editing another template leaves a run resumable. `requires` names
    the tools and packages it runs beyond the base install, checked before a command's first model call."""

    name: str
    templates: tuple[str, ...]
    requires: tuple[Requirement, ...]

    def settings(self) -> dict[str, Any]: ...

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt: ...


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
