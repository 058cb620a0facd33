"""The outcome reward model (ORM): a causal-LM backbone with a scalar head that scores (problem, program).

Scoring batches by a token budget rather than a fixed batch size: texts are sorted by length and packed while
(batch size x longest text) stays under the budget, so short programs go through in large batches and a long
one never runs out of memory. Training pairs come from bench result files: for problems with at least one
correct and one incorrect candidate, at most six of each (syntax errors removed), every correct x incorrect
pair, trained with TRL's RewardTrainer (Bradley-Terry loss, -log sigmoid(r_correct - r_incorrect)).
torch, transformers and trl are imported lazily: they are the `train` extra.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from solidcoder.errors import BadInput
from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.store import ResultRow
from solidcoder.verify.rank import Candidate, normalize
from solidcoder.verify.weak import _parses


def orm_text(library: PromptLibrary, statement: str, code: str) -> str:
    return library.render("verify/orm", problem=statement, code=code)


def token_budget_batches(lengths: list[int], max_tokens: int) -> list[list[int]]:
    """Indices grouped so that len(batch) * max(length in batch) <= max_tokens (a lone long text still runs)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for index in order:
        if batches and (len(batches[-1]) + 1) * lengths[index] <= max_tokens:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


@functools.cache
def loaded_scorer(path: str) -> OrmScorer:
    """One scorer per ORM directory and process: loading the model is the cost, scoring is cheap."""
    return OrmScorer(path)


