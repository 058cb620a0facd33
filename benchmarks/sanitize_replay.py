"""How often does a model's own self-test fail a correct function? Replays every Direct-prompt program of a run.

Takes every program a run directory recorded from the Direct prompt (the `direct` rows' one call; a
`solidcoder-routed` row's tier-0 program and its tier-1 samples) on call problems, and judges each on the public
and the hidden tests twice: as extracted, and with `strip_self_tests` (solidcoder/stages/sanitize.py). No model call
is made. Prints how many programs stripping changed and how their verdicts moved, per strategy, and the Direct
rows' pass@1 both ways.

    python benchmarks/sanitize_replay.py benchmarks/results/humaneval40_qwen05b_issue15 \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl [--dataset humaneval]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from pathlib import Path

from routed_samples import calls_by_position, tier_calls

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import strip_self_tests
from solidcoder.store import RESULTS, read_rows
from solidcoder.verify.weak import StrongVerifier, TestsVerifier


def direct_replies(run_dir: Path, row: dict) -> list[str]:
    """The Direct-prompt replies of one row: its only call (direct), or tier 0's and tier 1's calls (routed)."""
    calls = calls_by_position(run_dir, row["key"])
    if row["strategy"] == "direct":
        return [calls[1]["text"]]
    usage = row.get("template_usage", {}).get("strategies/direct") or row["stage_usage"]["direct"]  # older rows
    samples = tier_calls(row).get(1, range(0))[:usage[0] - 1]
    return [calls[i]["text"] for i in (1, *samples)]


def direct_programs(run_dir: Path, row: dict) -> list[str]:
    return [extract_code(reply) for reply in direct_replies(run_dir, row)]


def replay_inputs(description: str, strategies: tuple[str, ...]) -> tuple[argparse.Namespace, list[dict], dict]:
    """The command line of a replay script (RUN_DIR --data-file F [--dataset D]), the run's rows of `strategies`
    and of `solidcoder-routed`, and the problems by id."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    args = parser.parse_args()
    rows = [r for r in read_rows(args.run_dir / RESULTS) if r["strategy"] in strategies or
            r["strategy"].startswith("solidcoder-routed")]
    problems = {p.id: p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0]}
    return args, rows, problems


def verdicts(problem, programs: list[str], judge: Judge) -> list[tuple[bool, bool]]:
    public = asyncio.run(TestsVerifier(judge, 1000).survivors(problem, programs))
    hidden = asyncio.run(StrongVerifier(judge).survivors(problem, programs))
    return list(zip(public, hidden, strict=True))


def main() -> None:
    args, rows, problems = replay_inputs(__doc__.splitlines()[0], ("direct",))
    moved: Counter = Counter()
    direct: Counter = Counter()
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        for row in rows:
            problem = problems[row["id"]]
            if problem.kind != "call":
                continue
            programs = direct_programs(args.run_dir, row)
            stripped = [strip_self_tests(code) for code in programs]
            changed = [i for i, (a, b) in enumerate(zip(programs, stripped, strict=True)) if a != b]
            before = verdicts(problem, [programs[i] for i in changed], judge)
            after = verdicts(problem, [stripped[i] for i in changed], judge)
            group = f"{row['strategy']} {row['config_hash']}"
            moved[group, "programs"] += len(programs)
            moved[group, "changed"] += len(changed)
            for (pub0, hid0), (pub1, hid1) in zip(before, after, strict=True):
                moved[group, f"public {'pass' if pub0 else 'fail'}->{'pass' if pub1 else 'fail'}"] += 1
                moved[group, f"hidden {'pass' if hid0 else 'fail'}->{'pass' if hid1 else 'fail'}"] += 1
            if row["strategy"] == "direct":
                direct[group, "raw"] += row["passed"]
                direct[group, "stripped"] += row["passed"] or bool(changed and after[0][1])
                direct[group, "n"] += 1
    for group in sorted({g for g, _ in moved}):
        items = ", ".join(f"{k} {v}" for (g, k), v in sorted(moved.items()) if g == group)
        print(f"{group}: {items}")
    for group in sorted({g for g, _ in direct}):
        print(f"{group}: pass@1 as extracted {direct[group, 'raw']}/{direct[group, 'n']}, "
              f"self-tests stripped {direct[group, 'stripped']}/{direct[group, 'n']}")


if __name__ == "__main__":
    main()
