"""`SolveContext`, what a strategy may use, and `ask`, the one way a strategy talks to a model.

A strategy gets the problem (statement and public tests only: hidden tests never reach it) and this context: the
recording model (by role, when it is a roster), the prompt library, `check` to judge code on the public tests in
the sandbox, the sandbox pool itself for strategies that run their own tests, and the run's sampling settings.
The same context serves a bench run and `solve`; only the model's replay log and trajectory differ.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from solidcoder.core.calls import sampling
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import JudgeReport
from solidcoder.models.base import Model
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary


@dataclass
class SolveContext:
    """What a strategy may use. `check(problem, code)` judges code on the public tests (sandboxed)."""

    model: Model
    prompts: PromptLibrary
    check: Callable[[Problem, str], Awaitable[JudgeReport]]
    temperature: float | None = None
    max_tokens: int | None = None
    pool: Executor | None = None  # for strategies that drive the sandbox themselves (Algorithm 1)
    top_p: float | None = None  # nucleus sampling; None: the model's default


async def ask(ctx: SolveContext, template: str, *, schema: dict | None = None, **variables: str) -> str:
    """Render a template, call the model once (asking for JSON of `schema`'s shape, if given), return the reply."""
    messages = ctx.prompts.messages(template, **variables)
    completion = await ctx.model.acomplete(messages, **sampling(ctx.temperature, ctx.max_tokens, ctx.top_p, schema))
    return completion.text
