"""C++ verdicts agree with a plain harness (issue 41, "Must show: verdict agreement").

The corpus (tests/fixtures/cpp_agreement/*.cpp, written for this test) holds C++ programs for CodeContests and APPS
stdin problems, each named `<problem>__<kind>__<what>.cpp`, where kind is right, wrong, slow, crash or broken. Every
program is judged twice, on the same first tests of its problem and under the same time limit:

- by solidcoder's `Judge` on a real sandbox pool, and
- by a plain harness written here: `g++ -std=c++17 -O2` once, then `./a.out < input` per test with a subprocess
  timeout, the output compared by the dataset's rule (tokens separated by whitespace; an expected integer needs the
  identical token; another expected number accepts any number within the statement's tolerance, absolute or
  relative; every other token must be identical), implemented below without the judge's comparison code.

The two verdicts (pass, or the first failing test and its kind: wrong answer, time limit, runtime error, compile
error) must be equal for every program, and the plain harness must give each program the kind its name says.
benchmarks/cpp_agreement.py runs the same comparison and prints the agreement figure.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS_DIR = FIXTURES / "cpp_agreement"
TIME_LIMIT_S = 1.0  # every problem's limit, for the judge and the harness alike
GXX = ("g++", "-std=c++17", "-O2")


@dataclass(frozen=True)
class Source:
    """Where a problem of the corpus comes from, how many of its tests are judged (the examples first, then the
    hidden tests in the dataset's order), and the float tolerance its statement states (1e-6 where it states
    none, the project's default)."""

    dataset: str
    data_file: Path
    problem_id: str
    tests: int
    tolerance: float = 1e-6


PROBLEMS = {
    "digjump": Source("codecontests", FIXTURES / "data" / "codecontests.jsonl", "digjump", 5),
    "cf1000a": Source("codecontests", FIXTURES / "data" / "codecontests.jsonl", "1000_A. Codehorses T-shirts", 4),
    "cf1045d": Source("codecontests", CORPUS_DIR / "problems.jsonl", "1045_D. Interstellar battle", 3, 1e-4),
    "cf12b": Source("codecontests", CORPUS_DIR / "problems.jsonl", "12_B. Correct Solution?", 6),
    "apps1604": Source("apps", FIXTURES / "data" / "apps.jsonl", "apps-1604", 4),
    "apps2096": Source("apps", FIXTURES / "data" / "apps.jsonl", "apps-2096", 4),
    "apps2098": Source("apps", FIXTURES / "data" / "apps.jsonl", "apps-2098", 4),
}
# What a program's name says it does, as the verdict kind it must get.
KINDS = {"right": "pass", "wrong": "wrong_answer", "slow": "time_limit", "crash": "runtime_error",
         "broken": "compile_error"}
CORPUS_COUNTS = {"right": 14, "wrong": 11, "slow": 7, "crash": 10, "broken": 7}  # the corpus may not shrink
# The judge's status of a test, as the harness's kind.
JUDGE_KINDS = {"pass": "pass", "fail": "wrong_answer", "timeout": "time_limit", "error": "runtime_error",
               "compile_error": "compile_error"}
_INTEGER = re.compile(r"[+-]?[0-9]+")

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (.ci/run installs it)")


@dataclass(frozen=True)
class Program:
    """One corpus file: its problem's key in PROBLEMS and the kind its name claims."""

    path: Path
    problem: str
    kind: str

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Verdict:
    """"pass" (test None), or the kind of the first failing test and that test's index (from 0; shown from 1)."""

    kind: str
    test: int | None = None

    def __str__(self) -> str:
        return self.kind if self.test is None else f"{self.kind} on test {self.test + 1}"


def corpus() -> list[Program]:
    """Every program of the fixture folder, by file name."""
    return [Program(path, *path.stem.split("__")[:2]) for path in sorted(CORPUS_DIR.glob("*.cpp"))]


@functools.cache
def _loaded(dataset: str, data_file: Path) -> dict[str, Problem]:
    problems, _ = load_dataset(dataset, DataOptions(data_file=data_file))
    return {problem.id: problem for problem in problems}


@functools.cache
def judged_problem(key: str) -> tuple[Problem, tuple[TestCase, ...]]:
    """The problem as the loader builds it, in C++ and with the corpus's time limit, and the tests judged."""
    source = PROBLEMS[key]
    problem = _loaded(source.dataset, source.data_file)[source.problem_id]
    tests = problem.public_tests + [t for t in problem.hidden_tests if t not in problem.public_tests]
    return dataclasses.replace(problem, language="cpp", time_limit_s=TIME_LIMIT_S), tuple(tests[: source.tests])


# ---------------------------------------------------------------- the plain harness


def same_token(got: str, want: str, tolerance: float) -> bool:
    if got == want:
        return True
    if _INTEGER.fullmatch(want):
        return False
    try:
        a, e = float(got), float(want)
    except ValueError:
        return False
    return math.isfinite(a) and math.isfinite(e) and abs(a - e) <= tolerance * max(1.0, abs(a), abs(e))


def same_output(got: str, want: str, tolerance: float) -> bool:
    """The dataset's rule: the same tokens, numbers within the tolerance (see the module docstring)."""
    got_tokens, want_tokens = got.split(), want.split()
    return len(got_tokens) == len(want_tokens) and all(
        same_token(g, w, tolerance) for g, w in zip(got_tokens, want_tokens, strict=True))


def run_test(binary: Path, test: TestCase, tolerance: float) -> str:
    """`./a.out < input` under the time limit: pass, wrong_answer, time_limit or runtime_error."""
    try:
        done = subprocess.run([str(binary)], input=(test.stdin or "").encode(), capture_output=True,
                              timeout=TIME_LIMIT_S, cwd=binary.parent)
    except subprocess.TimeoutExpired:
        return "time_limit"
    if done.returncode != 0:
        return "runtime_error"
    output = done.stdout.decode("utf-8", errors="replace")
    return "pass" if any(same_output(output, want, tolerance) for want in test.outputs) else "wrong_answer"


def plain_verdict(program: Program, workdir: Path) -> Verdict:
    """Compiled once in `workdir`, then run test by test until one fails."""
    (workdir / "main.cpp").write_text(program.source, encoding="utf-8")
    built = subprocess.run([*GXX, "main.cpp", "-o", "a.out"], cwd=workdir, capture_output=True, timeout=300)
    if built.returncode != 0:
        return Verdict("compile_error", 0)
    _, tests = judged_problem(program.problem)
    for index, test in enumerate(tests):
        kind = run_test(workdir / "a.out", test, PROBLEMS[program.problem].tolerance)
        if kind != "pass":
            return Verdict(kind, index)
    return Verdict("pass")


# ---------------------------------------------------------------- the judge


def judge_verdict(pool, program: Program) -> Verdict:
    """solidcoder's verdicts on the same tests, read as the harness's: pass, or the first failing test's kind."""
    problem, tests = judged_problem(program.problem)
    report = Judge(pool).judge(problem, program.source, tests=list(tests))
    failed = next((v for v in report.verdicts if not v.passed), None)
    if failed is None:
        return Verdict("pass") if report.passed else Verdict("missing verdicts", len(report.verdicts))
    return Verdict(JUDGE_KINDS.get(failed.status, failed.status), failed.index)


# ---------------------------------------------------------------- tests


def test_the_corpus_holds_every_kind_for_several_problems():
    programs = corpus()
    assert Counter(p.kind for p in programs) == CORPUS_COUNTS
    assert min(CORPUS_COUNTS.values()) >= 5 and len(programs) >= 40
    assert {p.problem for p in programs} == set(PROBLEMS) and len(PROBLEMS) >= 5


@pytest.mark.parametrize("key", sorted(PROBLEMS))
def test_each_problem_is_a_stdin_problem_judged_on_its_first_tests(key):
    problem, tests = judged_problem(key)
    assert problem.kind == "stdio" and problem.output_match == "tokens" and problem.language == "cpp"
    assert len(tests) == PROBLEMS[key].tests and len(set(tests)) == len(tests)
    assert problem.tolerance == PROBLEMS[key].tolerance  # the judge reads the statement's tolerance as stated


@needs_gxx
@pytest.mark.parametrize("program", corpus(), ids=lambda p: p.path.stem)
def test_the_judge_gives_the_verdict_a_plain_harness_gives(sandbox_pool, tmp_path, program):
    plain = plain_verdict(program, tmp_path)
    assert plain.kind == KINDS[program.kind], f"the corpus program is not {program.kind}: plain harness {plain}"
    judged = judge_verdict(sandbox_pool, program)
    assert judged == plain, f"{program.path.name}: judge {judged}, plain harness {plain}"
