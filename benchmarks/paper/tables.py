"""What the paper-table scripts share: one `solidcoder bench` per cell, the latest configuration of a cell, and
pass@1 as the tables print it. Imported by the scripts beside it (run as `python benchmarks/paper/NAME.py`)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from solidcoder.bench.metrics import Summary, summarize
from solidcoder.store import ERRORS, RESULTS, read_rows

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
OUT = REPO / "benchmarks" / "results" / "paper"


def table_parser(description: str, tables: list[str], run_dir: str) -> argparse.ArgumentParser:
    """The options every table script takes; the script adds `--model`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--table", choices=sorted(tables), required=True)
    parser.add_argument("--limit", type=int, default=None, help="first N problems of each dataset")
    parser.add_argument("--run-dir", type=Path, default=REPO / "runs" / run_dir)
    parser.add_argument("--data-dir", type=Path, default=SHARED)
    parser.add_argument("--online", action="store_true", help="load the hub datasets, not the shared files")
    parser.add_argument("--out", type=Path, default=None, help="the markdown file (default benchmarks/results/paper/)")
    return parser


def parse_with_bench_args(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, list[str]]:
    """The script's options, and the arguments after `--` (passed to every `bench`)."""
    argv = sys.argv[1:]
    if "--" not in argv:
        return parser.parse_args(argv), []
    return parser.parse_args(argv[:argv.index("--")]), argv[argv.index("--") + 1:]


def run_cell(run_dir: Path, dataset: str, strategy: str | None, model: str, data_file: Path | None,
             limit: int | None, bench_args: list[str]) -> None:
    """`solidcoder bench` for one cell into `run_dir` (finished cells are resumed, so they cost nothing)."""
    command = [sys.executable, "-m", "solidcoder", "bench", "--dataset", dataset, "--model", model,
               "--run-dir", str(run_dir), *(["--strategy", strategy] if strategy else []), *bench_args]
    command += [] if data_file is None else ["--data-file", str(data_file)]
    command += [] if limit is None else ["--limit", str(limit)]
    print(f"== {dataset} / {strategy or 'default'} / {model}", flush=True)
    subprocess.run(command, check=True)


def latest(run_dir: Path, strategy: str | None = None, model: str | None = None) -> Summary | None:
    """The most recent configuration in a run directory, of `strategy` and `model` when given."""
    summaries = [s for s in summarize(read_rows(run_dir / RESULTS), read_rows(run_dir / ERRORS))
                 if strategy in (None, s.strategy) and model in (None, s.model)]
    return summaries[-1] if summaries else None


def pct(summary: Summary | None) -> str:
    """pass@1 in percent with the number of problems scored, or a dash for an empty cell."""
    return "–" if summary is None or not summary.problems else f"{100 * summary.pass1:.1f} ({summary.problems})"


def write(name: str, header: str, argv: list[str], markdown: str, out: Path | None = None) -> Path:
    """The table's markdown file: its header, the command that made it, the table."""
    path = out or OUT / name
    path.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python", *argv])
    path.write_text(f"{header}\n\n```\n{command}\n```\n\n{markdown}\n", encoding="utf-8")
    print(path.read_text(encoding="utf-8"))
    return path
