"""The `solidcoder` command line: parse options, call the library, print results.

Every command is thin. Bad input raises `BadInput`, which `main` turns into one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from solidcoder.errors import BadInput

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Make language models write correct code.")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


@app.command()
def check(
    solution: Annotated[Path, typer.Argument(help="Python file with the candidate solution.")],
    problem: Annotated[Path, typer.Option("--problem", help="Problem JSON file (see docs/problem-schema.md).")],
    hidden: Annotated[bool, typer.Option("--hidden", help="Also run the hidden tests.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print verdicts as JSON.")] = False,
) -> None:
    """Judge SOLUTION against the problem's tests; exit 0 only when every test passes."""
    from solidcoder.commands import run_check

    try:
        ok = run_check(solution, problem, hidden=hidden, as_json=as_json)
    except BadInput as exc:
        raise _fail(str(exc)) from None
    raise typer.Exit(0 if ok else 1)


@app.command()
def trace(
    program: Annotated[Path, typer.Argument(help="Python file to run.")],
    stdin: Annotated[Path | None, typer.Option("--stdin", help="File fed to the program's standard input.")] = None,
    call: Annotated[str | None, typer.Option("--call", help='A call to make after loading, e.g. "f(1, 2)".')] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print final values as JSON.")] = False,
) -> None:
    """Run PROGRAM once in the sandbox and print each variable's final value, per scope."""
    from solidcoder.commands import run_trace

    try:
        ok = run_trace(program, stdin=stdin, call=call, as_json=as_json)
    except BadInput as exc:
        raise _fail(str(exc)) from None
    raise typer.Exit(0 if ok else 1)


# --- commands added by later work go above this line ---


def main() -> None:  # pragma: no cover - thin wrapper for `python -m solidcoder`
    app(prog_name="solidcoder")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
