"""Multi-call baselines with public-test feedback: MapCoder (retrieve, plan, code, debug) and CodeSIM.

MapCoder: recall `k` related problems, write one plan per recalled problem with a confidence, then code the plans
in order of confidence, each debugged up to `t` times against the public tests. CodeSIM: up to `p` rounds of
plan-with-simulation, each coded and debugged up to `d` times by simulating the failing test. Both stop at the
first code that passes every public test, and otherwise return the code that passed the most.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from solidcoder.core.context import SolveContext, ask
from solidcoder.errors import ProblemBudgetExceeded
from solidcoder.problem import Problem
from solidcoder.prompting import problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.strategies.base import Attempt, NoLoop, test_report

_CONFIDENCE = re.compile(r"CONFIDENCE:\s*(\d+)")
_RECALLED = re.compile(r"^#+\s*Problem\s*\d+\s*$", re.MULTILINE | re.IGNORECASE)


class _Best:
    """The best code so far, by public tests passed (first one wins ties)."""

    def __init__(self) -> None:
        self.code, self.passed, self.rounds = "", -1, 0

    def offer(self, code: str, passed: int) -> None:
        self.rounds += 1
        if passed > self.passed:
            self.code, self.passed = code, passed


async def _code_and_debug(problem: Problem, ctx: SolveContext, plan: str, rounds: int, debug_template: str,
                          best: _Best) -> bool:
    """Code the plan, then debug it against the public tests; True once a version passes all of them."""
    variables = problem_variables(problem)
    code = extract_code(await ask(ctx, "strategies/mapcoder_coding", **variables, plan=plan), problem.language)
    for attempt in range(rounds + 1):
        report = await ctx.check(problem, code)
        best.offer(code, report.pass_count)
        if report.passed or attempt == rounds:
            return report.passed
        reply = await ask(ctx, debug_template, problem=variables["problem"], language=variables["language"],
                          plan=plan, code=code, test_report=test_report(problem, report))
        code = extract_code(reply, problem.language)
    return False


@dataclass
class MapCoderSettings:
    k: int = 3  # recalled problems, hence plans
    t: int = 5  # debugging rounds per plan


class MapCoder(NoLoop):
    name = "mapcoder"
    templates = tuple(f"strategies/mapcoder_{s}" for s in ("retrieval", "planning", "coding", "debugging"))

    def __init__(self, settings: MapCoderSettings | None = None):
        self.config = settings or MapCoderSettings()

    def settings(self) -> dict[str, Any]:
        return asdict(self.config)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        best = _Best()
        try:
            plans = await self._plans(problem, ctx)
            for _, plan in plans:
                if await _code_and_debug(problem, ctx, plan, self.config.t, "strategies/mapcoder_debugging", best):
                    break
        except ProblemBudgetExceeded:
            if best.rounds == 0:
                raise
        return Attempt(code=best.code, figures={"code_versions": best.rounds})

    async def _plans(self, problem: Problem, ctx: SolveContext) -> list[tuple[int, str]]:
        variables = problem_variables(problem)
        text, language = variables["problem"], variables["language"]
        recalled = await ask(ctx, "strategies/mapcoder_retrieval", problem=text, language=language,
                             count=str(self.config.k))
        plans = []
        for example in recalled_examples(recalled, self.config.k):
            reply = await ask(ctx, "strategies/mapcoder_planning", problem=text, language=language, example=example)
            found = _CONFIDENCE.findall(reply)
            plans.append((int(found[-1]) if found else 0, _CONFIDENCE.sub("", reply).strip()))
        plans.sort(key=lambda item: -item[0])  # stable: equal confidence keeps recall order
        return plans


def recalled_examples(reply: str, k: int) -> list[str]:
    """Split a retrieval reply into its recalled problems, each followed by the algorithm tutorial."""
    parts = [p.strip() for p in _RECALLED.split(reply)[1:] if p.strip()]
    tutorial = reply.split("### Algorithm", 1)[1].strip() if "### Algorithm" in reply else ""
    if not parts:
        return [reply.strip()]
    parts[-1] = parts[-1].split("### Algorithm", 1)[0].strip()
    return [f"{p}\n\nAlgorithm:\n{tutorial}" if tutorial else p for p in parts[:k]]


@dataclass
class CodeSimSettings:
    p: int = 5  # planning rounds
    d: int = 5  # debugging rounds per plan


class CodeSim(NoLoop):
    name = "codesim"
    templates = ("strategies/codesim_planning", "strategies/codesim_debugging", "strategies/mapcoder_coding")

    def __init__(self, settings: CodeSimSettings | None = None):
        self.config = settings or CodeSimSettings()

    def settings(self) -> dict[str, Any]:
        return asdict(self.config)

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        variables = problem_variables(problem)
        text, language = variables["problem"], variables["language"]
        best = _Best()
        try:
            for _ in range(self.config.p):
                reply = await ask(ctx, "strategies/codesim_planning", problem=text, language=language)
                plan = reply.split("### Plan", 1)[-1].strip()
                if await _code_and_debug(problem, ctx, plan, self.config.d, "strategies/codesim_debugging", best):
                    break
        except ProblemBudgetExceeded:  # --max-calls: answer with the best code so far, if there is one
            if best.rounds == 0:
                raise
        return Attempt(code=best.code, figures={"code_versions": best.rounds})
