"""What a configuration needs installed beyond Python, checked when a command starts, before any model call.

A strategy or a pruning filter that uses a tool run as a module (the ruff linter, `python -m ruff`) or an optional
package (pylint) names it as a `Requirement`. Commands gather the requirements of everything the run will use and
call `check_installed` before they touch a model or a run directory, so a missing tool is bad input (exit 2,
naming it), not a failure half-way through a paid run. `distribution` is the PyPI distribution that brings the tool: a
test checks that every default path needs only the package's base dependencies.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass

from solidcoder.errors import BadInput


@dataclass(frozen=True)
class Requirement:
    """A Python module (`name` as imported), the distribution that installs it, and how to install that."""

    name: str
    distribution: str
    install: str

    def present(self) -> bool:
        return importlib.util.find_spec(self.name) is not None


def check_installed(requirements: Iterable[Requirement], user: str) -> None:
    """BadInput naming the first missing requirement and what `user` (e.g. "--strategy X") needs it for."""
    for requirement in requirements:
        if not requirement.present():
            raise BadInput(f"{user} needs {requirement.name}, which is not installed: {requirement.install}")


RUFF = Requirement("ruff", "ruff", "pip install ruff (a dependency of solidcoder: reinstall it)")
PYLINT = Requirement("pylint", "pylint", "pip install pylint")
RAY = Requirement("ray", "ray", "pip install 'solidcoder[dist]'")
TRANSFORMERS = Requirement("transformers", "transformers", "pip install 'solidcoder[train]' (an ORM scores with it)")
