"""Benchmark datasets as `Problem`s: humaneval, mbpp, apps, codecontests, livecodebench; cruxeval trace items.

`registry.py` holds one `DatasetSpec` a dataset (its loader, sources and published subsets), which `--dataset` help
and docs/benchmarks.md are read from too; `loading.py` loads one: `load_dataset(name, DataOptions(...))` reads the
public source or a `--data-file`, then selects (subset, ids file, limit); `load_trace_items` does the same for a
trace-inference dataset. Everything wrong with the input is `BadInput`.

Importing this package is cheap (the CLI builds its help from the registry): the loading names re-exported here are
imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from solidcoder.datasets.registry import dataset_names, dataset_spec, dataset_specs

# Re-exported names and the modules they come from, imported when first asked for.
_REEXPORTS = {name: "solidcoder.datasets.loading" for name in (
    "DataOptions", "check_name", "load_dataset", "load_trace_items", "read_ids", "select", "source_label",
    "trace_task")} | {"LoadReport": "solidcoder.datasets.base", "TraceItem": "solidcoder.datasets.cruxeval"}


def __getattr__(name: str) -> Any:
    """A re-exported name, imported when first asked for (PEP 562); `TRACE_DATASETS` is the registry's trace
    datasets, name -> task, as read now."""
    if name == "TRACE_DATASETS":
        return {spec.name: spec.trace for spec in dataset_specs() if spec.trace is not None}
    if name not in _REEXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_REEXPORTS[name]), name)


__all__ = ["DataOptions", "LoadReport", "TraceItem", "dataset_names", "dataset_spec", "dataset_specs", "load_dataset",
           "load_trace_items", "select"]
