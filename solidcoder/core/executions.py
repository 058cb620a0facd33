"""Every execution of a unit, recorded: the program, the tests it ran, each verdict and the first failure.

The judge seam tells the recorder: a `RecordingJudge` is a `Judge` that, after each judging (`judge` or `ajudge`),
hands the program, the tests and the report to its unit's `UnitExecutions`. The `SolveContext` builds its judge
from the unit's recorder (`SolveContext.judge`), so a strategy that judges through its context, its `LiveExecutor`
or the sampling verifiers records every program it runs without code of its own. The recorder writes each
execution to the run's trajectory (`solve`) and to the run directory's `executions.jsonl` (`bench`), keyed by the
unit, numbered in order, with the count of model calls made before it (`after_call`) so a viewer can put calls and
executions back in the order they happened.

`purpose` says who judged: `strategy` (the strategy's own checks), `final` (`solve`'s public tests on the answer),
`hidden` (`bench`'s scoring) or `kept` (`bench`'s oracle-precision check of the tests a strategy kept); `trace` is a
tracer's run that a debug prompt showed (`SolveContext.traced`: its `trace` is the text the model saw, the tracer's
final values or LDB's blocks, and its one test the traced input) and `run` a program run outside the judge (the
evidence stage's property checks, `UnitExecutions.ran`). Each test's
`kind` is `public` or `hidden` (the problem's own), `oracle` (a red-team test), `kept` (a red-team test accumulated
after it failed a program [D], on its later runs) or `generated` (any other test a model wrote).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge, JudgeReport, TestVerdict
from solidcoder.problem import Problem, TestCase

if TYPE_CHECKING:
    from solidcoder.core.trajectory import Trajectory

SHORT, LONG = 300, 2000  # characters kept of each test's text, and of the first failure's


@dataclass(frozen=True)
class TestRun:
    """One test as it ran: where it came from (`kind`, `name`), its input and expected value, and its verdict."""

    __test__ = False

    kind: str
    status: str
    input: str = ""
    expected: str = ""
    actual: str = ""
    detail: str = ""
    name: str = ""
    wall_s: float = 0.0

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> TestRun:
        return cls(**{k: v for k, v in row.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Execution:
    """One program judged on a list of tests."""

    purpose: str
    program: str
    tests: list[TestRun] = field(default_factory=list)
    passed: int = 0
    total: int = 0
    after_call: int = 0
    first_failure: TestRun | None = None
    trace: str = ""  # purpose trace: the trace as the debug prompt showed it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Execution:
        first = row.get("first_failure")
        return cls(purpose=row.get("purpose", ""), program=row.get("program", ""),
                   tests=[TestRun.from_dict(t) for t in row.get("tests", [])], passed=row.get("passed", 0),
                   total=row.get("total", 0), after_call=row.get("after_call", 0),
                   first_failure=TestRun.from_dict(first) if first else None, trace=row.get("trace", ""))


class Appender(Protocol):
    def append(self, row: dict[str, Any]) -> None: ...


class UnitExecutions:
    """The executions of one unit (`key`): told by `RecordingJudge`s, written to the trajectory and the log.
    `calls_so_far` reads the unit's model-call count; `attempt` tells a rerun unit's rows from an earlier try's."""

    def __init__(self, key: str, calls_so_far: Callable[[], int], trajectory: Trajectory | None = None,
                 log: Appender | None = None):
        self.key, self.calls_so_far, self.trajectory, self.log = key, calls_so_far, trajectory, log
        self.attempt = uuid.uuid4().hex[:12]
        self.count = 0
        self._lock = threading.Lock()  # the sampling verifiers judge from a worker thread

    def judge(self, pool: Executor, purpose: str = "strategy") -> RecordingJudge:
        """A judge on `pool` whose every verdict is recorded here under `purpose`."""
        return RecordingJudge(pool, self, purpose)

    def record(self, purpose: str, problem: Problem, code: str, tests: list[TestCase], report: JudgeReport) -> None:
        runs = [_run(_kind(purpose, problem, test), test, verdict, SHORT)
                for test, verdict in zip(tests, report.verdicts, strict=False)]
        failed = next(((t, v) for t, v in zip(tests, report.verdicts, strict=False) if not v.passed), None)
        first = _run(_kind(purpose, problem, failed[0]), *failed, LONG) if failed else None
        self.add(Execution(purpose=purpose, program=code, tests=runs, passed=report.pass_count, total=report.total,
                           after_call=self.calls_so_far(), first_failure=first))

    def traced(self, code: str, form: str, given: str, text: str) -> None:
        """A tracer's run of `code` on the input `given` whose trace (`form`: values or blocks) a debug prompt showed
        as `text`."""
        test = TestRun(kind="traced", status=form, input=_cut(given, SHORT))
        self.add(Execution(purpose="trace", program=code, tests=[test], total=1, after_call=self.calls_so_far(),
                           trace=_cut(text, LONG * 4)))

    def ran(self, code: str, runs: list[TestRun], purpose: str = "run") -> None:
        """A program run outside the judge (`runs`: each input, what it printed and whether the check held); bench's
        kept-test check records its runs under `kept`."""
        self.add(Execution(purpose=purpose, program=code, tests=runs, passed=sum(r.status == "pass" for r in runs),
                           total=len(runs), after_call=self.calls_so_far(),
                           first_failure=next((r for r in runs if r.status != "pass"), None)))

    def add(self, execution: Execution) -> None:
        with self._lock:
            self.count += 1
            if self.trajectory is not None:
                self.trajectory.execution(execution)
            if self.log is not None:
                self.log.append({"key": self.key, "attempt": self.attempt, "n": self.count, **execution.to_dict()})


