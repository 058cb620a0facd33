"""Shift-left planning: list the inputs that break a naive solution, then plan around them; refine by simulation.

Re-planning receives every earlier plan and how it failed, and is sampled above temperature 0: with greedy
decoding a local model answers the same prompt identically, so a new plan would repeat the old one. With
`shift_left` off (`--no-shift-left`) the plain planning prompt is used. The plan is then simulated on the first
public example (CodeSIM); a REVISED verdict replaces the plan with the model's corrected one.
"""

from __future__ import annotations

from dataclasses import dataclass

from solidcoder.stages.base import StageContext, first_sample, last_verdict


@dataclass
class PlanningConfig:
    shift_left: bool = True
    simulate_plan: bool = True
    replan_temperature: float = 0.8


@dataclass(frozen=True)
class FailedPlan:
    """A plan that did not lead to a verified program, and how it failed."""

    plan: str
    how: str


class Planner:
    """Writes a plan, different from the failed ones, and checks it on a sample."""

    def __init__(self, ctx: StageContext, config: PlanningConfig):
        self.ctx, self.config = ctx, config

    def plan(self, failed: list[FailedPlan]) -> str:
        template = "stages/shift_left_plan" if self.config.shift_left else "stages/plan"
        temperature = self.config.replan_temperature if failed else None
        variables = {k: v for k, v in self.ctx.common.items() if k != "entry_point"}
        plan = self.ctx.ask("plan", "planner", template, temperature, failed_plans=format_failed(failed),
                            **variables)
        return self._refined(plan)

    def _refined(self, plan: str) -> str:
        sample = first_sample(self.ctx.problem)
        if not self.config.simulate_plan or sample is None:
            return plan
        reply = self.ctx.ask("plan_simulate", "planner", "stages/plan_simulate", problem=self.ctx.statement,
                             plan=plan, sample_input=sample.input, sample_output=sample.output)
        verdict = last_verdict(reply, "CORRECT", "REVISED")
        self.ctx.trajectory.add("decision", "plan_simulate", verdict=verdict)
        return reply if verdict == "REVISED" else plan


def format_failed(failed: list[FailedPlan]) -> str:
    """Earlier plans and their failures as the planning prompt shows them ("" when there are none)."""
    return "\n\n".join(f"Plan {i}:\n{f.plan.strip()}\nHow it failed: {f.how}" for i, f in enumerate(failed, 1))
