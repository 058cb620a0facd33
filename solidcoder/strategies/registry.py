"""The strategies `--strategy` names: one `StrategySpec` each, the one list `make_strategy`, the CLI's help and
docs/benchmarks.md's strategy table are read from.

Adding a strategy is its module, its templates (prompts/strategies/) and one entry in `BUILT_IN` (or, from outside
the package, `register(StrategySpec(...))`); tests/test_registries.py checks the docs' table against the registry.
Importing this module imports no strategy: an entry's `build` imports its strategy's module when it is called, so
the CLI shows help without loading any strategy machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from solidcoder.errors import BadInput
from solidcoder.requirements import RUFF, Requirement
from solidcoder.strategies.paper_settings import COMPONENTS, REFINEMENTS
from solidcoder.wording import markdown_table

if TYPE_CHECKING:
    from solidcoder.strategies.base import Strategy


@dataclass(frozen=True)
class StrategySpec:
    """A strategy as `--strategy` names it. `build` gets the name as given (options after a colon) and imports its
    module only then; `options` are the option names it takes after a colon (none: a name with a colon is not this
    strategy); `ablations` the parts `<name>_no_<part>` turns off; `requires` what it needs installed at its
    default options (the built strategy's `requires` says it for given options)."""

    name: str
    help: str
    build: Callable[[str], Strategy]
    options: tuple[str, ...] = ()
    ablations: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()

    def matches(self, name: str) -> bool:
        """Whether `name` (dashes and underscores alike before the colon) names this strategy or an ablation of
        it; an unknown ablation matches too, so that its builder names the known ones."""
        family, colon, _ = name.replace("-", "_").partition(":")
        key = self.name.replace("-", "_")
        if colon and not self.options:
            return False
        return family == key or bool(self.ablations) and family.startswith(f"{key}_no_")


def _options(name: str) -> str:
    """The options of a strategy name, as given: the text after its first colon (a value may be a path)."""
    return name.partition(":")[2]


def _direct(name: str) -> Strategy:
    from solidcoder.strategies.simple import Direct, parse_direct

    return Direct(parse_direct(_options(name)))


def _one_call(name: str) -> Strategy:
    from solidcoder.strategies.simple import OneCallStrategy

    return OneCallStrategy(name.replace("-", "_"))


def _mapcoder(name: str) -> Strategy:
    from solidcoder.strategies.multi import MapCoder

    return MapCoder()


def _codesim(name: str) -> Strategy:
    from solidcoder.strategies.multi import CodeSim

    return CodeSim()


def _alphacodium(name: str) -> Strategy:
    from solidcoder.strategies.alphacodium import AlphaCodium

    return AlphaCodium()


def _algorithm1(name: str) -> Strategy:
    from solidcoder.strategies.algorithm1 import make_algorithm1

    return make_algorithm1(name.replace("-", "_"))


def _routed(name: str) -> Strategy:
    from solidcoder.strategies.routed import Routed, parse_routed

    return Routed(parse_routed(_options(name)))


def _ldb(name: str) -> Strategy:
    from solidcoder.strategies.ldb import Ldb, parse_ldb

    return Ldb(parse_ldb(_options(name)))


ROUTED_OPTIONS = ("samples", "temperature", "full", "max_tier", "full_calls", "oracle", "selector", "orm",
                  "trace_feedback", "guard")
BUILT_IN = (
    StrategySpec("direct", "One call, greedy unless --temperature; `sampled`: the model's default temperature; `n=5`: "
                 "best-of-n, the first sample passing the public tests, else the behaviour majority; in the model "
                 "maker's own format (`prompt=qwen`: a prefilled fence, stop strings, EvalPlus's sanitizer) unless "
                 "`prompt=plain`", _direct,
                 options=("sampled", "n", "temperature", "prompt")),
    StrategySpec("cot", "One call: reason step by step, then code", _one_call),
    StrategySpec("self_planning", "One call: a short plan, then code that follows it", _one_call),
    StrategySpec("analogical", "One call: recall related problems, then solve this one", _one_call),
    StrategySpec("mapcoder", "MapCoder: k = 3 recalled problems, one plan each by confidence, t = 5 debug rounds per "
                 "plan on the public tests", _mapcoder),
    StrategySpec("codesim", "CodeSIM: p = 5 plan-and-simulate rounds, d = 5 simulation-debug rounds each", _codesim),
    StrategySpec("alphacodium", "AlphaCodium's flow: reflect, possible solutions, generated tests, code fixed on the "
                 "public then the generated tests (up to 30 calls: --max-calls 30 or none)", _alphacodium),
    StrategySpec("solidcoder", "The paper's Algorithm 1 (docs/pipeline.md), every call at temperature 0 unless "
                 "--temperature", _algorithm1, options=REFINEMENTS, ablations=COMPONENTS),
    StrategySpec("solidcoder+", "Algorithm 1 with the project's recommended refinements (a preset; routing's full "
                 "loop)", _algorithm1, options=REFINEMENTS, ablations=COMPONENTS),
    StrategySpec("solidcoder-routed", "solve's default: a direct program, then ranked samples, then solidcoder+ "
                 "(docs/pipeline.md)", _routed, options=ROUTED_OPTIONS, requires=(RUFF,)),
    StrategySpec("ldb", "LDB: a seed program (direct) debugged block by block from its traced run on a failing "
                 "public test, then fixed", _ldb, options=("rounds", "seed")),
)
_SPECS: dict[str, StrategySpec] = {spec.name: spec for spec in BUILT_IN}


def register(spec: StrategySpec) -> None:
    """Add a strategy; a name already taken is a ValueError (a programming error, not the user's input)."""
    if spec.name in _SPECS:
        raise ValueError(f"strategy {spec.name!r} is already registered")
    _SPECS[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a strategy `register` added (tests clean up with it)."""
    del _SPECS[name]


def strategy_specs() -> tuple[StrategySpec, ...]:
    """Every registered strategy, in the order help and the docs list them."""
    return tuple(_SPECS.values())


def strategy_names() -> tuple[str, ...]:
    return tuple(_SPECS)


def find_spec(name: str) -> StrategySpec:
    """The strategy `name` (options and all) names; BadInput listing the known ones when none does."""
    found = next((spec for spec in _SPECS.values() if spec.matches(name)), None)
    if found is None:
        raise BadInput(f"unknown strategy {name!r}; choose one of: {', '.join(_SPECS)}")
    return found


def check_language(strategy: Strategy, program_language: str, user: str) -> None:
    """BadInput, before any call, when `strategy` (`user`: "--strategy NAME") writes only Python and the problems
    ask for `program_language` (`--language`)."""
    if program_language != "python" and strategy.python_only:
        raise BadInput(f"{user} with --language {program_language}: {strategy.python_only}")


def strategy_help() -> str:
    """`--strategy` help: every registered name, the ablations and how options are written."""
    ablations = " and ".join(f"{spec.name}_no_PART" for spec in _SPECS.values() if spec.ablations)
    return (f"{', '.join(_SPECS)}; ablations {ablations}; options after a colon, e.g. solidcoder:candidates=3 "
            "(docs/pipeline.md).")


def strategy_table() -> str:
    """docs/benchmarks.md's strategy table: one row a strategy, with its help, options, ablations and needs."""
    rows = [[f"`{spec.name}`", spec.help, ", ".join(spec.options) or "-",
             ", ".join(f"`_no_{part}`" for part in spec.ablations) or "-",
             ", ".join(requirement.name for requirement in spec.requires) or "-"] for spec in _SPECS.values()]
    return markdown_table(["`--strategy`", "what it runs", "options (after `:`)", "ablations", "needs"], rows)
