"""The small interfaces the loop in `pipeline.py` sees; `stages/run.py` wires the default implementations.

Anything with these methods can replace a stage (a different planner, a remote executor, a stub in a test).
"""

from __future__ import annotations

from typing import Protocol

from solidcoder.stages.live import Evaluation, GeneratedTest, Outcome, SuiteTest
from solidcoder.stages.planning import FailedPlan


class PlanStage(Protocol):
    def plan(self, failed: list[FailedPlan]) -> str: ...


class CodeStage(Protocol):
    def best(self, plan: str, tests: list[SuiteTest]) -> Evaluation: ...


class SimulationStage(Protocol):
    def passes(self, code: str) -> bool | None: ...

    def breaks(self, code: str, test: GeneratedTest) -> tuple[bool, str]: ...


class OracleStage(Protocol):
    def propose(self, code: str, origin: str) -> GeneratedTest | None: ...


class LiveStage(Protocol):
    def evaluate(self, code: str, tests: list[SuiteTest]) -> Evaluation: ...


class DebugStage(Protocol):
    def fix(self, code: str, failure: Outcome, trace: str | None = None) -> str: ...