class RecordingJudge(Judge):
    """A `Judge` whose every report is recorded by its unit's `UnitExecutions` (a sandbox failure, raised by
    `ajudge`, is no verdict and is not recorded); `judge` runs through `ajudge`, so it records too."""

    def __init__(self, pool: Executor, executions: UnitExecutions, purpose: str = "strategy"):
        super().__init__(pool)
        self.executions, self.purpose = executions, purpose

    async def ajudge(self, problem: Problem, code: str, tests: list[TestCase] | None = None,
                     stop_at_first_failure: bool = False) -> JudgeReport:
        report = await super().ajudge(problem, code, tests, stop_at_first_failure)
        self.executions.record(self.purpose, problem, code, _tests(problem, tests), report)
        return report


def _tests(problem: Problem, tests: list[TestCase] | None) -> list[TestCase]:
    return problem.public_tests if tests is None else tests


KEPT = "kept"  # the origin prefix of an accumulated test [D]; its runs after the one that found it are kind `kept`


def is_kept(origin: str) -> bool:
    """Whether a generated test's origin (a call test's name) marks it accumulated."""
    return origin.startswith(KEPT)


def _kind(purpose: str, problem: Problem, test: TestCase) -> str:
    """public or hidden (the problem's own tests; every test of the hidden judging is hidden), kept, oracle or
    generated."""
    if purpose == "hidden":
        return "hidden"
    if test in problem.public_tests:
        return "public"
    if test in problem.hidden_tests:
        return "hidden"
    name = test.name or ""
    return KEPT if is_kept(name) else "oracle" if name.startswith("oracle") else "generated"



def _run(kind: str, test: TestCase, verdict: TestVerdict, limit: int) -> TestRun:
    given, wanted = _described(test)
    actual = verdict.actual if verdict.actual is not None else ""
    expected = verdict.expected if verdict.expected is not None else wanted
    return TestRun(kind=kind, status=verdict.status, input=_cut(given, limit), expected=_cut(str(expected), limit),
                   actual=_cut(str(actual), limit), detail=_cut(verdict.detail, limit), name=test.name or "",
                   wall_s=round(verdict.wall_s, 4))


def _described(test: TestCase) -> tuple[str, str]:
    """(input, expected) of a test as text: stdin and output, a call and its value, or an assert script."""
    if test.kind == "stdio":
        return test.stdin or "", (test.outputs or [""])[0]
    if test.call is not None:
        return test.call, repr(test.expected)
    return test.script or "", ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]} [{len(text) - limit} more characters]"
