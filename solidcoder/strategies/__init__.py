"""Code-generation strategies behind one `Strategy` protocol: the baselines (AlphaCodium among them) and SolidCoder.

`make_strategy(name)` builds one by name; `STRATEGIES` lists the names the CLI accepts. `solidcoder` is the
paper's Algorithm 1 (`algorithm1.py`); `solidcoder+` is the same loop with the project's recommended refinements
(a preset). Both have ablations `<name>_no_<component>` for shift_left, simulation, oracle, live, defensive, and
take refinements as named options after a colon (`solidcoder:candidates=3,monotonic`). `direct` is greedy;
`direct:sampled` samples at the model's default temperature, `direct:n=5` is best-of-n (`simple.py`).
`solidcoder-routed` (what `solve` runs by default) tries a direct program, then ranked samples, then the
`solidcoder+` loop (`routed.py`), with its own options (`solidcoder-routed:samples=3,max_tier=1`).

Importing this package is cheap (the CLI builds its help from `STRATEGIES`): the strategies, and the names re-exported
here (`Attempt`, `SolveContext`, `Strategy`, `extract_code`), are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from solidcoder.errors import BadInput

if TYPE_CHECKING:
    from solidcoder.strategies.base import Strategy

# Re-exported names and the modules they come from; every strategy reads replies alike (`extract_code`).
_REEXPORTS = {"SolveContext": "solidcoder.core.context", "extract_code": "solidcoder.stages.base",
              "Attempt": "solidcoder.strategies.base", "Strategy": "solidcoder.strategies.base"}

ONE_CALL = ("direct", "cot", "self_planning", "analogical")
# plus <name>_no_<part> ablations of solidcoder and solidcoder+
STRATEGIES = (*ONE_CALL, "mapcoder", "codesim", "alphacodium", "solidcoder", "solidcoder+", "solidcoder-routed", "ldb")


def make_strategy(name: str) -> Strategy:
    """The strategy called `name` (dashes and underscores are the same in the name, not in its options)."""
    key = name.replace("-", "_")
    family = key.partition(":")[0]  # options follow a colon: solidcoder:candidates=3,monotonic
    if family == "direct":
        from solidcoder.strategies.simple import Direct, parse_direct

        return Direct(parse_direct(name.partition(":")[2]))
    if key in ONE_CALL:
        from solidcoder.strategies.simple import OneCallStrategy

        return OneCallStrategy(key)
    if key == "mapcoder":
        from solidcoder.strategies.multi import MapCoder

        return MapCoder()
    if key == "codesim":
        from solidcoder.strategies.multi import CodeSim

        return CodeSim()
    if key == "alphacodium":
        from solidcoder.strategies.alphacodium import AlphaCodium

        return AlphaCodium()
    if family == "ldb":
        from solidcoder.strategies.ldb import Ldb, parse_ldb

        return Ldb(parse_ldb(name.partition(":")[2]))
    if family == "solidcoder_routed":
        from solidcoder.strategies.routed import Routed, parse_routed

        return Routed(parse_routed(name.partition(":")[2]))  # as given: an option's value may be a path
    if family in ("solidcoder", "solidcoder+") or family.startswith(("solidcoder_no_", "solidcoder+_no_")):
        from solidcoder.strategies.algorithm1 import make_algorithm1

        return make_algorithm1(key)
    raise BadInput(f"unknown strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")


def __getattr__(name: str) -> Any:
    """A re-exported name, imported when first asked for (PEP 562)."""
    if name not in _REEXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_REEXPORTS[name]), name)


__all__ = ["STRATEGIES", "Attempt", "SolveContext", "Strategy", "extract_code", "make_strategy"]
