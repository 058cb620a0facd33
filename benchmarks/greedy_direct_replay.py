"""Greedy Direct from a routed run's recorded calls: the baseline at temperature 0, at no model time.

A routed run's first call is tier 0's: the Direct prompt at temperature 0 (greedy). A `direct` row run without
`--temperature` samples at the model's default temperature instead (0.2 for llama.cpp, `models/settings.py`), with a
fresh seed per call, so the two baselines differ on some problems. This script reads each routed unit's first
reply as Direct reads a reply (`extract_code`, nothing stripped), judges it on the hidden tests, and prints the greedy
baseline beside the run's `direct` row and the routed row, with the paired difference of routed against each.

    python benchmarks/greedy_direct_replay.py benchmarks/results/humaneval_report40_qwen05b \
        --dataset humaneval --data-file ../shared/data/humaneval_with_sample_io.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from routed_samples import calls_by_position

from solidcoder.bench.compare import paired
from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code
from solidcoder.store import RESULTS, read_rows


def greedy_direct(run_dir: Path, problems: dict, judge: Judge, routed: list[dict]) -> dict[str, bool]:
    """Problem id -> whether the routed unit's first (greedy Direct) reply passes the hidden tests."""
    found = {}
    for row in routed:
        reply = calls_by_position(run_dir, row["key"])[1]["text"]
        problem = problems[row["id"]]
        found[row["id"]] = judge.judge(problem, extract_code(reply), problem.hidden_tests).passed
    return found


def line(name: str, verdicts: dict[str, bool], routed: dict[str, bool]) -> str:
    diff = paired({i: float(v) for i, v in routed.items()}, {i: float(v) for i, v in verdicts.items()})
    return f"{name}: {sum(verdicts.values())}/{len(verdicts)}; routed against it: {diff.line()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--strategy", default="solidcoder-routed")
    args = parser.parse_args()
    problems = {p.id: p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0]}
    rows = [row for row in read_rows(args.run_dir / RESULTS) if "passed" in row]
    routed = [row for row in rows if row["strategy"] == args.strategy]
    with SandboxPool(SandboxConfig(workers=1, hidden_paths=(str(args.data_file),))) as pool:
        greedy = greedy_direct(args.run_dir, problems, Judge(pool), routed)
    verdicts = {row["id"]: bool(row["passed"]) for row in routed}
    sampled = {row["id"]: bool(row["passed"]) for row in rows if row["strategy"] == "direct"}
    print(f"{args.run_dir}: {len(routed)} problems of {args.strategy}, {sum(verdicts.values())} pass")
    print(line("direct as recorded (the model's default temperature)", sampled, verdicts))
    print(line("greedy direct (routed's tier-0 replies, rejudged)", greedy, verdicts))
    changed = sorted(i for i in greedy if i in sampled and greedy[i] != sampled[i])
    print(f"problems where greedy and recorded Direct differ: {', '.join(changed) or 'none'}")


if __name__ == "__main__":
    main()
