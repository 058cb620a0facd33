"""Live execution: run a candidate in the sandbox against public and generated tests, one outcome per test.

Generated tests are typed like the problem. For a call problem a generated test is an assert script run by the
judge after the candidate, like any call test. For a stdin problem it is an input plus a property check: the
candidate runs on the input as a normal program in its language (a compiled one built once per source,
`execution/build.py`), then the check runs in the sandbox as its own small program that
receives `{"stdin": ..., "stdout": ...}` as JSON on its standard input and calls `check(stdin, stdout)`. A stdin
program is never sent a Python script. A `crash_only` test (the `--no-oracle` ablation) passes unless the
candidate crashes: assertion failures are ignored.

`Evaluation.verified` is the one definition of a verified program: at least one test was executed and every
executed test passed. An evaluation with no outcomes is green (nothing to debug) but never verified.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from dataclasses import dataclass, field, replace

from solidcoder.core.executions import KEPT, TestRun, UnitExecutions, is_kept
from solidcoder.errors import SandboxFailure
from solidcoder.execution.build import COMPILE_ERROR, aprepare, run_limits
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge, TestVerdict
from solidcoder.execution.sandbox import ExecResult, Limits
from solidcoder.languages import language
from solidcoder.parsing import compile_source, parse_python
from solidcoder.problem import Problem, TestCase
from solidcoder.stages.base import describe_test

NO_TESTS = "no tests ran: the problem has no recognised examples and no generated test checked the program"

# Runs after the generated `check` definition; reads the candidate's run as data, never as code.
_CHECK_DRIVER = "\n\nimport json as _json, sys as _sys\n_run = _json.loads(_sys.stdin.read())\n" \
                "check(_run['stdin'], _run['stdout'])\n"


@dataclass(frozen=True)
class GeneratedTest:
    """A model-written test: an assert script (call) or an input plus a `check(stdin, stdout)` source (stdio)."""

    kind: str
    source: str
    stdin: str | None = None
    crash_only: bool = False
    origin: str = ""
    prop: str = ""  # a structured call test's property over the parameters and `result` (evidence checks it)

    @property
    def kept(self) -> bool:
        """Accumulated [D]: its origin marked by `kept_test`."""
        return is_kept(self.origin)

    def text(self) -> str:
        """How prompts show the test."""
        if self.kind == "call":
            return self.source
        return f"Input (standard input):\n{self.stdin}\nProperty check over the output:\n{self.source}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "source": self.source, "stdin": self.stdin, "crash_only": self.crash_only,
                "origin": self.origin, **({"prop": self.prop} if self.prop else {})}

    def as_testcase(self) -> TestCase:
        return TestCase(kind="call", script=self.source, style="assert", name=self.origin or None)


@dataclass(frozen=True)
class SuiteTest:
    """A test with a stable id (`public-0`, `generated-1`) so evaluations of different candidates line up."""

    id: str
    test: TestCase | GeneratedTest


def _run_kind(test: SuiteTest) -> str:
    """A generated stdin test's kind in the record: `kept` once accumulated, else `generated`."""
    return KEPT if isinstance(test.test, GeneratedTest) and test.test.kept else "generated"


def kept_test(test: SuiteTest) -> SuiteTest:
    """An accumulated test [D]: the same test, its origin marked `kept` so that its later runs (recorded as kind
    `kept`) are told from the run that found it failing."""
    if not isinstance(test.test, GeneratedTest) or test.test.kept:
        return test
    return SuiteTest(test.id, replace(test.test, origin=f"{KEPT} {test.test.origin}".strip()))


@dataclass
class Outcome:
    """One test's result, with what the debugger needs to see."""

    id: str
    passed: bool
    status: str
    detail: str = ""
    input: str = ""
    expected: str = ""
    actual: str = ""
    stdin: str = ""
    call: str | None = None


