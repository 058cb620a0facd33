"""The typed views `show` prints and the report renders: a listing line, and one problem's tree.

The tree's parts are phases (routing's tiers, else the strategy's run; then the scoring); a stage is always a step a
strategy ran (Algorithm 1's plan, code, execute ...), listed as `strategy_stages`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from solidcoder.core.executions import Execution
from solidcoder.store import KeptTest


@dataclass(frozen=True)
class Line:
    """One problem under one configuration: its verdict, where it ended, and what it cost."""

    problem: str
    config: str
    passed: bool | None  # None: no verdict (the unit failed: a model or sandbox error)
    ended: str  # routing's tier, else the last stage the strategy ran, else the error
    calls: int
    tokens: int
    seconds: float


@dataclass(frozen=True)
class Call:
    """One model call: its place in the unit, the template it rendered, its cost, and the prompt and reply (the
    prompt is "" where the run did not record it: bench runs keep replies only)."""

    position: int
    template: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    prompt: str = ""
    reply: str = ""
    error: str = ""
    replayed: bool = False


@dataclass(frozen=True)
class Phase:
    """A part of the run (routing's tier, the strategy's run, the scoring) with its calls and executions in order;
    `note` what the run recorded of its cost."""

    name: str
    steps: list[Call | Execution] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Scored:
    """The final verdict as the run's row states it (all an old run has of the hidden tests)."""

    passed: int
    total: int
    first_failure: str = ""


@dataclass(frozen=True)
class ProblemView:
    """One problem under one configuration, as a tree: phases, the tests the strategy kept or rejected, the final
    program and why it was accepted."""

    line: Line
    phases: list[Phase]
    program: str
    why: str
    strategy_stages: list[str] = field(default_factory=list)
    kept: list[KeptTest] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each rejected oracle test was rejected
    oracle_rounds: list[str] = field(default_factory=list)
    scored: Scored | None = None
    executions_recorded: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `show --json`: every field, a step's `type` (call or execution) named."""
        data = asdict(self)
        for phase, raw in zip(self.phases, data["phases"], strict=True):
            for step, row in zip(phase.steps, raw["steps"], strict=True):
                row["type"] = "call" if isinstance(step, Call) else "execution"
        return data


@dataclass(frozen=True)
class Run:
    """A run directory's problems: `kind` bench or solve."""

    path: str
    kind: str
    problems: list[ProblemView]

    def lines(self) -> list[Line]:
        return [view.line for view in self.problems]


def shortened(text: str, lines: int = 8, chars: int = 600) -> str:
    """The first `lines` lines (at most `chars` characters) of `text`, and how much was left out."""
    if len(text) <= chars and len(text.splitlines()) <= lines:
        return text
    kept = "\n".join(text.splitlines()[:lines])[:chars]
    return f"{kept}\n... [{len(text) - len(kept)} more characters; --full shows them]"


def trimmed(view: ProblemView) -> ProblemView:
    """The view with every prompt, reply and executed program shortened (the final program stays whole)."""
    return replace(view, phases=[replace(phase, steps=[_trimmed(step) for step in phase.steps])
                                 for phase in view.phases])


def _trimmed(step: Call | Execution) -> Call | Execution:
    if isinstance(step, Call):
        return replace(step, prompt=shortened(step.prompt), reply=shortened(step.reply))
    return replace(step, program=shortened(step.program), trace=shortened(step.trace, lines=24, chars=2000))
