"""How many tier-1 samples does routing need? Replays a routed run's recorded samples, first N of them, N = 1..S.

For every problem of a `solidcoder-routed` run, tier 0 is taken as recorded. Where tier 1 ran, its S recorded
samples (the calls that follow tier 0's in `calls.jsonl`) are pruned and ranked again as tier 1 does (syntax, lint,
the public tests, the largest behaviour cluster), keeping only the first N; the pick (tier 0's program when nothing
survives) is judged on the hidden tests. That is `solidcoder-routed:samples=N,max_tier=1` on this run's calls,
without another model call; the tier-1 oracle round is priced as recorded. Tokens per problem are tier 0's, the
first N samples' and that round's, against Direct's rows in the same directory.

    python benchmarks/routed_samples.py benchmarks/results/humaneval40_qwen05b_issue15 \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl [--strategy solidcoder-routed] [--config HASH]

With `--pooled`, the samples of every routed configuration in the directory are pooled per problem instead (self-
tests stripped; a reply repeated within one row counted once, see `pooled`), and each problem's share q of samples
that pass both the public and the hidden tests gives the expected number of problems N samples rescue, the sum of
1 - (1 - q)^N: one run's draw is a single, noisy outcome of that expectation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code
from solidcoder.store import RESULTS, read_rows
from solidcoder.strategies.selection import FILTERS
from solidcoder.verify.rank import MajorityScorer, prune_then_rank
from solidcoder.verify.weak import StrongVerifier, make_verifier


def calls_by_position(run_dir: Path, key: str) -> dict[int, dict]:
    """Position -> the recorded completion of one row's calls."""
    found = {}
    for line in (run_dir / "calls.jsonl").read_text().splitlines():
        row = json.loads(line)
        unit, position, _ = row["id"].rsplit("#", 2)
        if unit == key:
            found[int(position)] = row["completion"]
    return found


def tier_calls(row: dict) -> dict[int, range]:
    """Tier -> the positions of its calls in a routed row's `calls.jsonl` entries (tiers run in order, tier 1 drawing
    its samples first)."""
    found, start = {}, 1
    for tier in row["notes"]["tiers"]:
        found[tier["tier"]] = range(start, start + tier["calls"])
        start += tier["calls"]
    return found


def tokens(completion: dict) -> int:
    return completion["prompt_tokens"] + completion["completion_tokens"]


def replay(problem, row: dict, calls: dict[int, dict], samples: int, judge: Judge, verifiers) -> list[tuple]:
    """(passed, tokens) for N = 1..samples: the answer `samples=N,max_tier=1` would give and what it costs."""
    tiers = {t["tier"]: t for t in row["notes"]["tiers"]}
    if 1 not in tiers:  # tier 0 accepted: no sample was drawn
        return [(row["passed"], tiers[0]["tokens"])] * samples
    drawn = [calls[i] for i in tier_calls(row)[1][:samples]]
    oracle = tiers[1]["tokens"] - sum(tokens(c) for c in drawn)  # the tier-1 round, as recorded
    fallback = extract_code(calls[1]["text"])
    found = []
    for n in range(1, samples + 1):
        ranked = asyncio.run(prune_then_rank(problem, [extract_code(c["text"]) for c in drawn[:n]], verifiers,
                                             MajorityScorer(judge)))
        pick = ranked.best.code if ranked.best else fallback
        spent = tiers[0]["tokens"] + sum(tokens(c) for c in drawn[:n]) + (oracle if ranked.best else 0)
        found.append((asyncio.run(StrongVerifier(judge).survivors(problem, [pick]))[0], spent))
    return found


def pooled(run_dir: Path, problems: dict, judge: Judge, top: int = 10) -> None:
    """Per problem that reached tier 1 in any routed configuration: its pooled samples' q, then E[rescued](N)."""
    from sanitize_replay import direct_programs, verdicts

    from solidcoder.stages.sanitize import strip_self_tests

    samples: dict[str, list[str]] = {}
    for row in read_rows(run_dir / RESULTS):
        if row["strategy"].startswith("solidcoder-routed") and any(t["tier"] == 1 for t in row["notes"]["tiers"]):
            drawn = direct_programs(run_dir, row)[1:]
            print(f"{row['id']} @{row['config_hash'][:6]}: {len(set(drawn))} distinct of {len(drawn)} samples")
            # A reply repeated within one row is a repeated draw, not an independent one: llama.cpp's prompt cache
            # restored the sampling seed with the state until the backend passed a seed per call.
            samples.setdefault(row["id"], []).extend(map(strip_self_tests, dict.fromkeys(drawn)))
    shares = {}
    for pid, programs in samples.items():
        shares[pid] = sum(p and h for p, h in verdicts(problems[pid], programs, judge)) / len(programs)
        print(f"{pid}: {len(programs)} samples, q = {shares[pid]:.2f}")
    for n in range(1, top + 1):
        print(f"N={n}: expected problems rescued {sum(1 - (1 - q) ** n for q in shares.values()):.2f} "
              f"of {len(shares)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--strategy", default="solidcoder-routed")
    parser.add_argument("--config", default=None, help="only rows of this configuration hash")
    parser.add_argument("--samples", type=int, default=5, help="the run's tier-1 sample count")
    parser.add_argument("--pooled", action="store_true", help="pool every routed configuration's samples")
    args = parser.parse_args()
    if args.pooled:
        problems = {p.id: p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0]}
        with SandboxPool(SandboxConfig(workers=2)) as pool:
            return pooled(args.run_dir, problems, Judge(pool))
    rows = {r["id"]: r for r in read_rows(args.run_dir / RESULTS) if r["strategy"] == args.strategy
            and args.config in (None, r["config_hash"])}
    direct = {r["id"]: r for r in read_rows(args.run_dir / RESULTS) if r["strategy"] == "direct"}
    problems = [p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0] if p.id in rows]
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        verifiers = [make_verifier(f, judge) for f in FILTERS]
        table = [replay(p, rows[p.id], calls_by_position(args.run_dir, rows[p.id]["key"]), args.samples, judge,
                        verifiers) for p in problems]
    base = [direct[p.id] for p in problems if p.id in direct]  # a row holds prompt_tokens and completion_tokens
    per_direct = sum(map(tokens, base)) / max(len(base), 1)
    sampled = sum(any(t["tier"] == 1 for t in rows[p.id]["notes"]["tiers"]) for p in problems)
    print(f"{len(problems)} problems of {args.strategy} ({args.run_dir}); Direct {sum(r['passed'] for r in base)}/"
          f"{len(base)} at {per_direct:.0f} tokens/problem; tier 1 ran on {sampled}")
    print("samples=N,max_tier=1 | pass@1 | tokens / problem | x Direct")
    for n in range(args.samples):
        passed, spent = sum(t[n][0] for t in table), sum(t[n][1] for t in table) / len(table)
        print(f"N={n + 1} | {passed}/{len(table)} ({passed / len(table):.1%}) | {spent:.0f} | {spent / per_direct:.2f}")


if __name__ == "__main__":
    main()
