"""Judges: run a candidate against a problem's tests in the sandbox and give one verdict per test.

Call tests run in one sandbox run: the program is loaded once in its own process, and the tests run in a
separate judge process that calls it through proxies (see `referee.py`), each test under its own time limit,
enforced by killing the program. When the program's process is lost part-way (a crash, `os._exit`, a timeout),
the remaining tests are rerun in a fresh run, so one bad test does not hide the others, and a candidate's judging
time stays bounded by the sum of its per-test limits. Stdio tests run one process per test, spread over the pool
(a built binary's in groups, one sandbox run per group and still a process per test: `batched.py`), and their
stdout is compared here in the parent, so expected outputs never enter the sandbox.
`stop_at_first_failure` trades completeness for speed (a verifier that only needs pass/fail).
`Judge.ajudge` is the one judging call (`Judge.judge` runs it for a caller without an event loop): what the
program did is always a verdict, and a failure of the sandbox itself raises `SandboxFailure`, never a verdict.

Values as plain Python sees them: a program's answer reaches the test as the builtin value it equals (a Counter as a
dict, a numpy scalar as its number, a generator as an iterator over its items); an object with no such value (an
instance of the program's own class, such as a `ListNode`) stays in the program's process and the test holds a
proxy: attribute reads and writes, method calls, `len`, `iter`/`next`, `bool`, `str`/`repr`, `in`, indexing and
`hash` are answered by the program's own code, and every answer is plain data or another proxy.

The equality rule: a comparison with an expected value that the test built is decided in the judge, on the program
object's plain value; it is never decided by the program's `__eq__`. An object that has no plain value equals only
itself, as an object without `__eq__` does. Comparisons between two of the program's own objects may use the
program's methods: they cannot reveal or fake an expected value.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import re
import sys
from collections.abc import Generator
from dataclasses import dataclass, field

from solidcoder.errors import SandboxFailure
from solidcoder.execution import batched
from solidcoder.execution.build import COMPILE_ERROR, prepare, run_limits
from solidcoder.execution.executor import Executor
from solidcoder.execution.inside.compare import first_difference, matches_any
from solidcoder.execution.inside.harness import source_line
from solidcoder.execution.inside.native import signal_name
from solidcoder.execution.sandbox import ExecResult, Limits
from solidcoder.languages import PYTHON, Language, language
from solidcoder.parsing import parse_python
from solidcoder.problem import Problem, TestCase

# A frame of the program in a traceback on stderr (stdio runs print one, as `python solution.py` would).
_TRACEBACK_LINE = re.compile(r'^  File "solution\.py", line ([0-9]{1,9}), in ', re.MULTILINE)
# A judging plan yields the sandbox runs it needs next, (job, stdin, limits) each, is sent their results in order,
# and returns the report: `Judge.ajudge` drives it on the event loop.
Plan = Generator[list[tuple[dict, str, Limits]], list[ExecResult], "JudgeReport"]

# How a finished sandbox run maps onto a test that got no verdict from the harness.
_RUN_STATUS_TO_VERDICT = {"ok": "error", "runtime_error": "error", "killed": "error"}


@dataclass
class TestVerdict:
    """The outcome of one test. `status`: pass, fail, error, timeout, memory_limit, output_limit, compile_error (the
    program did not build: `detail` holds the compiler's first lines), sandbox_error."""

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
    """Judges candidates on a sandbox pool. Only plain builtin values cross from a program to its judge (wire.py)."""

    def __init__(self, pool: Executor, tolerance: float = 1e-6) -> None:
        self.pool, self.tolerance = pool, tolerance

    async def ajudge(self, problem: Problem, code: str, tests: list[TestCase] | None = None,
                     stop_at_first_failure: bool = False) -> JudgeReport:
        """The one way to judge: `code` on `tests` (default: the problem's public tests), the runs awaited on the
        executor (`Executor.arun`). Raises `SandboxFailure` when the sandbox, not the program, failed: a program's
        behaviour is always a verdict, a sandbox failure never is, so it is never scored as a wrong answer."""
        plan = self._plan(problem, code, tests, stop_at_first_failure)
        try:
            jobs = next(plan)
            while True:
                jobs = plan.send(list(await asyncio.gather(*(self.pool.arun(*job) for job in jobs))))
        except StopIteration as done:
            report = done.value
        if report.infrastructure_error:
            raise SandboxFailure(next(v.detail for v in report.verdicts if v.status == "sandbox_error"))
        return report

    def judge(self, problem: Problem, code: str, tests: list[TestCase] | None = None,
              stop_at_first_failure: bool = False) -> JudgeReport:
        """`ajudge` for a caller with no event loop (`check`, the trainer's reward, scripts): the same verdicts, and
        the same `SandboxFailure`."""
        return asyncio.run(self.ajudge(problem, code, tests, stop_at_first_failure))

    def _plan(self, problem: Problem, code: str, tests: list[TestCase] | None, stop: bool) -> Plan:
        tests = problem.public_tests if tests is None else tests
        limits = run_limits(problem)
        if problem.kind == "stdio":
            return self._stdio_plan(code, tests, limits, stop, problem.output_match, problem.tolerance,
                                    language(problem.language))
        return self._calls_plan(code, problem.entry_point or "", tests, limits, stop, problem.header)

    def _calls_plan(self, code: str, entry_point: str, tests: list[TestCase], limits: Limits,
                    stop_at_first_failure: bool, header: str = "") -> Plan:
        """Call tests in one run; when the program's process is lost part-way, the rest in another."""
        report = JudgeReport(total=len(tests))
        start = 0
        while start < len(tests):
            batch = tests[start:]
            # Per test its limit and as long again for sending answers, one limit for loading the program, and
            # slack: the judge enforces each of them.
            run_limits = Limits(wall_s=limits.wall_s * (2 * len(batch) + 1) + 2.0, memory_mb=limits.memory_mb)
            job = self._calls_job(code, entry_point, batch, limits, stop_at_first_failure) | {"header": header}
            (result,) = yield [(job, "", run_limits)]
            verdicts, finished = _call_verdicts(result, start, batch)
            report.verdicts += verdicts
            if finished or stop_at_first_failure and any(not v.passed for v in verdicts):
                break
            start += len(verdicts)
        return _named_missing(report, code, entry_point, header)

    def _calls_job(self, code: str, entry_point: str, tests: list[TestCase], limits: Limits, stop: bool) -> dict:
        return {"mode": "tests", "code": code, "entry_point": entry_point, "test_time_s": limits.wall_s,
                "stop_on_failure": stop, "tests": [_harness_test(t, self.tolerance) for t in tests],
                "program_names": program_names(code)}

    def _stdio_plan(self, code: str, tests: list[TestCase], limits: Limits, stop_at_first_failure: bool,
                    output_match: str, tolerance: float | None, program_language: Language = PYTHON) -> Plan:
        """One process per test, all at once; with `stop_at_first_failure`, one at a time until a failure. A
        compiled program is built first (once per source, `build.prepare`); one that does not build gets a
        `compile_error` verdict on every test, and one that does runs its tests in groups (`batched.py`)."""
        report = JudgeReport(total=len(tests))
        program = yield from prepare(self.pool, program_language, code)
        if not program.built:
            report.verdicts = [TestVerdict(i, COMPILE_ERROR, program.error, stdin=t.stdin, expected=t.outputs[0],
                                           actual="") for i, t in enumerate(tests)]
            return report
        job, source = program.job, None if program_language.native else code  # Python tracebacks name its lines
        how = (output_match, self.tolerance if tolerance is None else tolerance)
        if stop_at_first_failure:
            for index, test in enumerate(tests):
                (result,) = yield [(job, test.stdin or "", limits)]
                report.verdicts.append(self._stdio_verdict(index, test, result, *how, code=source))
                if not report.verdicts[-1].passed:
                    break
            return report
        results = yield from batched.run_tests(self.pool, job, [test.stdin or "" for test in tests], limits)
        report.verdicts = [self._stdio_verdict(i, t, r, *how, code=source)
                           for i, (t, r) in enumerate(zip(tests, results, strict=True))]
        return report

    def _stdio_verdict(self, index: int, test: TestCase, result: ExecResult, output_match: str = "tokens",
                       tolerance: float | None = None, code: str | None = "") -> TestVerdict:
        tol = self.tolerance if tolerance is None else tolerance
        verdict = TestVerdict(index, "fail", stdin=test.stdin, expected=test.outputs[0], actual=result.stdout,
                              wall_s=result.wall_s)
        if result.status != "ok":
            verdict.status = _RUN_STATUS_TO_VERDICT.get(result.status, result.status)
            verdict.detail = _run_problem(result, code)
        elif matches_any(result.stdout, test.outputs, tol, output_match):
            verdict.status = "pass"
        else:
            verdict.detail = first_difference(result.stdout, test.outputs[0], tol, output_match) or "wrong output"
        return verdict


def _harness_test(test: TestCase, tolerance: float) -> dict:
    if test.script is not None:
        return {"kind": test.style or "assert", "script": test.script}
    return {"kind": "call", "call": test.call, "expected": test.expected, "tolerance": tolerance}


def _run_problem(result: ExecResult, code: str | None = "") -> str:
    """A one-line account of why a run did not finish normally, for verdict details: what happened, the last line
    of stderr (a traceback's `Type: message`), and the program's innermost line in that traceback (a Python
    program's: None for another language, whose stderr is not read as a traceback)."""
    if result.status == "sandbox_error":
        return f"sandbox error: {result.detail}"
    if result.status == "ok":
        return "the program exited before the tests finished"
    tail = result.stderr.strip().splitlines()[-1:] if result.stderr.strip() else []
    what = {"timeout": "time limit exceeded", "memory_limit": "memory limit exceeded",
            "output_limit": "output limit exceeded", "killed": f"killed by {signal_name(result.signal or 0)}"}
    return what.get(result.status, _runtime_error(result)) + (f": {tail[0]}" if tail else "") + _crash_line(
        result.stderr, code)


def _runtime_error(result: ExecResult) -> str:
    if result.signal:
        return f"runtime error ({signal_name(result.signal)})"
    return f"runtime error (exit {result.exit_code})"



def _crash_line(stderr: str, code: str | None) -> str:
    """` at solution.py:N: source` for the last frame of the program in a traceback on stderr, else ""."""
    lines = _TRACEBACK_LINE.findall(stderr) if code is not None else []
    if not lines:
        return ""
    line = int(lines[-1])
    source = source_line(code, line)
    return f" at solution.py:{line}: {source}" if source else f" at solution.py:{line}"


def _call_verdicts(result: ExecResult, start: int, batch: list[TestCase]) -> tuple[list[TestVerdict], bool]:
    """Verdicts the judge process reported for a batch, and whether the batch is settled.

    A test during which the program's process was lost takes the run's fate (its memory limit, its crash); when
    the judge itself did not finish, the next test does. Either way the tests after it are run again.
    """
    verdicts: list[TestVerdict] = []
    records = result.records
    load_error = next((r for r in records if r.get("event") == "load_error"), None)
    done = any(r.get("event") == "done" for r in records)
    if load_error is not None and done:
        detail = f"the program failed to load: {load_error.get('error')}"
        return [TestVerdict(start + i, "error", detail) for i in range(len(batch))], True
    for record in records:
        if record.get("event") == "test" and record.get("index") == len(verdicts) < len(batch):
            verdicts.append(_verdict_from_record(start, batch, record, result))
    if not done and len(verdicts) < len(batch):
        status = _RUN_STATUS_TO_VERDICT.get(result.status, result.status)
        verdicts.append(TestVerdict(start + len(verdicts), status, _run_problem(result)))
    lost = any(r.get("event") == "test" and r.get("lost") for r in records)
    return verdicts, done and not lost


def _verdict_from_record(start: int, batch: list[TestCase], record: dict, result: ExecResult) -> TestVerdict:
    index = record["index"]
    test = batch[index]
    actual = record.get("actual") if isinstance(record.get("actual"), str) else None
    error = record.get("error") if isinstance(record.get("error"), str) else None
    if record.get("ok") is True:
        return TestVerdict(start + index, "pass", actual=actual)
    status = "timeout" if record.get("timeout") else ("fail" if error is None else "error")
    if error is not None and error.startswith("AssertionError"):
        status = "fail"
    if record.get("lost") and not record.get("timeout") and result.status in ("memory_limit", "runtime_error"):
        status, error = _RUN_STATUS_TO_VERDICT.get(result.status, result.status), f"{error}: {_run_problem(result)}"
    expected = repr(test.expected) if test.call is not None else None
    detail = error or f"{test.call}: expected {expected}, got {actual}"
    return TestVerdict(start + index, status, detail, expected=expected, actual=actual)


def program_names(code: str) -> dict[str, list]:
    """The names a test's scope gains from the program (the sandbox's rule 3), read here, on the trusted side, from
    the source's top level: `defined`, the functions and classes it defines (bound in the judge as proxies), and
    `imports`, each `[name, module to import, module to take, attribute or None]` (the judge imports the module
    itself). Builtin and dunder names are left out, a function or class named like a standard-library module too (a
    program's `class math` is not the test's `math`), and so is everything of a program that cannot be read: a test
    never sees a name the program reports as it runs."""
    try:
        body = parse_python(code, filename="solution.py").body
    except SyntaxError:
        return {"defined": [], "imports": []}
    defined = [node.name for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    imports = [entry for node in body for entry in _imported(node)]
    return {"defined": [name for name in defined if _bindable(name) and name not in sys.stdlib_module_names],
            "imports": [entry for entry in imports if _bindable(entry[0])]}


def missing_entry(code: str, entry_point: str, header: str = "") -> str | None:
    """"the program defines no class Solution (it defines maxSubArray)" when nothing at the top level of the program
    (or the problem's header), read here on the trusted side, binds the name the tests call first; None when
    something may bind it (an assignment, an import, `from m import *`) or the program cannot be read."""
    root = entry_point.split(".", 1)[0]
    bound = [_bound_names(source) for source in (header, code)] if root else [None]
    if None in bound or any(root in names or "*" in names for names in bound):
        return None
    kind = "class" if "." in entry_point else "function"
    defined = ", ".join(program_names(code)["defined"])
    return f"the program defines no {kind} {root}" + (f" (it defines {defined})" if defined else "")


def _bound_names(code: str) -> set[str] | None:
    """Every name a top-level statement of `code` may bind (a local name too, to err on the side of "bound"); None
    when `code` does not parse. `*` stands for a star import."""
    try:
        body = parse_python(code, filename="solution.py").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = {entry[0] for node in body for entry in _imported(node)}
    names |= {"*" for node in body if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)}
    for node in (n for statement in body for n in ast.walk(statement)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _named_missing(report: JudgeReport, code: str, entry_point: str, header: str) -> JudgeReport:
    """Each test that failed on the entry point's missing name (`KeyError: 'Solution'` in the judge's scope, or a
    NameError) says so in the user's words (`missing_entry`), as the verdict and as the repair prompt shows it."""
    missing = missing_entry(code, entry_point, header) if report.failures() else None
    root = entry_point.split(".", 1)[0]
    for verdict in report.failures() if missing else ():
        if verdict.detail.startswith(f"KeyError: '{root}'") or f"name '{root}' is not defined" in verdict.detail:
            verdict.detail = missing
    return report


def _imported(node: ast.stmt) -> list[list]:
    if isinstance(node, ast.Import):
        return [[alias.asname or alias.name.split(".")[0], alias.name,
                 alias.name if alias.asname else alias.name.split(".")[0], None] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [[alias.asname or alias.name, node.module, node.module, alias.name] for alias in node.names
                if alias.name != "*"]
    return []


def _bindable(name: str) -> bool:
    return not hasattr(builtins, name) and not (name.startswith("__") and name.endswith("__"))
