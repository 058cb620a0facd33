"""Tier 0's guard (`solidcoder-routed:guard=tests`) from a run's rows: what it caught and what it cost.

For every problem whose tier-0 program passed the public tests (the guard ran: `notes.guard` is set), the tier-0
program (the unit's first reply, read as tier 0 reads it) is judged on the hidden tests, so each guard decision is one
of: a false accept caught (sent to tier 1), a false accept let through, a right program sent to tier 1 (the guard's
cost), a right program accepted. Then the final verdicts and the tokens of those problems.

    python benchmarks/guard_outcomes.py benchmarks/results/mbpp40_qwen05b_routed_onerequest \
        --strategy solidcoder-routed:guard=tests --dataset mbpp --data-file ../shared/data/mbpp_397.jsonl
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from routed_samples import calls_by_position

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import strip_self_tests
from solidcoder.store import RESULTS, read_rows

OUTCOMES = {(False, 1): "false accept caught", (False, 0): "false accept let through",
            (True, 1): "right program sent to tier 1", (True, 0): "right program accepted"}


def outcome(row: dict, problem, judge: Judge, run_dir: Path) -> str:
    tier0 = strip_self_tests(extract_code(calls_by_position(run_dir, row["key"])[1]["text"]))
    right = judge.judge(problem, tier0, problem.hidden_tests).passed
    return OUTCOMES[right, min(row["notes"]["tier"], 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--strategy", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--data-file", type=Path, required=True)
    args = parser.parse_args()
    problems = {p.id: p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0]}
    rows = [r for r in read_rows(args.run_dir / RESULTS) if r.get("strategy") == args.strategy and "passed" in r]
    guarded = [r for r in rows if r["notes"].get("guard")]
    with SandboxPool(SandboxConfig(workers=1, hidden_paths=(str(args.data_file),))) as pool:
        found = {r["id"]: outcome(r, problems[r["id"]], Judge(pool), args.run_dir) for r in guarded}
    print(f"{args.run_dir} {args.strategy}: {len(rows)} problems, {sum(r['passed'] for r in rows)} pass; the guard "
          f"ran on {len(guarded)} (tier 0 passed the public tests)")
    for name, count in Counter(found.values()).most_common():
        print(f"  {name}: {count} ({', '.join(sorted(i for i, o in found.items() if o == name))})")
    sent = [r for r in guarded if r["notes"]["tier"] >= 1]
    print(f"  sent to tier 1: {len(sent)}, of which {sum(r['passed'] for r in sent)} pass in the end")


if __name__ == "__main__":
    main()
