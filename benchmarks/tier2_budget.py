"""What would a call budget for routing's tier 2 cost and lose? Replays a routed run's recorded rows.

For every problem of a `solidcoder-routed` run, tiers 0 and 1 are taken as recorded. Where tier 2 ran, its calls
(those that follow tier 1's in `calls.jsonl`) are cut at K: the tokens are those of its first K calls, and a
problem tier 2 solved stays solved only when tier 2 used at most K calls (a problem it did not solve is counted as
unsolved at any K: a cut never tells whether an earlier program would have passed). Tokens per problem are set
against Direct's rows in the same directory (or in `--direct DIR`).

    python benchmarks/tier2_budget.py benchmarks/results/humaneval40_qwen05b_issue15 --config 715c58 \
        [--budgets 4,6,7,8,10,14] [--direct DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from routed_samples import calls_by_position, tier_calls, tokens

from solidcoder.store import RESULTS, read_rows


def cut(row: dict, calls: dict[int, dict], budget: int) -> tuple[bool, int]:
    """(passed, tokens) of one routed row with tier 2 cut at `budget` calls."""
    tiers = {t["tier"]: t for t in row["notes"]["tiers"]}
    if 2 not in tiers:
        return row["passed"], sum(t["tokens"] for t in tiers.values())
    spent = sum(tokens(calls[i]) for i in tier_calls(row)[2][:budget])
    return row["passed"] and tiers[2]["calls"] <= budget, tiers[0]["tokens"] + tiers[1]["tokens"] + spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--config", required=True, help="the routed configuration hash (its first characters)")
    parser.add_argument("--strategy", default="solidcoder-routed")
    parser.add_argument("--budgets", default="0,4,6,7,8,10,14")
    parser.add_argument("--direct", type=Path, default=None, help="the directory holding Direct's rows (run_dir)")
    args = parser.parse_args()
    rows = [r for r in read_rows(args.run_dir / RESULTS) if r["strategy"] == args.strategy
            and r["config_hash"].startswith(args.config)]
    direct = [r for r in read_rows((args.direct or args.run_dir) / RESULTS) if r["strategy"] == "direct"]
    per_direct = sum(r["prompt_tokens"] + r["completion_tokens"] for r in direct) / max(len(direct), 1)
    calls = {r["key"]: calls_by_position(args.run_dir, r["key"]) for r in rows}
    print(f"{len(rows)} rows of {args.strategy} @{args.config}; Direct {per_direct:.0f} tokens per problem")
    print("tier-2 calls | passed | tokens / problem | x Direct")
    for budget in map(int, args.budgets.split(",")):
        found = [cut(r, calls[r["key"]], budget) for r in rows]
        spent = sum(t for _, t in found) / max(len(found), 1)
        print(f"{budget:>12} | {sum(p for p, _ in found):>6} | {spent:>16.0f} | {spent / per_direct:.1f}")


if __name__ == "__main__":
    main()
