"""Where a `solve` run is: each run gets a directory of its own under `--run-dir` (the problem and the
configuration key), so tests find its trajectory.json there."""

from __future__ import annotations

from pathlib import Path


def run_directories(parent: Path) -> list[Path]:
    """The run directories under `parent`, by name."""
    return sorted(path.parent for path in parent.glob("*/trajectory.json"))


def trajectory_file(parent: Path) -> Path:
    """The trajectory.json of the one run under `parent` (a test fails when there is none, or more than one)."""
    runs = run_directories(parent)
    assert len(runs) == 1, f"expected one run under {parent}, found {[run.name for run in runs]}"
    return runs[0] / "trajectory.json"
