"""Does the oracle fire, and are its tests right? One oracle round per problem on a fixed program, scored.

For each problem, the program under test is a bench run's answer (`--results`, the rows of `--strategy`, Direct by
default). Algorithm 1's own round runs on it with the given refinements (`Loop.oracle_test`, then the execution):
red team, evidence checks and judge prompt as configured. The script prints how the rounds ended (malformed,
rejected, executed and passed, executed and failed) and, for the tests that were executed, how many are wrong
(the dataset's reference solution fails them) and how many are false alarms (they reject a program the hidden
tests accept), so the judge's precision can be read next to its recall.

    python benchmarks/oracle_rounds.py --results benchmarks/results/humaneval40_qwen05b_issue15/results.jsonl \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl --model /work/models/qwen...gguf \
        --refinements structured_oracle,evidence [--limit 20] [--max-tokens 512]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import time
from pathlib import Path

from solidcoder.core.calls import MemoryLog, RecordingModel
from solidcoder.core.context import SolveContext
from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.models.factory import make_model
from solidcoder.prompting import PromptLibrary
from solidcoder.strategies.algorithm1 import Loop
from solidcoder.strategies.paper_settings import PaperSettings, parse_refinements


def programs(results: Path, strategy: str) -> dict[str, dict]:
    """Problem id -> the last row of `strategy` for it (its code and hidden verdict)."""
    rows = (json.loads(line) for line in results.read_text().splitlines() if line.strip())
    return {row["id"]: row for row in rows if row.get("strategy") == strategy and row.get("code")}


def references(data_file: Path) -> dict[str, str]:
    """HumanEval's reference programs (prompt + canonical solution), by task id; empty for other files."""
    rows = (json.loads(line) for line in data_file.read_text().splitlines() if line.strip())
    return {row["task_id"]: row["prompt"] + row["canonical_solution"] for row in rows if "canonical_solution" in row}


async def one_round(problem, row: dict, reference: str | None, ctx: SolveContext, config: PaperSettings) -> dict:
    loop = Loop(problem, ctx, config)
    test = await loop.oracle_test(row["code"], 1)
    found = {"id": problem.id, "outcome": loop.rounds[-1] if loop.rounds else "executed",
             "why": loop.rejections[-1] if loop.rejections else ""}
    if test is None:
        return found
    failure = await loop.failure_of(row["code"], test)
    found.update(outcome="executed, failed" if failure else "executed, passed", test=test.test.text(),
                 crash_only=test.test.crash_only)
    if reference is not None:
        found["wrong"] = not (await loop.evaluate(reference, [test])).green
    found["false_alarm"] = bool(failure) and bool(row.get("passed"))
    return found


async def run(args: argparse.Namespace) -> tuple[list[dict], int]:
    """Every problem's round, and the tokens the rounds took."""
    problems = load_dataset(args.dataset, DataOptions(data_file=args.data_file, limit=args.limit))[0]
    rows, refs = programs(args.results, args.strategy), references(args.data_file)
    config = PaperSettings(**parse_refinements(args.refinements))
    model = RecordingModel(make_model(args.model), MemoryLog.empty(), "oracle-rounds")
    found = []
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        ctx = SolveContext(model, PromptLibrary.from_env(), None, temperature=0.0, max_tokens=args.max_tokens,
                           pool=pool, top_p=config.top_p)
        for problem in (p for p in problems if p.id in rows):
            found.append(await one_round(problem, rows[problem.id], refs.get(problem.id), ctx, config))
            if args.show:
                reply = model.log.calls[-1]["completion"]["text"] if found[-1]["outcome"] == "malformed" else ""
                print(json.dumps({**found[-1], "reply": reply[:300]} if reply else found[-1])[:600])
    return found, model.usage.tokens


def summary(found: list[dict], seconds: float, tokens: int) -> str:
    outcomes = collections.Counter(f["outcome"] for f in found)
    executed = [f for f in found if f["outcome"].startswith("executed")]
    kept = [f for f in executed if f["outcome"] == "executed, failed"]
    wrong = sum(bool(f.get("wrong")) for f in executed)
    lines = [f"{len(found)} rounds: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())),
             f"executed {len(executed)}/{len(found)} ({len(executed) / max(len(found), 1):.0%}; crash-only "
             f"{sum(bool(f.get('crash_only')) for f in executed)}); "
             f"wrong tests (the reference fails them) {wrong}/{len(executed)}; "
             f"failed tests (would be kept) {len(kept)}, false alarms among them "
             f"{sum(f['false_alarm'] for f in kept)}/{len(kept)}",
             f"{seconds:.0f} s, {tokens} tokens ({tokens / max(len(found), 1):.0f} per round)"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--strategy", default="direct", help="whose answers are the programs under test")
    parser.add_argument("--model", required=True)
    parser.add_argument("--refinements", default="", help="Algorithm 1 refinements, e.g. structured_oracle,evidence")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--show", action="store_true", help="print each round as it ends")
    args = parser.parse_args()
    start = time.monotonic()
    found, tokens = asyncio.run(run(args))
    print(f"refinements: {args.refinements or '(the paper setting)'}")
    print(summary(found, time.monotonic() - start, tokens))


if __name__ == "__main__":
    main()
