"""CodeRL+ steps on one GPU, with vLLM colocated generation or transformers' `generate` (`--no-vllm`); one line of
figures per run: steps, seconds a step, the shares of generation, reward and update, completion tokens a second of
generation, and torch's peak memory allocated and reserved.

    pip install torch==<your CUDA build> -e '.[train,gpu]'
    python benchmarks/train_coderl_plus_gpu.py [--no-vllm] [--steps 4] [--prompts 16] [--rollouts 8]
        [--completion 1024] [--micro-batch 16] [--model DIR_OR_GGUF] [--problems 64] [--memory-stats FILE]

vLLM loads a Hugging Face model directory, so with vLLM a GGUF model (default: Qwen2.5-Coder-0.5B-Instruct from
../shared/models/get-gguf) is first dequantized and saved as one in bfloat16; without vLLM the trainer dequantizes
it itself. Problems: MBPP from ../shared/data. One optimizer update per generation batch unless --mini-batch says
otherwise. The figures line is appended to --out (benchmarks/results/train_coderl_plus_gpu.jsonl); each step's
figures are printed. The allocator is the train command's (expandable segments) unless PYTORCH_CUDA_ALLOC_CONF is
set: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False` measures torch's default allocator.

--memory-stats FILE records torch's allocation history for the run and writes FILE (JSON): torch.cuda.memory_stats()
at the end, and the allocations live at the peak, grouped by the innermost non-torch Python frame that made them
(the KV cache shows as transformers' cache code, activations as the layers' forward), largest first; FILE.pickle is
the raw snapshot for https://pytorch.org/memory_viz. Keep such runs short (--steps 2): the history holds
1,000,000 events. On a CPU the script runs too (--no-vllm, float32; memory figures null), as a smoke check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_coderl_plus_cpu import RESULTS, fetch_model, mbpp_problems  # noqa: E402

HISTORY_EVENTS = 1_000_000


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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm", action=argparse.BooleanOptionalAction, default=True,
                        help="vLLM colocated generation (--no-vllm: transformers' generate)")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--prompts", type=int, default=16, help="prompts per generation batch")
    parser.add_argument("--rollouts", type=int, default=8, help="completions per prompt")
    parser.add_argument("--completion", type=int, default=1024, help="completion token cap")
    parser.add_argument("--micro-batch", type=int, default=16, help="completions per forward and backward")
    parser.add_argument("--mini-batch", type=int, default=None, help="prompts per update (default: --prompts)")
    parser.add_argument("--problems", type=int, default=64)
    parser.add_argument("--model", default=None, help="model directory or GGUF (default: Qwen2.5-Coder-0.5B GGUF)")
    parser.add_argument("--out", type=Path, default=RESULTS / "train_coderl_plus_gpu.jsonl")
    parser.add_argument("--memory-stats", type=Path, default=None, help="JSON of the allocations live at the peak")
    return parser.parse_args()


def run_config(args: argparse.Namespace, model: str, data: Path, out: Path, gpu: bool):
    from solidcoder.train.config import load_config

    precision = {"bf16": True, "model_kwargs": {"dtype": "bfloat16"}} if gpu else {}
    return load_config(None, model=model, data=str(data), out=str(out), max_steps=args.steps, save_steps=10_000,
                       prompt_batch_size=args.prompts, mini_batch_size=args.mini_batch or args.prompts,
                       num_generations=args.rollouts, micro_batch_size=args.micro_batch,
                       max_completion_length=args.completion, use_vllm=args.vllm, vllm_mode="colocate",
                       sandbox_workers=min(14, os.cpu_count() or 1), **precision)


def figures(records: list[dict], args: argparse.Namespace, device: str, wall: float) -> dict:
    """The run's line: sums over the steps, shares of the step time, peaks over the steps."""
    total = sum(r["step_s"] for r in records) or 1.0
    spent = {phase: sum(r[phase + "_s"] for r in records) for phase in ("generation", "reward", "update")}
    tokens = sum(r["generation_tokens_per_s"] * r["generation_s"] for r in records if r["generation_tokens_per_s"])
    peaks = {key: max((r[key] for r in records if r[key] is not None), default=None)
             for key in ("gpu_mem_allocated_gib", "gpu_mem_reserved_gib")}
    return {"device": device, "vllm": args.vllm, "prompts": args.prompts, "rollouts": args.rollouts,
            "completion_tokens": args.completion, "micro_batch": args.micro_batch, "steps": len(records),
            "s_per_step": total / max(1, len(records)), **{f"{p}_share": spent[p] / total for p in spent},
            "generation_tokens_per_s": tokens / spent["generation"] if spent["generation"] else None,
            "peak_allocated_gib": peaks["gpu_mem_allocated_gib"], "peak_reserved_gib": peaks["gpu_mem_reserved_gib"],
            "allocator": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"), "wall_s": wall}


def step_line(r: dict) -> str:
    def shown(value, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return (f"step {r['step']}: {r['step_s']:.1f} s, generation {r['generation_s']:.1f} s "
            f"({shown(r['generation_tokens_per_s'], 0)} tok/s), reward {r['reward_s']:.1f} s, update "
            f"{r['update_s']:.1f} s, allocated {shown(r['gpu_mem_allocated_gib'], 1)} GiB, reserved "
            f"{shown(r['gpu_mem_reserved_gib'], 1)} GiB, align {r['alignment_fraction']}, pass {r['code_pass_rate']}")


def live_at_peak(trace: list[dict]) -> tuple[int, list[dict]]:
    """Bytes live at the highest point of an allocation trace, and those allocations."""
    total, best, best_index = 0, 0, -1
    for index, event in enumerate(trace):
        total += {"alloc": 1, "free_completed": -1}.get(event["action"], 0) * event["size"]
        if total > best:
            best, best_index = total, index
    live: dict[int, dict] = {}
    for event in trace[: best_index + 1]:
        if event["action"] == "alloc":
            live[event["addr"]] = event
        elif event["action"] == "free_completed":
            live.pop(event["addr"], None)
    return best, list(live.values())


def made_by(event: dict) -> str:
    """The innermost Python frame outside torch itself that asked for the allocation."""
    for frame in event.get("frames", []):
        name = frame.get("filename", "")
        if name.endswith(".py") and "/torch/" not in name:
            return f"{name.rsplit('site-packages/', 1)[-1]}:{frame.get('line')} {frame.get('name')}"
    return "(no Python frame outside torch)"


def memory_report(snapshot: dict, stats: dict) -> dict:
    trace = [event for device in snapshot.get("device_traces", []) for event in device]
    peak, live = live_at_peak(trace)
    groups: dict[str, list[int]] = {}
    for event in live:
        groups.setdefault(made_by(event), []).append(event["size"])
    largest = sorted(groups.items(), key=lambda item: -sum(item[1]))[:20]
    keys = ("allocated_bytes.all.peak", "reserved_bytes.all.peak", "active_bytes.all.peak", "num_alloc_retries",
            "num_ooms", "inactive_split_bytes.all.peak", "num_device_alloc")
    return {"trace_events": len(trace), "trace_full": len(trace) >= HISTORY_EVENTS, "peak_in_trace_gib": peak / 2**30,
            "memory_stats": {k: stats.get(k) for k in keys},
            "largest_at_peak": [{"made_by": where, "gib": sum(sizes) / 2**30, "allocations": len(sizes)}
                                for where, sizes in largest]}


def train(cfg, memory_stats: Path | None) -> list[dict]:
    import torch

    from solidcoder.train.trainer import run_training

    if memory_stats is not None:
        torch.cuda.memory._record_memory_history(max_entries=HISTORY_EVENTS, stacks="python")
    lines = run_training(cfg).read_text().splitlines()
    if memory_stats is not None:
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._dump_snapshot(str(memory_stats.with_suffix(".pickle")))
        report = memory_report(snapshot, torch.cuda.memory_stats())
        memory_stats.write_text(json.dumps(report, indent=1) + "\n")
        print(json.dumps(report["largest_at_peak"][:8], indent=1))
    return [json.loads(line) for line in lines]


def main() -> None:
    args = parse_args()
    from solidcoder.train.memory import default_allocator

    default_allocator()  # before torch starts CUDA, as the train command does
    import torch

    from solidcoder.problem import dump_problems

    gpu = torch.cuda.is_available()
    if not gpu and (args.vllm or args.memory_stats):
        raise SystemExit("no GPU: run with --no-vllm and without --memory-stats for a CPU smoke check")
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(fetch_model(Path(tmp) / "gguf"))
        model = hf_directory(model, Path(tmp) / "hf") if args.vllm else model
        data = Path(tmp) / "mbpp.jsonl"
        dump_problems(mbpp_problems(args.problems), data)
        start = time.perf_counter()
        records = train(run_config(args, model, data, Path(tmp) / "run", gpu), args.memory_stats)
        wall = time.perf_counter() - start
    device = torch.cuda.get_device_name() if gpu else "cpu"
    line = figures(records, args, device, wall)
    print("\n".join(step_line(r) for r in records))
    print(json.dumps(line))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as fh:
        fh.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
