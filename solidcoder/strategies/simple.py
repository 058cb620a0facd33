"""One-call baselines: Direct, Chain-of-Thought, Self-Planning and Analogical prompting.

Each renders its template (prompts/strategies/<name>.j2) once and takes the code from the reply. Self-planning is
asked for the plan and the code in one reply (the template's two phases), which is how MapCoder's reimplementation
runs it as a one-call baseline.
"""

from __future__ import annotations

from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.problem import Problem
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.strategies.base import Attempt, NoLoop


class OneCallStrategy(NoLoop):
    """Render `strategies/<name>`, call the model once, extract the code."""

    def __init__(self, name: str):
        self.name = name
        self.templates = (f"strategies/{name}",)

    def settings(self) -> dict[str, Any]:
        return {"template": f"strategies/{self.name}"}

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        reply = await ask(ctx, f"strategies/{self.name}", **problem_variables(problem))
        return Attempt(code=extract_code(reply))
