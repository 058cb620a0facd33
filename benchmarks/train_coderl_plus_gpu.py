"""A few CodeRL+ steps on one GPU with vLLM colocated generation; prints the step-time shares.

    pip install torch==<your CUDA build> -e '.[train,gpu]'
    python benchmarks/train_coderl_plus_gpu.py [--steps 4] [--model DIR_OR_GGUF] [--problems 64]

vLLM loads a Hugging Face model directory, so a GGUF model (default: Qwen2.5-Coder-0.5B-Instruct from
../shared/models/get-gguf) is first dequantized and saved as one in bfloat16. Problems: MBPP from ../shared/data.
Batches: 16 prompts x 8 rollouts, mini-batch 8 prompts, 1024 completion tokens. Results go to
benchmarks/results/train_coderl_plus_gpu.{jsonl,txt}: per step, generation / reward / update seconds and shares.
Not run on the CPU-only development machines.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_coderl_plus_cpu import RESULTS, fetch_model, mbpp_problems  # noqa: E402


def hf_directory(model: str, dest: Path) -> str:
    """`model` itself unless it is a GGUF file; then a bfloat16 HF directory made from it."""
    if not model.endswith(".gguf"):
        return model
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model)
    AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name).save_pretrained(dest)
    weights = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.bfloat16)
    weights.save_pretrained(dest)
    return str(dest)


def shares(record: dict) -> str:
    total = record["step_s"] or 1.0
    parts = ("generation", "reward", "update")
    return " ".join(f"{p}={record[p + '_s']:.1f}s ({100 * record[p + '_s'] / total:.0f}%)" for p in parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--problems", type=int, default=64)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()

    from solidcoder.problem import dump_problems
    from solidcoder.train.config import load_config
    from solidcoder.train.trainer import run_training

    with tempfile.TemporaryDirectory() as tmp:
        model = hf_directory(args.model or str(fetch_model(Path(tmp) / "gguf")), Path(tmp) / "hf")
        data = Path(tmp) / "mbpp.jsonl"
        dump_problems(mbpp_problems(args.problems), data)
        cfg = load_config(None, model=model, data=str(data), out=str(Path(tmp) / "run"), max_steps=args.steps,
                          save_steps=10_000, prompt_batch_size=16, mini_batch_size=8, micro_batch_size=16,
                          max_completion_length=1024, use_vllm=True, vllm_mode="colocate", bf16=True,
                          model_kwargs={"dtype": "bfloat16"})
        start = time.perf_counter()
        lines = run_training(cfg).read_text().splitlines()
        wall = time.perf_counter() - start
    records = [json.loads(line) for line in lines]
    report = [f"CodeRL+ on GPU with vLLM colocate: {len(records)} steps, wall {wall:.0f} s"]
    report += [f"step {r['step']}: {shares(r)} buffer={r['buffer_size']} align={r['alignment_fraction']:.2f} "
               f"pass={r['code_pass_rate']}" for r in records]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "train_coderl_plus_gpu.jsonl").write_text("\n".join(lines) + "\n")
    (RESULTS / "train_coderl_plus_gpu.txt").write_text("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
