"""Routed v2 from recorded rows: what tier 0 without its oracle round would have answered, and at what cost.

For every problem of a `solidcoder-routed` run (tier 1 drawing its samples in one request), the recorded calls are
replayed without another model call:

* `v1, max_tier=1`: as recorded, tier 2 cut (tier 0's program with the public tests and the shared oracle test,
  then tier 1's five samples, pruned and ranked by behaviour, with the same oracle test).
* `v2, oracle=none`: tier 0 accepts its program on the public tests alone; a program failing them goes to tier 1,
  whose recorded samples are pruned and ranked as tier 1 ranks them, with no oracle round.

Each answer is judged on the hidden tests; tokens are the calls' recorded tokens, seconds their recorded latency (the
model's time; the sandbox adds under a second per problem). Direct's rows in `--direct` are the baseline.

    python benchmarks/routed_v2_replay.py benchmarks/results/humaneval40_qwen05b_routed_onerequest --config 882927 \
        --direct benchmarks/results/humaneval40_qwen05b_issue15 \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from routed_samples import calls_by_position, tier_calls, tokens

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import strip_self_tests
from solidcoder.store import RESULTS, read_rows
from solidcoder.strategies.selection import FILTERS
from solidcoder.verify.rank import MajorityScorer, prune_then_rank
from solidcoder.verify.weak import StrongVerifier, make_verifier


def cost(calls: list[dict]) -> tuple[int, float]:
    return sum(map(tokens, calls)), sum(c.get("latency_s", 0.0) for c in calls)


def v1(row: dict, calls: dict[int, dict]) -> tuple[bool, int, float]:
    """Tiers 0 and 1 as recorded (a problem that reached tier 2 answered by tier 1's pick is not recorded: the
    recorded answer is tier 2's, so those count as failures, as `tier2_budget.py` at K = 0 counts them)."""
    spent = tier_calls(row)
    used = [calls[i] for tier in (0, 1) for i in spent.get(tier, ())]
    return (row["passed"] and row["notes"]["tier"] < 2, *cost(used))


def v2(problem, row: dict, calls: dict[int, dict], judge: Judge, verifiers) -> tuple[bool, int, float]:
    greedy, strong = strip_self_tests(extract_code(calls[1]["text"])), StrongVerifier(judge)
    if judge.judge(problem, greedy, problem.public_tests).passed:
        return (asyncio.run(strong.survivors(problem, [greedy]))[0], *cost([calls[1]]))
    request = calls[tier_calls(row)[1][0]]  # tier 1 draws its samples first, as the choices of one request
    samples = request.get("choices") or [request["text"]]
    ranked = asyncio.run(prune_then_rank(problem, [strip_self_tests(extract_code(text)) for text in samples],
                                         verifiers, MajorityScorer(judge)))
    pick = ranked.best.code if ranked.best else greedy
    return (asyncio.run(strong.survivors(problem, [pick]))[0], *cost([calls[1], request]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--config", required=True, help="the routed configuration's hash (a prefix)")
    parser.add_argument("--direct", type=Path, required=True, help="a directory holding Direct's rows")
    args = parser.parse_args()
    rows = {r["id"]: r for r in read_rows(args.run_dir / RESULTS)
            if r["strategy"].startswith("solidcoder-routed") and r["config_hash"].startswith(args.config)}
    direct = {r["id"]: r for r in read_rows(args.direct / RESULTS) if r["strategy"] == "direct" and r["id"] in rows}
    problems = [p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0] if p.id in rows]
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        verifiers = [make_verifier(f, judge) for f in FILTERS]
        found = {"v1, max_tier=1": [], "v2, oracle=none": []}
        for p in problems:
            calls = calls_by_position(args.run_dir, rows[p.id]["key"])
            found["v1, max_tier=1"].append(v1(rows[p.id], calls))
            found["v2, oracle=none"].append(v2(p, rows[p.id], calls, judge, verifiers))
    base_tokens = sum(map(tokens, direct.values())) / len(direct)
    base_s = sum(r["model_s"] for r in direct.values()) / len(direct)
    solved = sum(r["passed"] for r in direct.values())
    print(f"{len(problems)} problems ({args.run_dir} @{args.config}); Direct {solved}/{len(direct)} at "
          f"{base_tokens:.0f} tokens and {base_s:.1f} model s per problem")
    print("configuration | pass@1 | tokens / problem | x Direct | model s / problem | x Direct")
    for name, table in found.items():
        passed, spent, seconds = (sum(row[i] for row in table) / (1 if i == 0 else len(table)) for i in range(3))
        print(f"{name} | {int(passed)}/{len(table)} | {spent:.0f} | {spent / base_tokens:.2f} | {seconds:.1f} | "
              f"{seconds / base_s:.2f}")


if __name__ == "__main__":
    main()
