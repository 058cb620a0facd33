"""The sandbox's trust boundary is a folder: what runs inside it (`execution/inside/`) never imports the host side.

The zygote and every process it clones import only `execution/inside/`, the standard library and the bottom layer
(`matching`, `parsing`); the host's pool starts the zygote by that folder's module path.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import solidcoder
from solidcoder.execution.inside import rootfs, zygote

PACKAGE = Path(solidcoder.__file__).parent
INSIDE = PACKAGE / "execution" / "inside"
BOTTOM = ("solidcoder.matching", "solidcoder.parsing", "solidcoder.errors")


def _solidcoder_imports(path: Path) -> set[str]:
    """Every solidcoder module a file imports, at any depth (inside functions and `TYPE_CHECKING` blocks too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            found.add(node.module)
    return {name for name in found if name == "solidcoder" or name.startswith("solidcoder.")}


def _allowed(name: str) -> bool:
    return name.startswith("solidcoder.execution.inside") or name in BOTTOM


@pytest.mark.parametrize("path", sorted(INSIDE.glob("*.py")), ids=lambda path: path.name)
def test_code_inside_the_sandbox_imports_nothing_from_the_host_side(path):
    assert sorted(name for name in _solidcoder_imports(path) if not _allowed(name)) == []


@pytest.mark.parametrize("module", ["solidcoder.matching", "solidcoder.parsing"])
def test_the_bottom_layer_the_sandbox_imports_stays_at_the_bottom(module):
    path = PACKAGE / (module.split(".")[1] + ".py")
    assert sorted(name for name in _solidcoder_imports(path) if name not in BOTTOM) == []


def test_the_checkouts_files_beside_the_package_are_hidden_from_the_sandbox():
    """`rootfs` finds the checkout from its own place in the package; a checkout inside a shown path (a virtualenv's
    prefix) would otherwise show the tests and benchmark results to every run."""
    checkout = PACKAGE.parent
    assert (checkout / "pyproject.toml").is_file(), "these tests run from a checkout"
    hidden = set(rootfs.hidden_paths())
    beside = {str(path.resolve()) for path in checkout.iterdir() if path.name != "solidcoder"}
    assert {str(checkout / "tests"), str(checkout / "benchmarks")} <= beside <= hidden
    assert not any(path == str(PACKAGE) or path.startswith(str(PACKAGE) + "/") for path in hidden)


def test_the_pool_starts_the_zygote_from_inside_the_boundary():
    worker = (PACKAGE / "execution" / "worker.py").read_text(encoding="utf-8")
    assert f'"-m", "{zygote.__name__}"' in worker and zygote.__name__ == "solidcoder.execution.inside.zygote"
