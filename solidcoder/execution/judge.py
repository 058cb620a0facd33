"""Judges: run a candidate against a problem's tests in the sandbox and give one verdict per test.

Call tests run in one sandboxed process (the program is loaded once, each test is timed separately); when the
process dies part-way (crash, `os._exit`, timeout) the remaining tests are rerun in a fresh one, so one bad test
does not hide the others. Stdio tests run one process per test, spread over the pool, and their stdout is
compared here in the parent, so expected outputs never enter the sandbox. `stop_at_first_failure` trades
completeness for speed (a verifier that only needs pass/fail).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from solidcoder.execution.compare import first_difference, matches_any
from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import ExecResult, Limits
from solidcoder.problem import Problem, TestCase

# How a finished sandbox run maps onto a test that got no verdict from the harness.
_RUN_STATUS_TO_VERDICT = {"ok": "error", "runtime_error": "error", "killed": "error"}


@dataclass
class TestVerdict:
    """The outcome of one test. `status`: pass, fail, error, timeout, memory_limit, output_limit, sandbox_error."""

    __test__ = False  # keeps pytest from collecting this class

    index: int
    status: str
    detail: str = ""
    stdin: str | None = None
    expected: str | None = None
    actual: str | None = None
    wall_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class JudgeReport:
    """Per-test verdicts for one candidate; `passed` only when every test ran and passed."""

    verdicts: list[TestVerdict] = field(default_factory=list)
    total: int = 0

    @property
    def passed(self) -> bool:
        return len(self.verdicts) == self.total and all(v.passed for v in self.verdicts)

    @property
    def infrastructure_error(self) -> bool:
        """True when the sandbox, not the program, failed: such a result must not be scored."""
        return any(v.status == "sandbox_error" for v in self.verdicts)

    @property
    def pass_count(self) -> int:
        return sum(v.passed for v in self.verdicts)

    def failures(self) -> list[TestVerdict]:
        return [v for v in self.verdicts if not v.passed]


class Judge:
    """Judges candidates on a sandbox pool. `strict_types` rejects non-builtin return values (forgery guard)."""

    def __init__(self, pool: Executor, strict_types: bool = True, tolerance: float = 1e-6) -> None:
        self.pool, self.strict_types, self.tolerance = pool, strict_types, tolerance

    def judge(self, problem: Problem, code: str, tests: list[TestCase] | None = None,
              stop_at_first_failure: bool = False) -> JudgeReport:
        """Judge `code` on `tests` (default: the problem's public tests)."""
        tests = problem.public_tests if tests is None else tests
        limits = Limits(wall_s=problem.time_limit_s, memory_mb=problem.memory_limit_mb)
        if problem.kind == "stdio":
            return self.judge_stdio(code, tests, limits, stop_at_first_failure)
        return self.judge_calls(code, problem.entry_point or "", tests, limits, stop_at_first_failure)

    def judge_calls(self, code: str, entry_point: str, tests: list[TestCase], limits: Limits,
                    stop_at_first_failure: bool = False) -> JudgeReport:
        report = JudgeReport(total=len(tests))
        start = 0
        while start < len(tests):
            batch = tests[start:]
            run_limits = Limits(wall_s=limits.wall_s * len(batch) + 2.0, memory_mb=limits.memory_mb)
            result = self.pool.run(self._calls_job(code, entry_point, batch, limits, stop_at_first_failure),
                                   limits=run_limits)
            verdicts, finished = _call_verdicts(result, start, batch)
            report.verdicts += verdicts
            if finished or stop_at_first_failure and any(not v.passed for v in verdicts):
                break
            start += len(verdicts)
        return report

    def _calls_job(self, code: str, entry_point: str, tests: list[TestCase], limits: Limits, stop: bool) -> dict:
        return {"mode": "tests", "code": code, "entry_point": entry_point, "test_time_s": limits.wall_s,
                "strict": self.strict_types, "stop_on_failure": stop, "tests": [_harness_test(t) for t in tests]}

    def judge_stdio(self, code: str, tests: list[TestCase], limits: Limits,
                    stop_at_first_failure: bool = False) -> JudgeReport:
        report = JudgeReport(total=len(tests))
        job = {"mode": "stdio", "code": code}
        if stop_at_first_failure:
            for index, test in enumerate(tests):
                report.verdicts.append(self._stdio_verdict(index, test, self.pool.run(job, test.stdin, limits)))
                if not report.verdicts[-1].passed:
                    break
            return report
        results = self.pool.map([(job, test.stdin or "", limits) for test in tests])
        report.verdicts = [self._stdio_verdict(i, t, r) for i, (t, r) in enumerate(zip(tests, results, strict=True))]
        return report

    def _stdio_verdict(self, index: int, test: TestCase, result: ExecResult) -> TestVerdict:
        verdict = TestVerdict(index, "fail", stdin=test.stdin, expected=test.outputs[0], actual=result.stdout,
                              wall_s=result.wall_s)
        if result.status != "ok":
            verdict.status = _RUN_STATUS_TO_VERDICT.get(result.status, result.status)
            verdict.detail = _run_problem(result)
        elif matches_any(result.stdout, test.outputs, self.tolerance):
            verdict.status = "pass"
        else:
            verdict.detail = first_difference(result.stdout, test.outputs[0], self.tolerance) or "wrong output"
        return verdict


def _harness_test(test: TestCase) -> dict:
    if test.script is not None:
        return {"kind": test.style or "assert", "script": test.script}
    return {"kind": "call", "call": test.call, "expected": test.expected}


def _run_problem(result: ExecResult) -> str:
    """A one-line account of why a run did not finish normally, for verdict details."""
    if result.status == "sandbox_error":
        return f"sandbox error: {result.detail}"
    tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
    if result.status == "ok":
        return "the program exited before the tests finished"
    what = {"timeout": "time limit exceeded", "memory_limit": "memory limit exceeded",
            "output_limit": "output limit exceeded", "killed": f"killed by signal {result.signal}"}
    return what.get(result.status, f"runtime error (exit {result.exit_code}, signal {result.signal})") + (
        f": {tail[0]}" if tail else "")


def _call_verdicts(result: ExecResult, start: int, batch: list[TestCase]) -> tuple[list[TestVerdict], bool]:
    """Verdicts the harness reported for a batch; when it did not finish, the next test takes the run's fate."""
    verdicts: list[TestVerdict] = []
    records = result.records
    load_error = next((r for r in records if r.get("event") == "load_error"), None)
    finished = any(r.get("event") == "done" for r in records)
    if load_error is not None and finished:
        detail = f"the program failed to load: {load_error['error']}"
        return [TestVerdict(start + i, "error", detail) for i in range(len(batch))], True
    for record in records:
        if record.get("event") == "test" and record.get("index") == len(verdicts):
            verdicts.append(_verdict_from_record(start, batch, record))
    if not finished and len(verdicts) < len(batch):
        status = _RUN_STATUS_TO_VERDICT.get(result.status, result.status)
        verdicts.append(TestVerdict(start + len(verdicts), status, _run_problem(result)))
    return verdicts, finished


def _verdict_from_record(start: int, batch: list[TestCase], record: dict) -> TestVerdict:
    index = record["index"]
    test = batch[index]
    if record.get("ok"):
        return TestVerdict(start + index, "pass", actual=record.get("actual"))
    status = "timeout" if record.get("timeout") else ("fail" if "error" not in record else "error")
    if record.get("error", "").startswith("AssertionError"):
        status = "fail"
    expected = repr(test.expected) if test.call is not None else None
    detail = record.get("error") or f"{test.call}: expected {expected}, got {record.get('actual')}"
    return TestVerdict(start + index, status, detail, expected=expected, actual=record.get("actual"))
