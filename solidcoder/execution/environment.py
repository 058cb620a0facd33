"""The benchmark environment: which third-party modules a candidate program may import when a benchmark judges it.

A dataset's own harness runs a program in a plain Python with few packages beside the standard library; this
machine's Python has hundreds (torch and what it pulls in: sympy, networkx, ...). A program that imports one of
those passes here and fails there, so `bench` shows the sandbox only `BENCHMARK_MODULES` of the installed third-party
modules (`SandboxConfig.third_party`), and `plain_python` runs plain Python in the same environment for the checks
that compare the judge with it (`benchmarks/plain_python_rejudge.py`, `tests/test_plain_python_agreement.py`).
`solve` and `check` judge in the user's own environment: every installed module.

An installed module is a top-level entry of an import path that is a site-packages folder (a package folder, a
`.py` file or an extension module); one is listed when its name, up to the first `.` or `-`, is in the list
(`numpy`, `numpy.libs` and `numpy-2.4.6.dist-info` for `numpy`). The sandbox's own package and the `.pth` hooks
the interpreter ran at start stay.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

# The third-party modules a benchmark's candidate may import: numpy, which EvalPlus's and LiveCodeBench's evaluation
# environments install. Nothing else: the standard library is the environment HumanEval, MBPP, APPS and
# CodeContests were written for.
BENCHMARK_MODULES = ("numpy",)
_ALWAYS = ("solidcoder", "_distutils_hack", "__pycache__")  # the sandbox's own code, the interpreter's start-up hooks


def module_name(entry: str) -> str:
    """The module name an import-path entry provides (`numpy.libs` -> `numpy`, `six.py` -> `six`)."""
    return entry.split(".")[0].split("-")[0]


def site_folders(paths: list[str] | None = None) -> list[str]:
    """The import paths (default `sys.path`) that are site-packages or dist-packages folders."""
    found = [os.path.realpath(p) for p in (sys.path if paths is None else paths) if p]
    return sorted({p for p in found if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.isdir(p)})


def unlisted_modules(allowed: tuple[str, ...], paths: list[str] | None = None) -> list[str]:
    """Every third-party module entry of the site folders whose module is not in `allowed` (module docstring)."""
    kept = {*allowed, *_ALWAYS}
    return [os.path.join(folder, entry) for folder in site_folders(paths) for entry in sorted(os.listdir(folder))
            if not entry.endswith(".pth") and module_name(entry) not in kept]


@contextlib.contextmanager
def plain_python(allowed: tuple[str, ...] = BENCHMARK_MODULES) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The command and environment of a plain Python that imports the standard library and `allowed` only: `-S`
    (no site folders, no `.pth` hooks) and a PYTHONPATH folder holding links to the allowed modules' entries."""
    with tempfile.TemporaryDirectory(prefix="solidcoder-env-") as folder:
        for site in site_folders():
            for entry in os.listdir(site):
                if module_name(entry) in allowed and not os.path.lexists(os.path.join(folder, entry)):
                    os.symlink(os.path.join(site, entry), os.path.join(folder, entry))
        env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
        yield [sys.executable, "-S"], env | {"PYTHONPATH": folder}