@dataclass
class Evaluation:
    """A candidate and its outcomes on a list of tests."""

    code: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def green(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def verified(self) -> bool:
        """The one rule for `verified`: at least one test was executed and every executed test passed."""
        return bool(self.outcomes) and self.green

    def verdict(self) -> tuple[str, str]:
        """(status, reason) for this candidate as a run's answer; with no executed test it is unverified."""
        if self.verified:
            return "verified", f"passes all {len(self.outcomes)} executed tests ({_origins(self.outcomes)})"
        if not self.outcomes:
            return "unverified", NO_TESTS
        return "unverified", self.summary()

    @property
    def passed_ids(self) -> set[str]:
        return {o.id for o in self.outcomes if o.passed}

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.passed]

    def summary(self) -> str:
        return f"{len(self.passed_ids)}/{len(self.outcomes)} tests pass"


def _origins(outcomes: list[Outcome]) -> str:
    """"2 public, 1 generated": how many outcomes came from each kind of test."""
    counts = Counter(outcome.id.split("-")[0] for outcome in outcomes)
    return ", ".join(f"{n} {origin}" for origin, n in counts.items())


class LiveExecutor:
    """Evaluates candidates on a problem's sandbox pool."""

    def __init__(self, pool: Executor, problem: Problem, judge: Judge | None = None,
                 executions: UnitExecutions | None = None, purpose: str = "run"):
        """`judge`: the run's (`SolveContext.judge`, which records every verdict), else a plain one on `pool`;
        `executions`: the unit's recorder, told of the runs made outside the judge (stdin property checks) under
        `purpose`."""
        self.pool, self.problem, self.judge = pool, problem, judge or Judge(pool)
        self.executions, self.purpose = executions, purpose
        self.limits = run_limits(problem)

    async def evaluate(self, code: str, tests: list[SuiteTest]) -> Evaluation:
        """Run `code` on every test, through the judge's one async seam (`Judge.ajudge`) and the executor's
        `arun`; raises `SandboxFailure` when the sandbox itself failed."""
        unusable = _unusable(code, self.problem.language)
        if unusable:  # never green, even with no tests to run
            return Evaluation(code, [Outcome("program", False, "error", unusable, expected="a complete program",
                                             actual=unusable)])
        if self.problem.kind == "call":
            outcomes = await self._judged(code, tests)
        else:
            judged = await self._judged(code, [t for t in tests if isinstance(t.test, TestCase)])
            by_id = {o.id: o for o in judged}
            outcomes = [by_id.get(t.id) or await self._stdio_generated(code, t) for t in tests]
            ran = [(t, o) for t, o in zip(tests, outcomes, strict=True) if o.id not in by_id]
            self._record(code, [o for _, o in ran], [_run_kind(t) for t, _ in ran])
        if any(o.status == "sandbox_error" for o in outcomes):
            raise SandboxFailure(next(o.detail for o in outcomes if o.status == "sandbox_error"))
        return Evaluation(code, outcomes)

    async def run_program(self, code: str, kind: str, given: str) -> ExecResult:
        """Run a program of the pipeline's own (no stdin) outside the judge, its run recorded as a `kind` test on
        `given`; raises `SandboxFailure` when the sandbox failed."""
        run = await self.pool.arun({"mode": "stdio", "code": code}, "", self.limits)
        if run.status == "sandbox_error":
            raise SandboxFailure(run.detail)
        if self.executions is not None:
            self.executions.ran(code, [TestRun(kind=kind, status="pass" if run.ok else run.status, input=given,
                                               actual=run.stdout, detail=_last_line(run))], self.purpose)
        return run

    def _record(self, code: str, outcomes: list[Outcome], kinds: list[str]) -> None:
        """Tell the recorder of tests run outside the judge (generated stdin tests, evidence checks)."""
        if self.executions is not None and outcomes:
            self.executions.ran(code, [TestRun(kind=kind, status=o.status, input=o.stdin, expected=o.expected,
                                               actual=o.actual, detail=o.detail, name=o.id)
                                       for o, kind in zip(outcomes, kinds, strict=True)], self.purpose)

    async def _judged(self, code: str, tests: list[SuiteTest]) -> list[Outcome]:
        if not tests:
            return []
        cases = [t.test if isinstance(t.test, TestCase) else t.test.as_testcase() for t in tests]
        report = await self.judge.ajudge(self.problem, code, cases)
        return [self._outcome(t, v) for t, v in zip(tests, report.verdicts, strict=False)]

    def _outcome(self, suite_test: SuiteTest, verdict: TestVerdict) -> Outcome:
        test = suite_test.test
        case = test if isinstance(test, TestCase) else test.as_testcase()
        sample = describe_test(case)
        crash_only = isinstance(test, GeneratedTest) and test.crash_only
        passed = verdict.passed or (crash_only and verdict.status == "fail")
        actual = verdict.actual if verdict.actual is not None else verdict.detail
        call = case.call if case.kind == "call" and case.call else first_call(case.script or "", self.problem)
        return Outcome(suite_test.id, passed, verdict.status, verdict.detail, sample.input, sample.output,
                       actual or "", stdin=case.stdin or "", call=call)

    async def _stdio_generated(self, code: str, suite_test: SuiteTest) -> Outcome:
        test = suite_test.test
        assert isinstance(test, GeneratedTest)
        base = Outcome(suite_test.id, False, "fail", input=test.stdin or "", stdin=test.stdin or "",
                       expected=f"output accepted by:\n{test.source}")
        program = await aprepare(self.pool, language(self.problem.language), code)  # built once per source
        if program.job is None:
            base.status, base.detail = COMPILE_ERROR, program.error
            return base
        run = await self.pool.arun(program.job, test.stdin or "", self.limits)
        base.actual = run.stdout
        if run.status != "ok":
            base.status = "sandbox_error" if run.status == "sandbox_error" else "error"
            base.detail = _last_line(run) or run.status
            return base
        if test.crash_only:
            base.passed, base.status = True, "pass"
            return base
        return _checked(base, await self.pool.arun(*self._check_run(test, run.stdout)))

    async def check_output(self, base: Outcome, test: GeneratedTest, stdout: str) -> Outcome:
        """`base`, passed when the test's property check (its own sandboxed program) accepts `stdout`."""
        checked = _checked(base, await self.pool.arun(*self._check_run(test, stdout)))
        self._record(test.source, [replace(checked, actual=stdout)], ["evidence"])
        return checked

    def _check_run(self, test: GeneratedTest, stdout: str) -> tuple[dict, str, Limits]:
        """The sandbox run of a test's property check on `stdout`: its own program, the run as JSON on stdin."""
        payload = json.dumps({"stdin": test.stdin or "", "stdout": stdout})
        return {"mode": "stdio", "code": test.source + _CHECK_DRIVER}, payload, self.limits


