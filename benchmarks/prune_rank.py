"""Generate-prune-then-rank on HumanEval with Qwen2.5-Coder-0.5B: Best-of-k and programs per second per filter.

1. Sample n programs per problem with the embedded llama.cpp model at temperature 1.0 (Direct prompt); the
   samples are cached in --candidates so that ranking can be rerun without generating again.
2. Train a small ORM on the spot on the problems of the other fold (2-fold cross-fitting, so no problem is
   ranked by an ORM that saw its own samples): --orm-backbone qwen dequantizes the same GGUF into a
   transformers model with a scalar head (slow on CPU); --orm-backbone tiny is a 2-layer Qwen2 built from a
   config with a character tokenizer (fast, nearly uninformed: a plumbing check, not a ranker).
3. Print the table of `solidcoder rank` (majority voting vs ORM, cumulative filters) for each fold.

Usage: python benchmarks/prune_rank.py --problems 10 --samples 16 [--orm-backbone tiny|qwen|none]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxPool
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.base import extract_code
from solidcoder.verify.orm import OrmScorer, OrmTrainConfig, build_pairs, train_orm
from solidcoder.verify.rank import MajorityScorer
from solidcoder.verify.table import correctness, format_table, rank_table
from solidcoder.verify.weak import make_verifier

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "humaneval_with_sample_io.jsonl"
GGUF = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def model_path(models_dir: Path) -> Path:
    path = models_dir / GGUF
    if not path.exists():
        subprocess.run(["bash", str(ROOT.parent / "shared" / "models" / "get-gguf"), "qwen-coder-0.5b",
                        str(models_dir)], check=True)
    return path


def generate(problems: list[Problem], n: int, gguf: Path, out: Path) -> None:
    from solidcoder.models.factory import make_model

    model, library = make_model(str(gguf)), PromptLibrary.from_env()
    started, tokens = time.perf_counter(), 0
    with out.open("a") as sink:
        for problem in problems:
            messages = library.messages("strategies/direct", problem=problem.statement, language="Python 3",
                                        io_mode="call", entry_point=problem.entry_point or "")
            for _ in range(n):
                reply = model.complete(messages, temperature=1.0, max_tokens=384)
                tokens += reply.completion_tokens
                code = extract_code(reply.text)
                sink.write(json.dumps({"problem_id": problem.id, "code": code}) + "\n")
                sink.flush()
    seconds = time.perf_counter() - started
    print(f"generated {len(problems) * n} samples, {tokens} tokens in {seconds:.0f} s ({tokens / seconds:.1f} tok/s)")


def read_samples(path: Path) -> dict[str, list[str]]:
    samples: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        samples.setdefault(row["problem_id"], []).append(row["code"])
    return samples


def orm_for(fold: list[Problem], samples, truth, backbone: str, gguf: Path, out: Path) -> OrmScorer:
    rows = [{"problem_id": p.id, "statement": p.statement, "code": code, "correct": truth[p.id][code]}
            for p in fold for code in truth[p.id]]
    pairs = build_pairs(rows, PromptLibrary.from_env())
    tokenizer, model = _backbone(backbone, gguf)
    # The tiny backbone's tokenizer is character-level: a HumanEval prompt plus program needs ~2,000 tokens.
    max_length = 768 if backbone == "qwen" else 4096
    config = OrmTrainConfig(batch_size=2, gradient_accumulation_steps=1, max_steps=max(1, min(40, len(pairs))),
                            max_length=max_length, learning_rate=1e-5 if backbone == "qwen" else 1e-3)
    print(f"ORM ({backbone}): {len(pairs)} pairs from {len(fold)} problems, {config.max_steps} steps")
    train_orm(pairs, model, tokenizer, out, config)
    return OrmScorer(out, max_tokens_per_batch=4 * max_length, max_length=max_length)


def _backbone(kind: str, gguf: Path):
    if kind == "tiny":
        sys.path.insert(0, str(ROOT / "tests"))
        from tiny_models import tiny_reward_model, tiny_tokenizer

        tokenizer = tiny_tokenizer()
        return tokenizer, tiny_reward_model(tokenizer)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForSequenceClassification.from_pretrained(str(gguf.parent), gguf_file=gguf.name, num_labels=1)
    model.config.pad_token_id = tokenizer.pad_token_id or tokenizer.eos_token_id
    return tokenizer, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--orm-backbone", choices=["tiny", "qwen", "none"], default="tiny")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".cache" / "solidcoder-test-models")
    parser.add_argument("--candidates", type=Path, default=ROOT / "benchmarks" / "results" / "prune_rank_samples.jsonl")
    args = parser.parse_args()
    problems, _ = load_dataset("humaneval", DataOptions(data_file=DATA, limit=args.problems))
    gguf = model_path(args.models_dir)
    have = read_samples(args.candidates) if args.candidates.exists() else {}
    missing = [p for p in problems if len(have.get(p.id, [])) < args.samples]
    if missing:
        generate(missing, args.samples, gguf, args.candidates)
    samples = {pid: codes[: args.samples] for pid, codes in read_samples(args.candidates).items()}
    folds = [problems[0::2], problems[1::2]]
    with SandboxPool() as pool, tempfile.TemporaryDirectory() as tmp:
        judge = Judge(pool)
        truth = {p.id: asyncio.run(correctness(p, samples[p.id], judge)) for p in problems}
        chain = [make_verifier(spec, judge) for spec in ("syntax", "lint", "tests:3")]
        for index, fold in enumerate(folds):
            rankers = [MajorityScorer(judge)]
            if args.orm_backbone != "none":
                rankers.append(orm_for(folds[1 - index], samples, truth, args.orm_backbone, gguf,
                                       Path(tmp) / f"orm{index}"))
            print(f"\nfold {index + 1}: {len(fold)} problems, {args.samples} samples each, k={args.k}")
            print(format_table(asyncio.run(rank_table(fold, samples, judge, chain, rankers, args.k)), args.k))


if __name__ == "__main__":
    main()
