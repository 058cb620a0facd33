"""Where a strategy's calls and tokens went: per-stage totals (each row's `stage_usage`) over a run directory, with
`solidcoder report`'s oracle-round line (`report` itself prints tokens per problem by stage, not calls).

    python benchmarks/stage_usage.py RUN_DIR [--strategy solidcoder] [--config HASH] [--cap 10]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from solidcoder.bench.metrics import summarize
from solidcoder.bench.report import oracle_lines
from solidcoder.store import RESULTS, read_results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--strategy", default="solidcoder")
    parser.add_argument("--config", default=None, help="only rows of configuration hashes starting with this")
    parser.add_argument("--cap", type=int, default=10, help="the run's --max-calls")
    args = parser.parse_args()
    rows = [r for r in read_results(args.run_dir / RESULTS) if r.strategy == args.strategy
            and r.config_hash.startswith(args.config or "")]
    totals: dict[str, list[int]] = {}
    for row in rows:
        # template_usage since 2026-12-03 (full template names); before, stage_usage or, older still, notes.stages
        stages = row.usage or (row.notes.stage_usage if row.notes else None) or {}
        for stage, (calls, prompt, completion) in stages.items():
            entry = totals.setdefault(stage, [0, 0, 0])
            entry[0], entry[1], entry[2] = entry[0] + calls, entry[1] + prompt, entry[2] + completion
    all_calls = sum(t[0] for t in totals.values()) or 1
    all_tokens = sum(t[1] + t[2] for t in totals.values()) or 1
    print(f"{len(rows)} {args.strategy} problems; per stage: calls, share of calls, prompt + completion tokens, share")
    for stage, (calls, prompt, completion) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"{stage:>18} {calls:>5} {calls / all_calls:>6.1%} {prompt:>8} + {completion:>7} "
              f"{(prompt + completion) / all_tokens:>6.1%}")
    for line in oracle_lines(summarize(rows, [])):  # the report's own line, per configuration
        print(line)
    verified = sum(1 for r in rows if r.notes and r.notes.verified)
    capped = sum(1 for r in rows if r.calls >= args.cap)
    passed = sum(1 for r in rows if r.passed)
    print(f"verified (public + accumulated tests): {verified}/{len(rows)}; passed hidden: {passed}/{len(rows)}; "
          f"reached the {args.cap}-call cap: {capped}/{len(rows)}")


if __name__ == "__main__":
    main()
