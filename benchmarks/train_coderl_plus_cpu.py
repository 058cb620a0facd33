"""A few CodeRL+ steps on a CPU: Qwen2.5-Coder-0.5B-Instruct dequantized from GGUF, MBPP problems from shared data.

    python benchmarks/train_coderl_plus_cpu.py [--steps 3] [--problems 16] [--models DIR]

Fetches the GGUF with ../shared/models/get-gguf (into --models), converts a few MBPP problems from
../shared/data/mbpp_397.jsonl, trains with small batches (the paper's batch sizes are for GPUs) and writes the
metrics log to benchmarks/results/train_coderl_plus_cpu.jsonl and a summary to ..._cpu.txt. The trained weights
go to a temporary directory and are deleted.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "benchmarks" / "results"


def fetch_model(models_dir: Path) -> Path:
    done = subprocess.run(["bash", str(SHARED / "models" / "get-gguf"), "qwen-coder-0.5b", str(models_dir)],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip().splitlines()[-1])


def mbpp_problems(count: int):
    from solidcoder.datasets import DataOptions, load_dataset

    problems, _ = load_dataset("mbpp", DataOptions(data_file=SHARED / "data" / "mbpp_397.jsonl"))
    return [p for p in problems if p.all_tests][:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--problems", type=int, default=16)
    parser.add_argument("--models", type=Path, default=Path.home() / ".cache" / "solidcoder-test-models")
    parser.add_argument("--max-completion", type=int, default=192)
    args = parser.parse_args()

    from solidcoder.problem import dump_problems
    from solidcoder.train.config import load_config
    from solidcoder.train.trainer import run_training

    gguf = fetch_model(args.models)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "mbpp.jsonl"
        dump_problems(mbpp_problems(args.problems), data)
        cfg = load_config(None, model=str(gguf), data=str(data), out=str(Path(tmp) / "run"), alpha=0.4,
                          max_steps=args.steps, save_steps=10_000, num_generations=4, prompt_batch_size=2,
                          mini_batch_size=2, micro_batch_size=4, max_completion_length=args.max_completion,
                          temperature=0.8, sandbox_workers=2)
        start = time.perf_counter()
        metrics = run_training(cfg)
        wall = time.perf_counter() - start
        lines = metrics.read_text().splitlines()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "train_coderl_plus_cpu.jsonl").write_text("\n".join(lines) + "\n")
    (RESULTS / "train_coderl_plus_cpu.txt").write_text(summary([json.loads(x) for x in lines], cfg, wall))
    print(summary([json.loads(x) for x in lines], cfg, wall))


def summary(records: list[dict], cfg, wall: float) -> str:
    head = (f"CodeRL+ on CPU ({platform.processor() or platform.machine()}), model {Path(cfg.model).name} "
            f"dequantized from GGUF, {cfg.max_steps} steps, {cfg.prompt_batch_size} prompts x {cfg.num_generations} "
            f"rollouts, max {cfg.max_completion_length} completion tokens, alpha {cfg.alpha}; wall {wall:.0f} s\n")
    cols = ["step", "generation_s", "reward_s", "update_s", "code_pass_rate", "alignment_reward", "buffer_size",
            "alignment_fraction", "sandbox_errors_total"]
    rows = [" ".join(f"{c}={_fmt(r.get(c))}" for c in cols) for r in records]
    return head + "\n".join(rows) + "\n"


def _fmt(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    main()
