"""Tier 1's selectors on recorded samples: behaviour majority against CodeT's agreement on generated tests.

For every problem where a recorded `solidcoder-routed` run (tier 1 drawing its samples in one request) reached tier
1, the recorded samples are pruned and ranked again as tier 1 does (syntax, lint, public tests). Where two or more
distinct programs survive, the model writes tests from the problem alone (`prompts/refinements/generated_tests.j2`,
greedy, `TEST_COUNT` of them), and `AgreementScorer` ranks the survivors on them. Both picks are judged on the hidden
tests. The generated tests' replies are kept in `--cache` (JSONL, one per problem), so a rerun makes no model call;
the cost of agreement is those calls' tokens, on the problems that needed one. With `--orm DIR`, a trained outcome
reward model (`solidcoder train orm`, or `benchmarks/orm_backbone.py`) picks too: the survivor it scores highest
(replay it only on a set the ORM was not trained on).

    python benchmarks/selector_replay.py benchmarks/results/humaneval40_qwen05b_routed_onerequest --config 882927 \
        --data-file ../shared/data/humaneval_with_sample_io.jsonl \
        --model /work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
        --cache benchmarks/results/selector_replay_tests.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from routed_samples import calls_by_position, tier_calls

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.prompting import PromptLibrary, problem_variables
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import strip_self_tests
from solidcoder.store import RESULTS, read_rows
from solidcoder.strategies.alphacodium_io import example_test, load_reply, read_examples
from solidcoder.strategies.selection import FILTERS, GENERATED_TESTS, TEST_COUNT
from solidcoder.verify.orm import OrmScorer
from solidcoder.verify.rank import AgreementScorer, MajorityScorer, prune_then_rank
from solidcoder.verify.weak import StrongVerifier, make_verifier


def generated_reply(problem, cache: dict, args) -> dict:
    """The recorded reply for `problem`, or a fresh greedy call (then recorded)."""
    if problem.id not in cache:
        from solidcoder.models.factory import ModelOptions, make_model

        model = args.model_object = getattr(args, "model_object", None) or make_model(args.model, ModelOptions())
        messages = PromptLibrary.from_env().messages(GENERATED_TESTS, count=str(TEST_COUNT),
                                                     **problem_variables(problem))
        reply = model.complete(messages, temperature=0.0, max_tokens=512)
        cache[problem.id] = {"id": problem.id, "text": reply.text, "tokens": reply.prompt_tokens +
                             reply.completion_tokens}
        with args.cache.open("a") as out:
            out.write(json.dumps(cache[problem.id]) + "\n")
    return cache[problem.id]


def picks(problem, row: dict, calls: dict, judge: Judge, cache: dict, args) -> tuple[bool, bool, int, bool] | None:
    """(majority's pick passes, agreement's pick passes, tokens of the generated tests, the ORM's pick passes), or
    None below 2 survivors."""
    request = calls[tier_calls(row)[1][0]]
    samples = [strip_self_tests(extract_code(text)) for text in request.get("choices") or [request["text"]]]
    verifiers = [make_verifier(f, judge) for f in FILTERS]
    ranked = asyncio.run(prune_then_rank(problem, samples, verifiers, MajorityScorer(judge)))
    if len(ranked.ranked) < 2:
        return None
    reply = generated_reply(problem, cache, args)
    examples = read_examples(load_reply(reply["text"], ("input:", "output:")) or {}) or []
    tests = [t for t in (example_test(e, problem) for e in examples) if t is not None]
    survivors = [candidate for candidate, _ in ranked.ranked]
    scores = asyncio.run(AgreementScorer(judge, tests).scores(problem, survivors)) if tests else [0.0] * len(survivors)
    chosen = max(range(len(survivors)), key=lambda i: (scores[i], -i))  # the majority's order among equals
    orm = asyncio.run(args.orm_scorer.scores(problem, survivors)) if args.orm_scorer else [0.0] * len(survivors)
    preferred = max(range(len(survivors)), key=lambda i: (orm[i], -i))
    passes = asyncio.run(StrongVerifier(judge).survivors(problem, [c.code for c in survivors]))
    return passes[0], passes[chosen], reply["tokens"], passes[preferred]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--config", required=True, help="the routed configuration's hash (a prefix)")
    parser.add_argument("--model", required=True, help="the model that writes the tests (called for uncached problems)")
    parser.add_argument("--cache", type=Path, required=True, help="JSONL of generated-test replies, read and extended")
    parser.add_argument("--orm", type=Path, default=None, help="a trained ORM directory: its pick is judged too")
    args = parser.parse_args()
    args.orm_scorer = OrmScorer(args.orm, max_length=512) if args.orm else None
    cache = {r["id"]: r for r in read_rows(args.cache)} if args.cache.exists() else {}
    rows = {r["id"]: r for r in read_rows(args.run_dir / RESULTS) if r["strategy"].startswith("solidcoder-routed")
            and r["config_hash"].startswith(args.config) and any(t["tier"] == 1 for t in r["notes"]["tiers"])}
    problems = [p for p in load_dataset(args.dataset, DataOptions(data_file=args.data_file))[0] if p.id in rows]
    with SandboxPool(SandboxConfig(workers=2)) as pool:
        judge = Judge(pool)
        found = {p.id: picks(p, rows[p.id], calls_by_position(args.run_dir, rows[p.id]["key"]), judge, cache, args)
                 for p in problems}
    contested = {pid: f for pid, f in found.items() if f is not None}
    print(f"{len(problems)} problems reached tier 1 ({args.run_dir} @{args.config}); {len(contested)} had two or "
          "more distinct surviving samples")
    verdict = {True: "pass", False: "fail"}
    for pid, (majority, agreement, tokens, orm) in contested.items():
        print(f"{pid}: majority {verdict[majority]}, agreement {verdict[agreement]}, "
              + (f"ORM {verdict[orm]}, " if args.orm else "") + f"{tokens} tokens of generated tests")
    print(f"majority {sum(f[0] for f in contested.values())}/{len(contested)}, agreement "
          f"{sum(f[1] for f in contested.values())}/{len(contested)}, at {sum(f[2] for f in contested.values())} "
          "more tokens in all" + (f"; ORM {sum(f[3] for f in contested.values())}/{len(contested)}" if args.orm
                                  else ""))


if __name__ == "__main__":
    main()
