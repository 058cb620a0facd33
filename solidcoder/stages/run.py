"""The state of one `solve` run: its stages wired together, counters, the best candidate, and the trajectory.

`pipeline.py` holds the loop; this module holds the bookkeeping, so that the loop reads as the method.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.execution import executor as sandbox_executor
from solidcoder.models.factory import as_roster
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.accumulation import FixDecision, TestSuite
from solidcoder.stages.base import Event, StageContext
from solidcoder.stages.coding import Coder, CodingConfig
from solidcoder.stages.debug import Debugger
from solidcoder.stages.live import Evaluation, LiveExecutor, SuiteTest
from solidcoder.stages.oracle import Oracle, OracleConfig
from solidcoder.stages.planning import Planner, PlanningConfig
from solidcoder.stages.protocols import CodeStage, DebugStage, LiveStage, OracleStage, PlanStage, SimulationStage
from solidcoder.stages.simulation import Simulator
from solidcoder.trajectory import Trajectory

ROLES = ("planner", "coder", "simulator", "oracle", "judge", "debugger")


def check_roles(names) -> None:
    """BadInput for a `--model ROLE=MODEL` naming no pipeline role (a typo would silently use the default model)."""
    unknown = sorted(set(names) - {*ROLES, "default"})
    if unknown:
        raise BadInput(f"--model {unknown[0]}=...: unknown role; roles are {', '.join(ROLES)}")


class Run:
    """One run's stages and state (config is a `pipeline.SolveConfig`)."""

    def __init__(self, problem: Problem, models: Any, pool: sandbox_executor.Executor, config: Any,
                 prompts: PromptLibrary, on_event: Callable[[Event], None] | None):
        self.config, self.started = config, time.monotonic()
        roles = as_roster(models)
        header = {"problem": problem.to_dict(), "config": _jsonable(asdict(config)),
                  "models": {role: getattr(roles.for_role(role), "name", "?") for role in ROLES}}
        self.trajectory = Trajectory(config.run_dir, header)
        self.ctx = StageContext(problem, roles, prompts, self.trajectory, config.max_tokens, on_event,
                                temperature=config.temperature)
        self.suite = TestSuite(problem.public_tests, defensive=config.defensive)
        self.live: LiveStage = LiveExecutor(pool, problem)
        self.simulator: SimulationStage = Simulator(self.ctx)
        self.planner: PlanStage = Planner(self.ctx, PlanningConfig(config.shift_left, True, config.replan_temperature))
        coding = CodingConfig(config.candidates, config.candidate_temperature, config.seed_code)
        simulator = self.simulator if config.simulation else None
        self.coder: CodeStage = Coder(self.ctx, coding, self.live, simulator, self.consider)
        self.oracle: OracleStage = Oracle(self.ctx, OracleConfig(crash_only=not config.oracle))
        self.debugger: DebugStage = Debugger(self.ctx, pool)
        self.plans_used = self.debug_rounds = self.rounds_left = 0
        self.best: Evaluation | None = None
        self.status, self.reason, self.cause = "running", "", None

    def begin_plan(self, plan_no: int) -> None:
        self.plans_used, self.rounds_left = plan_no, self.config.debug_rounds
        self.ctx.emit("plan", f"plan {plan_no} of {self.config.plans}")

    def consider(self, candidate: Evaluation) -> None:
        """Remember the best candidate so far (most public tests, then most tests) for an unverified answer."""
        if self.best is None or _rank(candidate) > _rank(self.best):
            self.best = candidate

    def record_test(self, test: SuiteTest, result: Evaluation) -> None:
        verdict = "passed" if result.green else "failed"
        self.trajectory.add("execution", "live", test=test.id, verdict=verdict,
                            outcomes=[o.__dict__ for o in result.outcomes])
        self.ctx.emit("live", f"generated test {test.id} {verdict}")

    def keep(self, test: SuiteTest) -> None:
        kept = self.suite.keep(test)
        if kept:
            self.trajectory.accumulated.append({"id": test.id, **test.test.to_dict()})
        self.trajectory.add("decision", "accumulate", test=test.id, kept=kept, suite_size=len(self.suite.tests))
        self.ctx.emit("accumulate", f"{'kept' if kept else 'not kept (--no-defensive)'} {test.id}")

    def record_fix(self, fix: Evaluation, decision: FixDecision) -> None:
        self.debug_rounds += 1
        self.consider(fix) if decision.accepted else None
        self.trajectory.add("decision", "debug", accepted=decision.accepted, reason=decision.reason,
                            regressed=list(decision.regressed), outcomes=[o.__dict__ for o in fix.outcomes])
        self.ctx.emit("debug", f"fix {'accepted' if decision.accepted else 'rejected'}: {decision.reason}")

    def stop(self, status: str, reason: str, final: Evaluation | None = None, cause: str | None = None) -> None:
        self.status, self.reason, self.cause = status, reason, cause
        self.best = final or self.best
        self.trajectory.outcome = {"status": status, "reason": reason, "cause": cause}
        self.trajectory.save()
        self.ctx.emit("done", f"{status}: {reason}")

    def result(self, result_type: type) -> Any:
        best = self.best
        verified = self.status == "verified"
        self.trajectory.outcome.update(verified=verified, code=best.code if best else "")
        self.trajectory.save()
        return result_type(code=best.code if best else "", verified=verified, status=self.status, reason=self.reason,
                           plans_used=self.plans_used, debug_rounds=self.debug_rounds, usage=self.trajectory.usage,
                           elapsed_s=time.monotonic() - self.started,
                           accumulated_tests=list(self.trajectory.accumulated), trajectory=self.trajectory,
                           cause=self.cause)


def _rank(candidate: Evaluation) -> tuple[bool, int, int]:
    public = sum(o.passed for o in candidate.outcomes if o.id.startswith("public-"))
    return candidate.green, public, len(candidate.passed_ids)


def _jsonable(value: Any) -> Any:
    return {k: str(v) if not isinstance(v, (int, float, bool, str, type(None))) else v for k, v in value.items()}
