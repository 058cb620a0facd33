"""Library side of the execution-core CLI commands (`check`, `trace`): load inputs, run, print.

Kept out of cli.py so the CLI stays a thin layer of options, and so `solidcoder --help` imports nothing heavy.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.execution.trace import TraceResult, trace_program
from solidcoder.problem import load_problem


def read_source(path: Path, what: str = "program") -> str:
    """Read a Python file, turning every way it can be unusable into a one-line BadInput."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {what} file {path}: {exc}") from None
    try:
        compile(text, str(path), "exec")
    except SyntaxError as exc:
        raise BadInput(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    return text


def run_check(solution: Path, problem_path: Path, hidden: bool = False, as_json: bool = False) -> bool:
    """Judge a solution file on a problem file's tests; print verdicts; True when all pass."""
    problem = load_problem(problem_path)
    code = read_source(solution, "solution")
    tests = problem.public_tests + (problem.hidden_tests if hidden else [])
    if not tests:
        raise BadInput(f"{problem_path}: problem {problem.id!r} has no tests to run")
    with SandboxPool(SandboxConfig(workers=min(len(tests), 4))) as pool:
        report = Judge(pool).judge(problem, code, tests)
    if as_json:
        print(json.dumps(_report_json(problem.id, report), indent=2))
    else:
        _print_report(problem.id, report)
    return report.passed


def _report_json(problem_id: str, report: JudgeReport) -> dict:
    verdicts = [{"index": v.index, "status": v.status, "detail": v.detail, "wall_s": round(v.wall_s, 4)}
                for v in report.verdicts]
    return {"problem": problem_id, "passed": report.passed, "pass_count": report.pass_count,
            "total": report.total, "infrastructure_error": report.infrastructure_error, "verdicts": verdicts}


def _print_report(problem_id: str, report: JudgeReport) -> None:
    # Details quote program output and ids come from files: never markup, so "[/bold]" prints as it is.
    table = Table(title=escape(f"{problem_id}: {report.pass_count}/{report.total} passed"))
    for column in ("test", "verdict", "detail"):
        table.add_column(column)
    for v in report.verdicts:
        table.add_row(str(v.index), Text(v.status, style="green" if v.passed else "red"), Text(v.detail[:200]))
    Console().print(table)


def run_trace(program: Path, stdin: Path | None = None, call: str | None = None, as_json: bool = False) -> bool:
    """Trace a program file once; print final values per scope; True when it ran to completion."""
    code = read_source(program)
    if stdin is not None and call is not None:
        raise BadInput("give either --stdin or --call, not both")
    data = _read_stdin_file(stdin) if stdin is not None else ""
    if call is not None:
        _check_call(call)
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        result = trace_program(pool, code, data, call, Limits(wall_s=10.0))
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
        compile(call, "--call", "eval")
    except SyntaxError as exc:
        raise BadInput(f"--call is not a Python expression: {exc.msg}: {call!r}") from None


def _print_trace(result: TraceResult) -> None:
    console = Console()
    if result.error:
        console.print(f"[red]the program raised[/red]: {escape(result.error)}")
        return
    for scope, values in result.scopes.items():
        console.print(f"[bold]{escape(scope)}[/bold]")
        for name, value in values.items():
            console.print(f"  {name} = {value!r}", markup=False, highlight=False)
