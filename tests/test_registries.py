"""The strategy and dataset registries are the one list: make_strategy builds every entry as declared, the docs'
tables are the registries', and a new strategy is one entry (a toy one, registered here, shows in help, in the
docs' table, and solves a problem through `solve`)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_server import reply
from stage_router import GOOD
from test_cli_solve import ADD_TXT
from toy_strategy import TOY, TOY_HELP, Toy

from solidcoder.datasets.registry import dataset_names, dataset_spec, dataset_specs, dataset_table, find_subset
from solidcoder.errors import BadInput
from solidcoder.strategies import make_strategy
from solidcoder.strategies.registry import (
    register,
    strategy_help,
    strategy_names,
    strategy_specs,
    strategy_table,
    unregister,
)

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DOC = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
# The CLI with the toy strategy registered first, as a program that adds a strategy of its own would run it.
WITH_TOY = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); from toy_strategy import TOY; "
            "from solidcoder.strategies.registry import register; register(TOY); "
            "from solidcoder.cli import main; main()")


@pytest.fixture
def toy():
    register(TOY)
    try:
        yield TOY
    finally:
        unregister(TOY.name)


def test_the_docs_strategy_table_is_the_registrys():
    assert strategy_table() in DOC, f"docs/benchmarks.md's strategy table should read:\n{strategy_table()}"
    for spec in strategy_specs():
        assert f"| `{spec.name}` | {spec.help} |" in DOC


def test_the_docs_dataset_table_is_the_registrys():
    assert dataset_table() in DOC, f"docs/benchmarks.md's dataset table should read:\n{dataset_table()}"
    for spec in dataset_specs():
        assert f"| {spec.name} | {spec.help} |" in DOC


@pytest.mark.parametrize("spec", strategy_specs(), ids=lambda spec: spec.name)
def test_each_strategy_builds_under_its_name_and_needs_what_it_declares(spec):
    strategy = make_strategy(spec.name)
    assert strategy.name == spec.name
    assert set(strategy.requires) == set(spec.requires)


@pytest.mark.parametrize("spec", [s for s in strategy_specs() if s.options], ids=lambda spec: spec.name)
def test_the_declared_options_are_the_ones_its_parser_knows(spec):
    with pytest.raises(BadInput) as raised:
        make_strategy(f"{spec.name}:no_such_option")
    assert [option for option in spec.options if option not in str(raised.value)] == []


@pytest.mark.parametrize("spec", [s for s in strategy_specs() if not s.options], ids=lambda spec: spec.name)
def test_a_strategy_without_options_is_not_named_with_a_colon(spec):
    with pytest.raises(BadInput, match="unknown strategy"):
        make_strategy(f"{spec.name}:x")


def test_a_name_taken_cannot_be_registered_again():
    with pytest.raises(ValueError, match="already registered"):
        register(strategy_specs()[0])


def test_a_registered_toy_strategy_is_in_help_the_docs_table_and_make_strategy(toy):
    assert "toy" in strategy_names() and "toy" in strategy_help().split("; ")[0].split(", ")
    assert f"| `toy` | {TOY_HELP} | - | - | - |" in strategy_table().splitlines()
    assert isinstance(make_strategy("toy"), Toy)
    with pytest.raises(BadInput, match="unknown strategy 'toy:n=2'"):
        make_strategy("toy:n=2")


def test_the_toy_is_gone_once_unregistered(toy):
    unregister(toy.name)
    try:
        assert "toy" not in strategy_help() and "`toy`" not in strategy_table()
        with pytest.raises(BadInput, match="unknown strategy 'toy'"):
            make_strategy("toy")
    finally:
        register(toy)  # the fixture removes it


@pytest.mark.parametrize("command", ["solve", "bench"])
def test_the_toy_is_in_the_clis_strategy_help(command):
    env = {**os.environ, "COLUMNS": "200"}
    plain = subprocess.run([sys.executable, "-m", "solidcoder", command, "-h"], capture_output=True, text=True,
                           timeout=60, cwd=REPO, env=env)
    done = subprocess.run([sys.executable, "-c", WITH_TOY, command, "-h"], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env=env)
    assert done.returncode == plain.returncode == 0, done.stderr
    assert "toy" in re.findall(r"[\w+-]+", done.stdout) and "toy" not in re.findall(r"[\w+-]+", plain.stdout)


def test_the_toy_solves_a_problem_through_solve(scripted_server, tmp_path):
    (tmp_path / "add.txt").write_text(ADD_TXT)
    scripted_server.script(reply(GOOD))
    command = [sys.executable, "-c", WITH_TOY, "solve", str(tmp_path / "add.txt"), "--strategy", "toy", "--model",
               "openai/scripted-model", "--api-base", scripted_server.url, "--run-dir", str(tmp_path / "run")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def add(a, b):") and "UNVERIFIED" not in done.stdout


def test_every_dataset_loader_names_the_hub_its_docs_give():
    for spec in dataset_specs():
        assert spec.loader().hub in spec.online, spec.name


def test_subsets_are_declared_per_dataset():
    assert find_subset("apps150", "apps").id_format == "apps-{}"
    assert find_subset("codecontests165", "codecontests").whole_split == 165
    with pytest.raises(BadInput, match="belongs to dataset apps, not codecontests"):
        find_subset("apps150", "codecontests")
    with pytest.raises(BadInput, match="unknown subset 'apps999'; known: apps150, codecontests165"):
        find_subset("apps999", "apps")
    assert [name for name in dataset_names() if dataset_spec(name).trace] == ["cruxeval", "cruxeval-vars"]


def test_the_problems_language_is_what_prompts_and_extraction_read():
    from solidcoder.languages import LANGUAGES
    from solidcoder.problem import Problem
    from solidcoder.prompting import problem_variables
    from solidcoder.stages.base import extract_code

    problem = Problem(id="p", kind="stdio", statement="Echo.")
    assert problem.language == "python" and problem_variables(problem)["language"] == LANGUAGES["python"].prompt_name
    reply = "```js\nconsole.log(1)\n```\n```py\nprint(1)\n```"
    assert extract_code(reply, problem.language) == "print(1)\n"
    with pytest.raises(ValueError, match="'language' must be one of"):
        extract_code(reply, "cobol")
