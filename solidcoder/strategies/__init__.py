"""Code-generation strategies behind one `Strategy` protocol: the baselines (AlphaCodium among them) and SolidCoder.

`make_strategy(name)` builds one by name from its entry in the registry (`registry.py`: one `StrategySpec` a
strategy, which `--strategy` help and docs/benchmarks.md are read from too); `strategy_names()` lists them.
`solidcoder` is the paper's Algorithm 1 (`algorithm1.py`); `solidcoder+` is the same loop with the project's
recommended refinements (a preset). Both have ablations `<name>_no_<component>` for shift_left, simulation,
oracle, live, defensive, and take refinements as named options after a colon (`solidcoder:candidates=3,monotonic`).
`direct` is greedy; `direct:sampled` samples at the model's default temperature, `direct:n=5` is best-of-n
(`simple.py`).
`solidcoder-routed` (what `solve` runs by default) tries a direct program, then ranked samples, then the
`solidcoder+` loop (`routed.py`), with its own options (`solidcoder-routed:samples=3,max_tier=1`).

Importing this package is cheap (the CLI builds its help from the registry): the strategies, and the names
re-exported here (`Attempt`, `SolveContext`, `Strategy`, `extract_code`), are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from solidcoder.strategies.registry import find_spec, strategy_names

if TYPE_CHECKING:
    from solidcoder.strategies.base import Strategy

# Re-exported names and the modules they come from; every strategy reads replies alike (`extract_code`).
_REEXPORTS = {"SolveContext": "solidcoder.core.context", "extract_code": "solidcoder.stages.base",
              "Attempt": "solidcoder.strategies.base", "Strategy": "solidcoder.strategies.base"}


def make_strategy(name: str) -> Strategy:
    """The strategy called `name` (dashes and underscores are the same in the name, not in its options): its
    registry entry builds it (`registry.py`)."""
    return find_spec(name).build(name)


def __getattr__(name: str) -> Any:
    """A re-exported name, imported when first asked for (PEP 562)."""
    if name not in _REEXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_REEXPORTS[name]), name)


__all__ = ["Attempt", "SolveContext", "Strategy", "extract_code", "make_strategy", "strategy_names"]
