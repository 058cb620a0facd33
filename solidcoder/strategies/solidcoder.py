"""The `solidcoder+` strategy: an adapter from the Strategy protocol to the pipeline's `solve()`, the project's
refinements over the paper's Algorithm 1 (K candidates, monotonic fixes, real-trace debugging, best-candidate
selection, per-role models, oracle gating; see docs/pipeline.md). `solidcoder` is the paper's (`algorithm1.py`).

The pipeline is synchronous; `asolve` runs it in a worker thread, and its model calls go through the bench's
recording wrapper (`complete`), so they are limited, counted and replayed like any other strategy's. Ablations are
strategies named `solidcoder+_no_<part>` for part in shift_left, simulation, oracle, live, defensive.
The pipeline reports model and sandbox failures as a status with the typed exception; it is raised again here so
that the runner records an infrastructure error (retried on resume), and a spent run-wide budget stops the run.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from solidcoder.errors import BadInput, ProblemBudgetExceeded
from solidcoder.problem import Problem
from solidcoder.strategies.base import Attempt, SolveContext

ABLATIONS = ("shift_left", "simulation", "oracle", "live", "defensive")


class SolidCoder:
    """Runs `solidcoder.pipeline.asolve` with an optional ablation."""

    def __init__(self, name: str = "solidcoder+", ablation: str | None = None):
        from solidcoder.pipeline import SolveConfig

        self.name = name
        self.config = SolveConfig() if ablation is None else replace(SolveConfig(), **{ablation: False})

    def settings(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self.config).items() if k != "run_dir"}

    async def solve(self, problem: Problem, ctx: SolveContext) -> Attempt:
        from solidcoder.pipeline import asolve

        if ctx.pool is None:
            raise ValueError("the solidcoder strategy needs the sandbox pool in its SolveContext")
        # the run's --temperature and --max-tokens apply to every call the pipeline does not sample on purpose
        config = replace(self.config, max_tokens=ctx.max_tokens or self.config.max_tokens,
                         temperature=self.config.temperature if ctx.temperature is None else ctx.temperature)
        result = await asolve(problem, ctx.model, ctx.pool, config, prompts=ctx.prompts)
        # A model or sandbox failure, or the run-wide budget, reaches the runner as the typed error it was;
        # a --max-calls cap on this problem keeps the code found so far.
        if result.error is not None and not isinstance(result.error, ProblemBudgetExceeded):
            raise result.error
        return Attempt(result.code, {"status": result.status, "verified": result.verified,
                                     "plans_used": result.plans_used, "debug_rounds": result.debug_rounds,
                                     "stages": stage_usage(result.trajectory)})


def stage_usage(trajectory) -> dict[str, list[int]]:
    """{stage: [calls, prompt tokens, completion tokens]}: where a problem's calls and tokens went.

    Only answered calls count: a call refused by the --max-calls cap, or one that failed, is in the trajectory
    (with its error) but was never paid for, so it is not in the row's `calls` either."""
    usage: dict[str, list[int]] = {}
    for step in trajectory.calls() if trajectory is not None else []:
        if "reply" not in step:
            continue
        entry = usage.setdefault(step["stage"], [0, 0, 0])
        entry[0] += 1
        entry[1] += step.get("prompt_tokens", 0)
        entry[2] += step.get("completion_tokens", 0)
    return usage


def make_solidcoder(name: str = "solidcoder+") -> SolidCoder:
    try:
        import solidcoder.pipeline  # noqa: F401
    except ImportError as exc:
        raise BadInput(f"strategy 'solidcoder+' needs solidcoder.pipeline, which does not import ({exc})") from None
    part = name.removeprefix("solidcoder+").removeprefix("_no_") or None
    if part is not None and part not in ABLATIONS:
        known = ", ".join(f"solidcoder+_no_{a}" for a in ABLATIONS)
        raise BadInput(f"unknown SolidCoder ablation {name!r}; known: {known}")
    return SolidCoder(name, part)
