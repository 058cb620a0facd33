"""Why was the alignment reward 0 in the CPU CodeRL+ run? Score a model on alignment tasks at two completion caps.

Alignment tasks are built exactly as the trainer builds them (judge a failed program on the problem's tests, keep
semantic failures, trace one failing input, keep primitive variables), from the model's own failed programs in a
bench results file. The model answers each task's `train/alignment` prompt, greedy, once per `--max-tokens` value;
the script prints the mean alignment reward (Eq. 5), how many replies hit the cap, and how many reached the
`[ANSWER]` block, so a reward of 0 can be told apart: truncation, no answer block, or wrong values.

    python benchmarks/alignment_probe.py --results benchmarks/results/humaneval40_qwen05b_run2/results.jsonl \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl --model /work/models/qwen...gguf \
        --max-tokens 128 512 [--tasks 12]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.models.base import Message
from solidcoder.models.factory import make_model
from solidcoder.prompting import PromptLibrary
from solidcoder.train.alignment import AlignmentTaskBuilder
from solidcoder.train.alignment_reward import AlignmentScorer, parse_predictions
from solidcoder.train.code_reward import _rollout
from solidcoder.train.mixing import PromptRenderer


def failed_programs(results: Path) -> list[tuple[str, str]]:
    """(problem id, code) of every failed row, first occurrence of each program."""
    seen, out = set(), []
    for line in results.read_text().splitlines():
        row = json.loads(line)
        if row.get("passed") is False and row.get("code") and row["code"] not in seen:
            seen.add(row["code"])
            out.append((row["id"], row["code"]))
    return out


def build_tasks(pool: SandboxPool, problems: dict, programs: list[tuple[str, str]], limit: int) -> list:
    judge, builder, tasks = Judge(pool), AlignmentTaskBuilder(pool), []
    for pid, code in programs:
        problem = problems[pid]
        report = judge.judge(problem, code, problem.all_tests)
        task = builder.build(_rollout(problem, code, problem.all_tests, report))
        if task is not None:
            tasks.append((problem, task))
        if len(tasks) == limit:
            break
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--model", required=True)
    parser.add_argument("--max-tokens", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--show", type=int, default=0, help="print the first N replies of each cap with their truth")
    args = parser.parse_args()
    problems = {p.id: p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0]}
    programs = failed_programs(args.results)
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        tasks = build_tasks(pool, problems, programs, args.tasks)
    print(f"{len(programs)} failed programs -> {len(tasks)} alignment tasks (semantic failures with variables); "
          f"{sum(len(t.truth) for _, t in tasks) / max(len(tasks), 1):.1f} variables per task")
    model, renderer, scorer = make_model(args.model), PromptRenderer(PromptLibrary.from_env()), AlignmentScorer()
    for cap in args.max_tokens:
        rewards, capped, answered, start = [], 0, 0, time.monotonic()
        for problem, task in tasks:
            messages = [Message(m["role"], m["content"]) for m in renderer.alignment_messages(task, problem)]
            reply = model.complete(messages, temperature=0, max_tokens=cap)
            rewards.append(scorer.score(reply.text, task))
            capped += reply.completion_tokens >= cap
            answered += "[/ANSWER]" in reply.text and bool(parse_predictions(reply.text))
            if len(rewards) <= args.show:
                print(f"--- {problem.id}, truth {task.truth}, reward {rewards[-1]:.2f}:\n{reply.text.strip()}\n")
        mean = sum(rewards) / max(len(rewards), 1)
        print(f"max_tokens {cap:4d}: mean alignment reward {mean:.3f}; replies at the cap {capped}/{len(tasks)}; "
              f"with a parsed [ANSWER] block {answered}/{len(tasks)}; nonzero rewards "
              f"{sum(r > 0 for r in rewards)}/{len(tasks)}; {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
