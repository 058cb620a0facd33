"""A program ready to run on standard input, in its language (`languages.py`): built once per source, then run.

Python needs no step: its job is the sandbox's `stdio` run. A compiled language is built in the sandbox (the
`build` job: the compiler inside the run's confinement, with the language's own limits) and its binary is kept
by source hash for the executor's lifetime (one run), so the public tests, the hidden tests and every later
judgement of the same program do not compile again. The binary then runs as an `exec` job. An interpreted
language (JavaScript) runs its source as an `exec` job.

`prepare` is a judging plan's step (`yield from`, see `judge.py`); `aprepare` the same for a caller on the event
loop. A build that fails is the program's fault, a `compile_error` with the compiler's first lines; a sandbox that
fails raises `SandboxFailure`.
"""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Generator, Sequence
from dataclasses import dataclass

from solidcoder.errors import SandboxFailure
from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import ExecResult, Limits
from solidcoder.languages import Language, language
from solidcoder.problem import Problem

COMPILE_ERROR = "compile_error"
MAX_ERROR_LINES, MAX_ERROR_CHARS = 12, 1500  # of the compiler's diagnostics, in verdicts and debug prompts
KEPT_BUILDS = 64  # binaries kept per executor (up to 2 MB each), least recently used dropped

Step = Generator[list[tuple[dict, str, Limits]], list[ExecResult], "Program"]


@dataclass(frozen=True)
class Program:
    """A source made runnable: `job` runs it on one input (None when it did not build); `error` the build's failure
    in the compiler's words; `build_s` the build's wall time (0 when none ran: Python, or a kept binary)."""

    language: str
    job: dict | None
    error: str = ""
    build_s: float = 0.0

    @property
    def built(self) -> bool:
        return self.job is not None


_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def prepare(pool: Executor, language: Language, code: str) -> Step:
    """The runnable `code`: for a compiled language, yields the build job once per source and executor."""
    if language.build is None:
        return Program(language.name, _run_job(language, code))
    kept = _kept(pool)
    key = hashlib.sha256(f"{language.name}\0{language.build!r}\0{code}".encode()).hexdigest()  # flags, limits too
    if key in kept:
        kept.move_to_end(key)
        return kept[key]
    (result,) = yield [(build_job(language, code), "", build_limits(language))]
    program = _built(language, result)
    kept[key] = program
    while len(kept) > KEPT_BUILDS:
        kept.popitem(last=False)
    return program


async def aprepare(pool: Executor, language: Language, code: str) -> Program:
    """`prepare`, its build awaited on the executor."""
    step = prepare(pool, language, code)
    try:
        jobs = next(step)
        while True:
            jobs = step.send([await pool.arun(*job) for job in jobs])
    except StopIteration as done:
        return done.value


def not_compiling(failures: Sequence) -> str:
    """How a debugging prompt reports a program that did not build (its first failing test a `compile_error`, as
    every test of it is): the compiler's first lines, once; "" for a program that built."""
    if not failures or failures[0].status != COMPILE_ERROR:
        return ""
    return f"The program does not compile. The compiler says:\n{failures[0].detail}"


def run_limits(problem: Problem) -> Limits:
    """The limits of one run of `problem`'s program on one input: its language's time rule over the dataset's limit,
    the problem's memory limit. Every stage that runs the candidate (judge, live execution, debugging) uses these."""
    return Limits(wall_s=language(problem.language).time_limit_s(problem.time_limit_s),
                  memory_mb=problem.memory_limit_mb)


def build_job(language: Language, code: str) -> dict:
    assert language.build is not None
    return {"mode": "build", "code": code, "source": language.source, "command": list(language.build.command),
            "output": language.build.output}


def build_limits(language: Language) -> Limits:
    build = language.build
    assert build is not None
    return Limits(wall_s=build.wall_s, memory_mb=build.memory_mb, max_processes=build.max_processes,
                  max_file_mb=build.max_file_mb, max_output_bytes=build.max_output_kb << 10)


def _run_job(language: Language, code: str, binary: bytes = b"") -> dict:
    if not language.native:
        return {"mode": "stdio", "code": code}
    if language.build is None:
        return {"mode": "exec", "code": code, "source": language.source, "command": list(language.run)}
    return {"mode": "exec", "code": None, "binary": binary, "digest": hashlib.sha256(binary).hexdigest(),
            "source": language.build.output, "command": list(language.run)}


def _built(language: Language, result: ExecResult) -> Program:
    if result.status == "sandbox_error":
        raise SandboxFailure(result.detail)
    if result.ok and result.exit_code == 0 and result.artifact:
        return Program(language.name, _run_job(language, "", result.artifact), build_s=result.wall_s)
    return Program(language.name, None, _build_failure(language, result), build_s=result.wall_s)


def _build_failure(language: Language, result: ExecResult) -> str:
    build = language.build
    assert build is not None
    limits = {"timeout": f"compilation took longer than {build.wall_s:g} s",
              "memory_limit": f"compilation used more than {build.memory_mb} MB",
              "output_limit": f"the compiler wrote more than {build.max_output_kb} KB of diagnostics"}
    lines = result.stderr.strip().splitlines()[:MAX_ERROR_LINES]
    text = "\n".join(lines)[:MAX_ERROR_CHARS]
    return "\n".join(part for part in (limits.get(result.status, ""), text) if part) or "compilation failed"


def _kept(pool: Executor) -> OrderedDict:
    try:
        return _KEPT.setdefault(pool, OrderedDict())
    except TypeError:  # an executor that cannot be weakly referenced keeps nothing
        return OrderedDict()
