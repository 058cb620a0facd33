"""What every stage shares: the run context (models by role, prompts, trajectory, events) and reply parsing.

`StageContext.ask` is the only place a stage talks to a model: it renders a template, calls the model for the
stage's role, records prompt, reply and usage in the trajectory, and retries once on a non-fatal model error
(an empty reply, a server that kept failing). Budget and fatal errors propagate: the pipeline stops on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solidcoder.errors import BudgetExceeded, ModelError, ModelFatalError
from solidcoder.models.factory import ModelRoster
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import PromptLibrary, problem_text, problem_variables
from solidcoder.trajectory import Trajectory

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)


@dataclass
class Event:
    """A progress report for whoever watches the run (the CLI prints these)."""

    stage: str
    message: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageContext:
    """The per-run state a stage may use."""

    problem: Problem
    roles: ModelRoster  # or anything else with for_role(role), such as the bench's recording model
    prompts: PromptLibrary
    trajectory: Trajectory
    max_tokens: int | None = None
    on_event: Callable[[Event], None] | None = None
    temperature: float | None = None  # for calls that do not sample on purpose; None: the model's own default

    @property
    def io_mode(self) -> str:
        return "call" if self.problem.kind == "call" else "stdin"

    @property
    def statement(self) -> str:
        return problem_text(self.problem)

    @property
    def common(self) -> dict[str, str]:
        return problem_variables(self.problem)

    def emit(self, stage: str, message: str, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event(Event(stage, message, data))

    def ask(self, stage: str, role: str, template: str, temperature: float | None = None, **variables: str) -> str:
        """Render `template`, ask the role's model, record the call; returns the reply text."""
        messages = self.prompts.messages(template, **variables)
        model = self.roles.for_role(role)
        temperature = self.temperature if temperature is None else temperature
        for attempt in (1, 2):
            try:
                completion = model.complete(messages, temperature=temperature, max_tokens=self.max_tokens)
            except (BudgetExceeded, ModelFatalError) as exc:
                self.trajectory.call(stage, template, messages, None, temperature, error=str(exc))
                raise
            except ModelError as exc:
                self.trajectory.call(stage, template, messages, None, temperature, error=str(exc))
                if attempt == 2:
                    raise
                continue
            self.trajectory.call(stage, template, messages, completion, temperature)
            return completion.text
        raise AssertionError("unreachable")  # pragma: no cover


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order."""
    return [(tag.lower(), body) for tag, body in _FENCE.findall(text)]


def extract_code(text: str) -> str:
    """The program in a reply: the longest Python (or untagged) block that compiles, else the longest block."""
    blocks = [body for tag, body in code_blocks(text) if tag in ("", "python", "py", "python3")]
    if not blocks:
        return text.strip() + "\n" if _compiles(text) else ""
    ranked = sorted(blocks, key=lambda body: (_compiles(body), len(body)), reverse=True)
    return ranked[0].strip("\n") + "\n"


def _compiles(source: str) -> bool:
    try:
        compile(source, "<reply>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def last_verdict(text: str, *words: str) -> str | None:
    """The last of `words` appearing as a whole word in `text` (so VALID never matches inside INVALID)."""
    pattern = r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b"
    found = re.findall(pattern, text)
    return found[-1] if found else None


@dataclass(frozen=True)
class Sample:
    """One public example as the prompts show it."""

    input: str
    output: str


def describe_test(test: TestCase) -> Sample:
    """A public test as input / expected text for simulation and debug prompts."""
    if test.kind == "stdio":
        return Sample(test.stdin or "", test.outputs[0])
    if test.call is not None:
        return Sample(test.call, repr(test.expected))
    return Sample(test.script or "", "every assertion in the script above holds")


def first_sample(problem: Problem) -> Sample | None:
    return describe_test(problem.public_tests[0]) if problem.public_tests else None