class OrmScorer:
    """Scores candidates with a trained ORM checkpoint (a directory saved by `train_orm`)."""

    name = "orm"

    def __init__(self, path: str | Path, max_tokens_per_batch: int = 16384, max_length: int = 2048,
                 library: PromptLibrary | None = None) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if not Path(path).is_dir():
            raise BadInput(f"no such ORM model directory: {path}")
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.model = AutoModelForSequenceClassification.from_pretrained(str(path), num_labels=1).eval()
        self.max_tokens, self.max_length = max_tokens_per_batch, max_length
        self.library = library or PromptLibrary.from_env()

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        """The ORM's score of each candidate, computed in a worker thread (the model's forward passes, not the
        sandbox: they would hold up the event loop)."""
        texts = [orm_text(self.library, problem.statement, c.code) for c in candidates]
        return await asyncio.to_thread(self.score_texts, texts)

    def score_texts(self, texts: list[str]) -> list[float]:
        import torch

        encoded = [self.tokenizer(t, truncation=True, max_length=self.max_length)["input_ids"] for t in texts]
        scores = [0.0] * len(texts)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for batch in token_budget_batches([len(e) for e in encoded], self.max_tokens):
            width = max(len(encoded[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):  # right padding: the head reads the last non-pad token
                ids[row, : len(encoded[i])] = torch.tensor(encoded[i])
                mask[row, : len(encoded[i])] = 1
            with torch.no_grad():
                logits = self.model(input_ids=ids, attention_mask=mask).logits[:, 0]
            for row, i in enumerate(batch):
                scores[i] = float(logits[row])
        return scores


@dataclass
class OrmTrainConfig:
    """Training settings for the ORM. The defaults are the project's (quick, for small runs); `preset("paper")` is
    the ORM paper's setting. `seeds` trains one ORM per seed, each under `run_dir/seed-N` when there are several."""

    learning_rate: float = 1e-5
    epochs: float = 1.0
    batch_size: int = 8
    gradient_accumulation_steps: int = 4
    max_length: int = 2048
    max_per_side: int = 6
    warmup_steps: int = 0
    warmup_ratio: float = 0.0
    lr_scheduler: str = "linear"
    max_steps: int = -1
    seed: int = 0
    seeds: tuple[int, ...] = (0,)


# The ORM paper's training: lr 5e-6 with a cosine schedule and 10 % warmup, 2 epochs, batch 64 (8 x 8 accumulated),
# at most 6 programs per side, 3 seeds.
ORM_PRESETS = {
    "default": OrmTrainConfig(),
    "paper": OrmTrainConfig(learning_rate=5e-6, epochs=2.0, batch_size=8, gradient_accumulation_steps=8,
                            warmup_ratio=0.1, lr_scheduler="cosine", max_per_side=6, seeds=(0, 1, 2)),
}


def orm_preset(name: str, **overrides) -> OrmTrainConfig:
    """A named preset with the given (non-None) fields replaced; BadInput for an unknown name."""
    if name not in ORM_PRESETS:
        raise BadInput(f"unknown --preset {name!r}; choose one of: {', '.join(ORM_PRESETS)}")
    return replace(ORM_PRESETS[name], **{k: v for k, v in overrides.items() if v is not None})


def build_pairs(rows: list[dict], library: PromptLibrary, max_per_side: int = 6, seed: int = 0) -> list[dict]:
    """Bradley-Terry pairs from candidate rows {problem_id, statement, code, correct}."""
    by_problem: dict[str, dict[bool, dict[str, str]]] = defaultdict(lambda: {True: {}, False: {}})
    statements = {}
    for row in rows:
        if not _parses(row["code"]):
            continue  # syntax errors teach the ORM nothing a parser does not already know
        by_problem[row["problem_id"]][bool(row["correct"])].setdefault(normalize(row["code"]), row["code"])
        statements[row["problem_id"]] = row["statement"]
    rng, pairs = random.Random(seed), []
    for pid, sides in sorted(by_problem.items()):
        good = rng.sample(sorted(sides[True].values()), min(max_per_side, len(sides[True])))
        bad = rng.sample(sorted(sides[False].values()), min(max_per_side, len(sides[False])))
        pairs += [{"chosen": orm_text(library, statements[pid], g), "rejected": orm_text(library, statements[pid], b)}
                  for g in good for b in bad]
    return pairs


def read_candidate_rows(path: Path, statements: dict[str, str]) -> list[dict]:
    """Candidate rows {problem_id, statement, code, correct} from a JSONL file of them or a bench results file.

    Bench rows name the problem `id` and the outcome `passed`; statements missing from a row come from
    `statements` (the dataset's problems by id).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInput(f"cannot read {path}: {exc.strerror or exc}") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            pid, statement, code, correct = _candidate(json.loads(line), statements)
            rows.append({"problem_id": pid, "statement": statement, "code": code, "correct": correct})
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise BadInput(f"{path}:{number}: not a candidate row ({exc})") from None
        if statement is None:
            raise BadInput(f"{path}:{number}: problem {pid!r} is not in the dataset given")
    return rows


def _candidate(row: dict, statements: dict[str, str]) -> tuple[str, str | None, str, bool]:
    """(problem id, statement, code, correct) of a candidate row, or of a bench result row (store.py: `ResultRow`; the
    problem is its `id`, correct its `passed`); a statement the row lacks comes from `statements`."""
    if "problem_id" in row or "correct" in row:
        pid = str(row.get("problem_id", row.get("id")))
        correct = row["correct"] if "correct" in row else row["passed"]
        return pid, row.get("statement", statements.get(pid)), row["code"], bool(correct)
    result = ResultRow.from_dict(row)
    if result.code is None or result.passed is None:
        raise KeyError("code" if result.code is None else "passed")
    return str(result.id), statements.get(str(result.id)), result.code, result.passed


def run_train_orm(data: Path, statements: dict[str, str], base: str, out: Path, config: OrmTrainConfig) -> int:
    """`solidcoder train orm`: pairs from `data`, a scalar head on `base`, trained and saved once per seed (under
    `out/seed-N` when there are several); returns the number of pairs of one run."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rows = read_candidate_rows(data, statements)
    for seed in config.seeds:
        pairs = build_pairs(rows, PromptLibrary.from_env(), config.max_per_side, seed)
        tokenizer = AutoTokenizer.from_pretrained(base)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
        model.config.pad_token_id = tokenizer.pad_token_id
        target = out if len(config.seeds) == 1 else out / f"seed-{seed}"
        train_orm(pairs, model, tokenizer, target, replace(config, seed=seed))
    return len(pairs)


def train_orm(pairs: list[dict], base_model, tokenizer, out_dir: Path, config: OrmTrainConfig) -> Path:
    """Train with TRL's RewardTrainer and save model + tokenizer to `out_dir`.

    `base_model` is a model name/path or an AutoModelForSequenceClassification instance (tests build a tiny
    one from a config). The defaults are conservative reward-model settings; they were not checked against the
    paper's appendix here (no internet), so set them from there for a faithful reproduction.
    """
    from datasets import Dataset
    from trl import RewardTrainer

    if not pairs:
        raise BadInput("no training pairs: need problems with at least one correct and one incorrect candidate")
    args = reward_args(config, out_dir)
    trainer = RewardTrainer(model=base_model, args=args, train_dataset=Dataset.from_list(pairs),
                            processing_class=tokenizer)
    trainer.train()
    trainer.save_model(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return out_dir


def reward_args(config: OrmTrainConfig, out_dir: Path):
    """TRL's RewardConfig for one training run of `config` (its `seed`)."""
    from trl import RewardConfig

    return RewardConfig(
        output_dir=str(out_dir), learning_rate=config.learning_rate, num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.gradient_accumulation_steps,
        # transformers 5 reads a warmup_steps float in [0, 1) as a share of the steps (it has no warmup_ratio)
        max_length=config.max_length, warmup_steps=config.warmup_ratio or config.warmup_steps,
        lr_scheduler_type=config.lr_scheduler, max_steps=config.max_steps, seed=config.seed, report_to=[],
        save_strategy="no", logging_steps=1, use_cpu=not _has_gpu(), bf16=_has_gpu() and _gpu_has_bf16(),
    )


def _has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def _gpu_has_bf16() -> bool:
    """TRL's configs default to bfloat16; on a CPU without bfloat16 units that falls back to a scalar matrix product,
    measured 10x slower here (152 s for one optimizer step of two pairs)."""
    import torch

    return torch.cuda.is_bf16_supported()
