"""docs/cli.md agrees with the CLI, and help names what the code accepts.

Each row of the docs' flag table (`--workers N` ... `solve, bench, train coderl+`) must be, value name included, on
exactly the commands the row lists (a group there, `train`, stands for all its commands); `--strategy` help on `solve`
and `bench` must name every registered strategy, and `--dataset` help every registered dataset, built from the
registries and still cheap to import.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from solidcoder.cli import app
from solidcoder.datasets import dataset_names
from solidcoder.strategies import strategy_names

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
ROW = re.compile(r"\| `(--[\w-]+) ?([^`]*)` \|.*\| ([^|]+) \|")


def leaves(command, path: str = "") -> dict:
    """{command path: command} for every command (not group) under `command`."""
    if not hasattr(command, "commands"):  # typer ships its own click, so no isinstance
        return {path: command}
    return {p: c for name, sub in command.commands.items() for p, c in leaves(sub, f"{path} {name}".strip()).items()}


COMMANDS = leaves(typer.main.get_command(app))


def commands_under(name: str) -> set[str]:
    """The command `name` ("train orm"), or every command of the group `name` ("train")."""
    found = {path for path in COMMANDS if path == name or path.startswith(name + " ")}
    assert found, f"docs/cli.md names a command the CLI does not have: {name!r}"
    return found


def doc_rows() -> list[tuple[str, str, set[str]]]:
    """(flag, value name, commands) for each row of the docs' flag table; notes in brackets are dropped."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if match := ROW.fullmatch(line):
            flag, value, where = match.groups()
            names = re.sub(r"\([^)]*\)", "", where).split(",")
            rows.append((flag, value, set().union(*(commands_under(n.strip()) for n in names))))
    return rows


def commands_with(flag: str, value: str) -> set[str]:
    """The commands with the option `flag` whose help names its value `value` ("" for a flag that takes none)."""
    return {path for path, command in COMMANDS.items()
            for param in command.params if flag in getattr(param, "opts", []) and param.metavar == value}


def option_help(command: str, flag: str) -> str:
    return next(param.help for param in COMMANDS[command].params if flag in getattr(param, "opts", []))


def test_the_docs_table_has_its_rows():
    rows = doc_rows()
    assert len(rows) >= 15 and {"--model", "--workers", "--run-dir"} <= {flag for flag, _, _ in rows}
    assert len({(flag, value) for flag, value, _ in rows}) == len(rows)


@pytest.mark.parametrize(("flag", "value", "listed"), doc_rows(), ids=lambda x: x if isinstance(x, str) else "")
def test_each_documented_flag_is_on_exactly_the_commands_the_docs_list(flag, value, listed):
    assert commands_with(flag, value) == listed


def test_train_takes_a_plain_model_and_solve_and_bench_take_roles():
    assert commands_with("--model", "[ROLE=]MODEL") == {"solve", "bench"}
    assert commands_with("--model", "MODEL") == {"train coderl+", "train orm"}


@pytest.mark.parametrize("command", ["solve", "bench"])
def test_strategy_help_names_every_strategy(command):
    words = set(re.findall(r"[\w+-]+", option_help(command, "--strategy")))
    assert set(strategy_names()) - words == set()


def test_dataset_help_names_every_dataset_and_subset_help_every_subset():
    assert set(dataset_names()) - set(re.findall(r"[\w+-]+", option_help("bench", "--dataset"))) == set()
    assert {"apps150", "codecontests165"} <= set(re.findall(r"[\w+-]+", option_help("bench", "--subset")))


def test_solve_strategy_help_as_printed_names_every_strategy():
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "solidcoder", "solve", "-h"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert set(strategy_names()) - set(re.findall(r"[\w+-]+", done.stdout)) == set()


def test_the_cli_imports_no_strategy_machinery_to_show_help():
    code = "import sys, solidcoder.cli\nprint(' '.join(sorted(m for m in sys.modules if m.startswith('solidcoder'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    cli = {"solidcoder.cli", "solidcoder.cli.help", "solidcoder.cli.options", "solidcoder.cli.prompts",
           "solidcoder.cli.train"}
    light = {"solidcoder", "solidcoder.errors", "solidcoder.escaping", "solidcoder.strategies",
             "solidcoder.wording"}  # escaping: re, html; wording: plurals, no imports
    # the registries help is built from, and what their entries name (settings' option names, requirements)
    registries = {"solidcoder.strategies.registry", "solidcoder.strategies.paper_settings", "solidcoder.requirements",
                  "solidcoder.datasets", "solidcoder.datasets.registry", "solidcoder.languages"}
    assert set(done.stdout.split()) <= light | cli | registries
