"""Library side of the execution-core CLI commands (`check`, `trace`): load inputs, run, print.

Kept out of cli/ so the CLI stays a thin layer of options, and so `solidcoder --help` imports nothing heavy.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from solidcoder.errors import BadInput
from solidcoder.escaping import terminal_safe
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.execution.trace import TraceResult, trace_program
from solidcoder.languages import by_suffix, for_problem, language
from solidcoder.parsing import compile_source
from solidcoder.problem import Problem, load_problem


def read_source(path: Path, what: str = "program", python: bool = True) -> str:
    """Read a program file, turning every way it can be unusable into a one-line BadInput; a Python file must
    compile (another language's build is its verdict: `compile_error`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {what} file {path}: {exc}") from None
    if python:
        try:
            compile_source(text, str(path))
        except SyntaxError as exc:
            raise BadInput(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    return text


@dataclass(frozen=True)
class CheckedTest:
    """One test's line in `check`'s report; `hidden` for a test from the problem's hidden set."""

    index: int
    hidden: bool
    status: str
    detail: str
    wall_s: float


def run_check(solution: Path, problem_path: Path, hidden: bool = False, as_json: bool = False) -> bool:
    """Judge a solution file on a problem file's tests; print verdicts; True when all pass."""
    problem = in_file_language(load_problem(problem_path), solution, problem_path)
    code = read_source(solution, "solution", python=not language(problem.language).native)
    tests = problem.public_tests + (problem.hidden_tests if hidden else [])
    if not tests:
        raise BadInput(f"{problem_path}: problem {problem.id!r} has no tests to run")
    # the problem file holds the hidden tests: no run may read it
    with SandboxPool(SandboxConfig(workers=min(len(tests), 4), hidden_paths=(str(problem_path),))) as pool:
        report = Judge(pool).judge(problem, code, tests)
    rows = [CheckedTest(v.index, v.index >= len(problem.public_tests), v.status, v.detail, round(v.wall_s, 4))
            for v in report.verdicts]
    if as_json:
        print(json.dumps(_report_json(problem.id, report, rows), indent=2))
    else:
        _print_report(problem.id, report, rows)
    return report.passed


def in_file_language(problem: Problem, solution: Path, problem_path: Path) -> Problem:
    """`problem` judged in the language of the solution file's suffix (`.cpp` C++, `.js` JavaScript, `.py` Python;
    any other suffix: the problem's own `language`); BadInput for a call problem in a language other than Python or
    a toolchain not installed."""
    entry = by_suffix(solution.name)
    if solution.suffix.lower() not in entry.suffixes:
        return problem
    where = f"{solution}: a {entry.name} program, but {problem_path}"
    return replace(problem, language=for_problem(entry.name, problem.kind, where).name)


def _report_json(problem_id: str, report: JudgeReport, rows: list[CheckedTest]) -> dict:
    return {"problem": problem_id, "passed": report.passed, "pass_count": report.pass_count,
            "total": report.total, "infrastructure_error": report.infrastructure_error,
            "verdicts": [asdict(row) for row in rows]}


def _print_report(problem_id: str, report: JudgeReport, rows: list[CheckedTest]) -> None:
    # Details quote program output and ids come from files: never markup, so "[/bold]" prints as it is. Long text
    # wraps (a word longer than the column folds) instead of ending in an ellipsis.
    table = Table(title=Text(terminal_safe(f"{problem_id}: {report.pass_count}/{report.total} passed")))
    for column in ("test", "set", "verdict"):
        table.add_column(column, overflow="fold")
    table.add_column("detail", overflow="fold", ratio=1)
    for row in rows:
        table.add_row(str(row.index), "hidden" if row.hidden else "public",
                      Text(row.status, style="green" if row.status == "pass" else "red"), Text(_shown(row.detail)))
    Console().print(table)


def _shown(detail: str, limit: int = 2000) -> str:
    """The detail as the table shows it: whole up to `limit` characters (--json always has all of it), its control
    characters made visible."""
    return terminal_safe(detail if len(detail) <= limit else f"{detail[:limit]} [{len(detail) - limit} more "
                         "characters]")


def run_trace(program: Path, stdin: Path | None = None, call: str | None = None, as_json: bool = False) -> bool:
    """Trace a program file once; print final values per scope; True when it ran to completion."""
    if by_suffix(program.name).native:
        raise BadInput(f"{program}: trace runs Python programs only (its tracer is Python's)")
    code = read_source(program)
    if stdin is not None and call is not None:
        raise BadInput("give either --stdin or --call, not both")
    data = _read_stdin_file(stdin) if stdin is not None else ""
    if call is not None:
        _check_call(call)
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        result = trace_program(pool, code, data, call, Limits(wall_s=10.0), filename=str(program))
    if as_json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        _print_trace(result)
    return result.ok


def _read_stdin_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"cannot read --stdin file {path}: {exc.strerror or exc}") from None


def _check_call(call: str) -> None:
    try:
        compile_source(call, "--call", "eval")
    except SyntaxError as exc:
        raise BadInput(f"--call is not a Python expression: {exc.msg}: {call!r}") from None


def _print_trace(result: TraceResult) -> None:
    """Variables per scope (at the crash when it raised), the call's value, stdout, then the error and traceback.
    Everything here is the program's text: printed without markup."""
    console = Console(highlight=False)
    if result.error and result.scopes:
        console.print("variables at the crash:", style="bold")
    for scope, values in result.scopes.items():
        console.print(Text(terminal_safe(scope), style="bold"))
        for name, value in values.items():
            console.print(Text(terminal_safe(f"  {name} = {value!r}")))
    if result.returned is not None:
        console.print(Text(terminal_safe(f"returned: {result.returned.repr} ({result.returned.type})")))
    console.print(Text(terminal_safe("stdout:" + ("\n" + result.stdout.rstrip("\n") if result.stdout else
                                                  " (nothing)"))))
    _print_error(console, result)


def _print_error(console: Console, result: TraceResult) -> None:
    if result.exception is not None:
        console.print(Text("Traceback (most recent call last):"))
        for frame in result.exception.frames:
            console.print(Text(terminal_safe(f"  {frame.file}:{frame.line} in {frame.function}: {frame.source}"
                                             .rstrip(": "))))
        console.print(Text.assemble(("the program raised ", "red"), terminal_safe(result.exception.headline)))
    elif result.error:
        console.print(Text.assemble(("the program did not finish: ", "red"), terminal_safe(result.error)))
