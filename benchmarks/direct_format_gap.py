"""Where greedy Direct's gap to the model maker's figure comes from: prompt, stop strings, token cap and sanitizer.

Reads the greedy Direct rows of a run directory (the `plain` prompt, and `direct:prompt=qwen`, the maker's format,
where recorded) and judges, on HumanEval's own hidden tests, each recorded reply read several ways; no model call:

* plain, as recorded (`extract_code`), then with the maker's stop strings applied to the recorded reply (greedy
  decoding is deterministic, so a reply cut at a stop string is what a run with that stop string writes, the cap
  aside), then with the EvalPlus sanitizer (`reachable_definitions`), then both;
* qwen, as recorded (stop strings, sanitizer), and without the sanitizer (the continued fence as written);
* for both, how many replies reached the runs' 512-token cap (a greedy reply that ended before it is the same under
  any larger cap, the maker's ~1,300 included).

    python benchmarks/direct_format_gap.py benchmarks/results/humaneval164_qwen05b \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.models.backend import cut_at_stop
from solidcoder.stages.base import extract_code
from solidcoder.stages.prompt_formats import QWEN, QWEN_STOP
from solidcoder.stages.sanitize import reachable_definitions
from solidcoder.store import RESULTS, read_rows

CAP = 512  # the runs' --max-tokens

PLAIN_READINGS = {
    "plain, as recorded": lambda text, p: extract_code(text),
    "plain + stop strings": lambda text, p: extract_code(cut_at_stop(text, QWEN_STOP[:-1]) + "\n```"),
    "plain + sanitizer": lambda text, p: sanitized(extract_code(text), p),
    "plain + stop strings + sanitizer": lambda text, p: sanitized(extract_code(cut_at_stop(text, QWEN_STOP[:-1])
                                                                               + "\n```"), p),
}
QWEN_READINGS = {
    "qwen, as recorded (stop strings, sanitizer)": lambda text, p: QWEN.program(text, p),
    "qwen without the sanitizer": lambda text, p: text.split("\n", 1)[-1].split("```")[0].replace("\t", "    "),
}


def sanitized(code: str, problem) -> str:
    try:
        return reachable_definitions(code, problem.entry_point) + "\n"
    except (SyntaxError, ValueError):
        return code


def first_replies(run_dir: Path, strategy: str) -> dict[str, dict]:
    """Problem id -> the one recorded completion of each `strategy` row (greedy Direct: one call per row)."""
    keys = {row["key"]: row["id"] for row in read_rows(run_dir / RESULTS) if row["strategy"] == strategy}
    found = {}
    for line in (run_dir / "calls.jsonl").read_text().splitlines():
        call = json.loads(line)
        unit, position, _ = call["id"].rsplit("#", 2)
        if unit in keys and position == "1":
            found[keys[unit]] = call["completion"]
    return found


def pass_count(judge: Judge, problems: dict, replies: dict[str, dict], read) -> int:
    async def one(pid: str) -> bool:
        problem = problems[pid]
        return (await judge.ajudge(problem, read(replies[pid]["text"], problem), problem.hidden_tests)).passed
    return sum(asyncio.run(one(pid)) for pid in sorted(replies))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    args = parser.parse_args()
    problems = {p.id: p for p in load_dataset("humaneval", DataOptions(data_file=args.data_file))[0]}
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        for strategy, readings in (("direct", PLAIN_READINGS), ("direct:prompt=qwen", QWEN_READINGS)):
            replies = first_replies(args.run_dir, strategy)
            for name, read in readings.items() if replies else ():
                print(f"{name}: {pass_count(judge, problems, replies, read)}/{len(replies)}")
            if replies:
                capped = sum(r["completion_tokens"] >= CAP for r in replies.values())
                print(f"{strategy}: {capped} of {len(replies)} replies reached the {CAP}-token cap; "
                      f"{sum(r['completion_tokens'] for r in replies.values()) / len(replies):.0f} completion tokens "
                      "on average")


if __name__ == "__main__":
    main()
