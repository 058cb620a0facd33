"""`SolveContext`, what a strategy may use, and `ask`, the one way a strategy talks to a model.

A strategy gets the problem (statement and public tests only: hidden tests never reach it) and this context: the
recording model (`for_role` gives a role's model; `cap_after` budgets a stage), the prompt library, `check` to
judge code on the public tests in the sandbox (through `Judge.ajudge`, the one async judging seam), `judge` for a
strategy that runs tests of its own, the sandbox pool itself, and the run's sampling settings. With the unit's
`executions` recorder set (bench and `solve` set it), every judging through `check` or `judge` is recorded
(core/executions.py). The same context serves a bench run and `solve`; only the model's replay log and trajectory
differ.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from solidcoder.core.calls import UnitModel, sampling
from solidcoder.core.executions import UnitExecutions
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
    executions: UnitExecutions | None = None  # the unit's execution recorder; None: nothing recorded

    def with_temperature(self, temperature: float | None) -> SolveContext:
        """This context with its calls at `temperature`."""
        return replace(self, temperature=temperature)

    @property
    def judge(self) -> Judge:
        """The judge a strategy runs programs with: one that records every verdict when the unit has a recorder."""
        return self.executions.judge(self.pool) if self.executions is not None else Judge(self.pool)

    def traced(self, code: str, form: str, given: str, text: str) -> None:
        """Record that a debug prompt showed `text`, the `form` trace of `code` on the input `given`."""
        if self.executions is not None and text:
            self.executions.traced(code, form, given, text)

    async def check(self, problem: Problem, code: str) -> JudgeReport:
        """Judge `code` on the problem's public tests; `SandboxFailure` when the sandbox failed."""
        return await self.judge.ajudge(problem, code, problem.public_tests)


async def ask(ctx: SolveContext, template: str, *, schema: dict | None = None, stop: tuple[str, ...] = (),
              **variables: str) -> str:
    """Render a template, call the model once (asking for JSON of `schema`'s shape, if given; ending the reply
    before any of `stop`), return the reply."""
    messages = ctx.prompts.messages(template, **variables)
    completion = await ctx.model.acomplete(messages, **sampling(ctx.temperature, ctx.max_tokens, ctx.top_p, schema,
                                                                stop=stop))
    return completion.text