def _checked(base: Outcome, check: ExecResult) -> Outcome:
    """`base` with the verdict of its property check's run."""
    if check.status == "sandbox_error":
        base.status, base.detail = "sandbox_error", check.detail
    elif check.ok:
        base.passed, base.status = True, "pass"
    else:
        base.detail = f"property check failed: {_last_line(check) or check.status}"
    return base


def _unusable(code: str, program_language: str) -> str | None:
    """Why `code` cannot be a candidate at all (empty, or not valid Python), else None. A compiled language's
    program is judged by its build (a `compile_error` verdict on every test, the compiler's words as feedback)."""
    if not code.strip():
        return "the reply held no code"
    if language(program_language).native:
        return None
    try:
        compile_source(code, "solution.py")
    except (SyntaxError, ValueError) as exc:
        return f"SyntaxError: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"
    return None


def _last_line(result: ExecResult) -> str:
    lines = result.stderr.strip().splitlines()
    return lines[-1] if lines else result.detail


def first_call(script: str, problem: Problem) -> str | None:
    """The source of the first call to the entry point in an assert script (what the tracer replays)."""
    name = (problem.entry_point or "").split(".")[-1]
    try:
        tree = parse_python(script)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if isinstance(node, ast.Call) and (getattr(func, "id", None) or getattr(func, "attr", None)) == name:
            return ast.get_source_segment(script, node)
    return None
