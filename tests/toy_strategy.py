"""A toy strategy, as a new strategy is added: its module (this file), its templates (it renders the built-in
`strategies/direct`, so it brings none) and one registry entry (`TOY`), registered by the tests that use it."""

from __future__ import annotations

from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.problem import Problem
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.strategies.base import Attempt, NoLoop
from solidcoder.strategies.registry import StrategySpec

TOY_HELP = "A toy: one call of the direct template, at the run's settings"


class Toy(NoLoop):
    """One call, the program in its reply is the answer."""

    name = "toy"
    templates = ("strategies/direct",)

    def settings(self) -> dict[str, Any]:
        return {"template": "strategies/direct", "toy": True}

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        reply = await ask(ctx, "strategies/direct", **problem_variables(problem))
        return Attempt(code=extract_code(reply))


TOY = StrategySpec("toy", TOY_HELP, lambda name: Toy())
