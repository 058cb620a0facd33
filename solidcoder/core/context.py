"""`SolveContext`, what a strategy may use, and `ask`, the one way a strategy talks to a model.

A strategy gets the problem (statement and public tests only: hidden tests never reach it) and this context: the
recording model (`for_role` gives a role's model; `cap_after` budgets a stage), the prompt library, `check` to
judge code on the public tests in the sandbox (through `Judge.ajudge`, the one async judging seam), the sandbox
pool itself for strategies that run their own tests, and the run's sampling settings. The same context serves a
bench run and `solve`; only the model's replay log and trajectory differ.
"""

from __future__ import annotations

from dataclasses import dataclass

from solidcoder.core.calls import UnitModel, sampling
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary


@dataclass(kw_only=True)
class SolveContext:
    """What a strategy may use: the recording model, the prompts, the sandbox pool, the run's sampling."""

    model: UnitModel
    prompts: PromptLibrary
    pool: Executor
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None  # nucleus sampling; None: the model's default

    async def check(self, problem: Problem, code: str) -> JudgeReport:
        """Judge `code` on the problem's public tests; `SandboxFailure` when the sandbox failed."""
        return await Judge(self.pool).ajudge(problem, code, problem.public_tests)


async def ask(ctx: SolveContext, template: str, *, schema: dict | None = None, **variables: str) -> str:
    """Render a template, call the model once (asking for JSON of `schema`'s shape, if given), return the reply."""
    messages = ctx.prompts.messages(template, **variables)
    completion = await ctx.model.acomplete(messages, **sampling(ctx.temperature, ctx.max_tokens, ctx.top_p, schema))
    return completion.text
