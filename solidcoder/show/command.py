"""`solidcoder show PATH [--problem ID] [--full] [--json]`: the library side of the command.

What a run recorded is shown safely: the terminal views through `terminal_safe` (show/terminal.py), `--json` with
its control and bidirectional characters written as `\\uXXXX` (`json_safe`: the same data), errors by the CLI's one
`BadInput` handler."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from solidcoder.escaping import json_safe
from solidcoder.show.load import find, load_run
from solidcoder.show.views import ProblemView, trimmed


def run_show(path: Path, problem: str | None = None, full: bool = False, as_json: bool = False) -> None:
    """Print the run's listing, or one problem's tree (every configuration that ran it); BadInput for a path that is
    no run directory, trajectory file or parent of run directories, or a problem the run does not have. A parent's
    listing has every run under it."""
    run = load_run(path)
    if problem is None:
        _print_listing(run.lines(), as_json)
        return
    views = [view if full else trimmed(view) for view in find(run, problem)]
    _print_problem(views, as_json)


def _print_listing(lines, as_json: bool) -> None:
    from solidcoder.show.terminal import console, listing

    if as_json:
        print(json_safe(json.dumps([asdict(line) for line in lines], indent=1, ensure_ascii=False)))
    else:
        console().print(listing(lines))


def _print_problem(views: list[ProblemView], as_json: bool) -> None:
    from solidcoder.show.terminal import console, tree

    if as_json:
        print(json_safe(json.dumps([view.to_dict() for view in views], indent=1, ensure_ascii=False)))
        return
    out = console()
    for view in views:
        out.print(tree(view))
