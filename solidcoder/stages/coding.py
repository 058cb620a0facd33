"""Code generation: draw up to K candidates for a plan and keep the best by live execution.

Candidates after the first are sampled at `temperature` (> 0) so that they differ. Each candidate is executed
on the whole test suite; one that passes is then simulated by the model on a sample (a preliminary filter that
catches what the tests do not show, skipped with `--no-sim`). Drawing stops at the first candidate that passes
every test and whose simulation did not say FAILED. The best candidate ranks by tests passed, then by the
simulation verdict: execution always has the final word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from solidcoder.stages.base import StageContext, extract_code
from solidcoder.stages.live import Evaluation, SuiteTest
from solidcoder.stages.protocols import LiveStage, SimulationStage


@dataclass
class CodingConfig:
    candidates: int = 3
    temperature: float = 0.8
    seed: str | None = None  # used as the very first candidate instead of a model call, once


class Coder:
    """Turns a plan into the best of K executed candidates."""

    def __init__(self, ctx: StageContext, config: CodingConfig, live: LiveStage, simulator: SimulationStage | None,
                 on_candidate: Callable[[Evaluation], None] | None = None):
        self.ctx, self.config, self.live, self.simulator = ctx, config, live, simulator
        self.on_candidate = on_candidate or (lambda _evaluation: None)
        self._seed = config.seed

    def write(self, plan: str, temperature: float | None) -> str:
        reply = self.ctx.ask("code", "coder", "stages/code", temperature, plan=plan, **self.ctx.common)
        return extract_code(reply)

    def _draw(self, plan: str, i: int) -> str:
        if self._seed is not None:  # a program chosen by prune-then-rank before the loop: no model call
            code, self._seed = self._seed, None
            return code
        return self.write(plan, None if i == 0 else self.config.temperature)

    def best(self, plan: str, tests: list[SuiteTest]) -> Evaluation:
        ranked: list[tuple[int, bool, int, Evaluation]] = []
        for i in range(max(1, self.config.candidates)):
            code = self._draw(plan, i)
            evaluation = self.live.evaluate(code, tests)
            self.on_candidate(evaluation)
            sim_ok = self.simulator.passes(code) if self.simulator and evaluation.green else None
            self.ctx.trajectory.add("execution", "code", candidate=i, simulation=sim_ok,
                                    outcomes=[o.__dict__ for o in evaluation.outcomes])
            self.ctx.emit("code", f"candidate {i + 1}: {evaluation.summary()}", simulation=sim_ok)
            ranked.append((len(evaluation.passed_ids), sim_ok is not False, -i, evaluation))
            if evaluation.green and sim_ok is not False:
                break
        return max(ranked, key=lambda r: r[:3])[3]
