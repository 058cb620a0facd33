"""Weak verifiers: cheap checks that prune clearly wrong candidates before the expensive ranking.

Each verifier takes a problem and a batch of distinct candidate programs and says, per program, whether it
survives. Verifiers are async: the linter runs as one subprocess over the whole batch, the tests verifiers await
the judge (`Judge.ajudge`), so nothing blocks the event loop and no sandbox work runs in a thread of its own. A
sandbox failure raises `SandboxFailure` through them: it never prunes or keeps a program. The full test suite
(`StrongVerifier`) is the ground truth the others are measured against.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge
from solidcoder.parsing import parse_python
from solidcoder.problem import Problem
from solidcoder.requirements import PYLINT, RUFF, Requirement

# Ruff rules that mean the program cannot run as written (syntax errors, undefined names, misused statements):
# the flake8 "fatal" selection. Style findings never prune a candidate.
RUFF_FATAL = "E9,F63,F7,F82"
LINTERS = {"ruff": RUFF, "pylint": PYLINT}  # each runs as `python -m NAME`


class Verifier(Protocol):
    """Says which candidates survive; `name` is how reports refer to it."""

    name: str

    async def survivors(self, problem: Problem, programs: list[str]) -> list[bool]: ...


class SyntaxVerifier:
    """Keeps programs that parse."""

    name = "syntax"

    async def survivors(self, problem: Problem, programs: list[str]) -> list[bool]:
        return [_parses(code) for code in programs]


def _parses(code: str) -> bool:
    try:
        parse_python(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


class LintVerifier:
    """Keeps programs with zero error or fatal findings from ruff (default) or pylint."""

    def __init__(self, tool: str = "ruff") -> None:
        if tool not in LINTERS:
            raise BadInput(f"unknown linter {tool!r}: use ruff or pylint")
        self.tool, self.name = tool, f"lint:{tool}"

    async def survivors(self, problem: Problem, programs: list[str]) -> list[bool]:
        if not programs:
            return []
        with tempfile.TemporaryDirectory(prefix="solidcoder-lint-") as tmp:
            paths = [Path(tmp) / f"c{i}.py" for i in range(len(programs))]
            for path, code in zip(paths, programs, strict=True):
                path.write_text(code, encoding="utf-8")
            flagged = await self._flagged(paths)
        return [path.name not in flagged for path in paths]

    async def _flagged(self, paths: list[Path]) -> set[str]:
        """File names with at least one error/fatal finding, from one linter process over the whole batch."""
        if self.tool == "ruff":
            command = [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", RUFF_FATAL,
                       "--output-format", "json", *map(str, paths)]
            key, keep = "filename", lambda finding: True
        else:
            command = [sys.executable, "-m", "pylint", "--disable=all", "--enable=E,F", "--output-format=json",
                       "--persistent=n", *map(str, paths)]
            key, keep = "path", lambda finding: finding.get("type") in ("error", "fatal")
        stdout, stderr = await _run(command, timeout_s=300)
        try:
            findings = json.loads(stdout or "[]")
        except json.JSONDecodeError:
            raise RuntimeError(f"{self.tool} gave unreadable output: {stderr.strip()[:300]}") from None
        return {Path(f[key]).name for f in findings if keep(f)}


async def _run(command: list[str], timeout_s: float) -> tuple[str, str]:
    """A linter's stdout and stderr, the process awaited (killed past `timeout_s`, as `subprocess.run` would)."""
    process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    return stdout.decode(errors="replace"), stderr.decode(errors="replace")


@dataclass
class TestsVerifier:
    """Runs the first N public tests (`tests:N`), or with `suite` the first N of the problem's whole test suite as
    the ORM paper does (`suite:N`), with a short time limit; programs that time out are kept (as in the paper)."""

    __test__ = False

    judge: Judge
    first_n: int = 3
    time_limit_s: float = 1.0
    suite: bool = False

    @property
    def name(self) -> str:
        return f"{'suite' if self.suite else 'tests'}:{self.first_n}"

    async def survivors(self, problem: Problem, programs: list[str]) -> list[bool]:
        tests = first_tests(problem, self.first_n, self.suite)
        if not tests:
            return [True] * len(programs)
        quick = _with_time_limit(problem, self.time_limit_s)
        return [await self._survives(quick, code, tests) for code in programs]

    async def _survives(self, problem: Problem, code: str, tests) -> bool:
        report = await self.judge.ajudge(problem, code, tests)
        return all(v.status in ("pass", "timeout") for v in report.verdicts)


@dataclass
class StrongVerifier:
    """The full hidden test suite: the ground truth."""

    judge: Judge
    name: str = "strong"

    async def survivors(self, problem: Problem, programs: list[str]) -> list[bool]:
        return [(await self.judge.ajudge(problem, code, problem.hidden_tests or problem.public_tests)).passed
                for code in programs]


def first_tests(problem: Problem, n: int, suite: bool = False) -> list:
    """The first `n` public tests, or of the whole suite (public, then the hidden tests not among them)."""
    tests = problem.public_tests + [t for t in problem.hidden_tests if t not in problem.public_tests] if suite \
        else problem.public_tests
    return tests[:n]


def _with_time_limit(problem: Problem, seconds: float) -> Problem:
    from dataclasses import replace

    return replace(problem, time_limit_s=min(problem.time_limit_s, seconds))


def filter_requirements(specs: tuple[str, ...] | list[str]) -> tuple[Requirement, ...]:
    """What the `--prune` filters `specs` need installed: the linter of each `lint` filter."""
    return tuple(LINTERS[spec.partition(":")[2] or "ruff"] for spec in specs
                 if spec.partition(":")[0] == "lint" and (spec.partition(":")[2] or "ruff") in LINTERS)


def make_verifier(spec: str, judge: Judge | None = None) -> Verifier:
    """`syntax`, `lint`, `lint:pylint`, `tests:N` or `suite:N` (these two need a judge)."""
    if spec == "syntax":
        return SyntaxVerifier()
    if spec in ("lint", "lint:ruff", "lint:pylint"):
        return LintVerifier(spec.partition(":")[2] or "ruff")
    kind, _, count = spec.partition(":")
    if kind in ("tests", "suite") and count.isdigit() and judge is not None:
        return TestsVerifier(judge, int(count), suite=kind == "suite")
    raise BadInput(f"unknown --prune filter {spec!r}: use syntax, lint, lint:pylint, tests:N or suite:N")
