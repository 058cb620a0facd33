"""Wall time per problem on the embedded llama.cpp engine: threads and the prompt cache, before and after, in one run.

Runs `solidcoder bench` on the same problems three times, each in a fresh run directory and process:
  before        one thread (llama.cpp's own default on a 2-core machine), no prompt cache;
  threads       one thread per physical core (solidcoder's default), no prompt cache;
  threads+cache the same with `prompt_cache_mb` set (a RAM cache of model states, models.yaml).
The thread count is set through the CPU affinity (`taskset`), which is what `physical_cores()` reads. The strategy
should be greedy (the default, Algorithm 1 as the paper sets it, is) so the three runs make the same calls; the
script says whether their replies were identical. Figures: wall seconds per problem (the run's, process start
included, over its problems), model seconds per problem,
completion tokens per model second, and each against `before`.

    python benchmarks/llamacpp_per_problem.py GGUF --data-file ../shared/data/humaneval_with_sample_io.jsonl \
        [--dataset humaneval] [--limit 3] [--strategy solidcoder] [--max-calls 12] [--cache-mb 1024]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from solidcoder.models.llamacpp import physical_cores


def bench(args: argparse.Namespace, run_dir: Path, cpus: int, cache_mb: int) -> tuple[list[dict], float]:
    """The rows of one bench run pinned to the first `cpus` CPUs, with the prompt cache at `cache_mb`, and its
    wall time (a row's own wall_s overlaps other problems': bench runs problems side by side)."""
    models = run_dir.parent / f"{run_dir.name}.yaml"
    models.write_text(f"defaults:\n  prompt_cache_mb: {cache_mb}\n")
    allowed = sorted(os.sched_getaffinity(0))[:cpus]
    command = ["taskset", "-c", ",".join(map(str, allowed)), sys.executable, "-m", "solidcoder", "bench",
               "--dataset", args.dataset, "--data-file", str(args.data_file), "--limit", str(args.limit),
               "--strategy", args.strategy, "--model", str(args.gguf), "--max-tokens", "512",
               "--max-calls", str(args.max_calls), "--concurrency", "1", "--workers", "1", "--run-dir", str(run_dir)]
    started = time.perf_counter()
    subprocess.run(command, check=True, env={**os.environ, "SOLIDCODER_MODELS": str(models)},
                   stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - started
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()], elapsed


def replies(run_dir: Path) -> list[str]:
    lines = (run_dir / "calls.jsonl").read_text().splitlines()
    return [json.loads(line)["completion"]["text"] for line in sorted(lines)]


def summary(rows: list[dict], elapsed: float) -> tuple[float, float, float]:
    """(wall s per problem, model s per problem, completion tokens per model second)."""
    model = sum(r["model_s"] for r in rows)
    return elapsed / len(rows), model / len(rows), sum(r["completion_tokens"] for r in rows) / model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("--data-file", type=Path, required=True)
    parser.add_argument("--dataset", default="humaneval")
    parser.add_argument("--limit", type=int, default=3)
    parser.add_argument("--strategy", default="solidcoder")
    parser.add_argument("--max-calls", type=int, default=12)
    parser.add_argument("--cache-mb", type=int, default=1024)
    args = parser.parse_args()
    settings = {"before": (1, 0), "threads": (physical_cores(), 0), "threads+cache": (physical_cores(), args.cache_mb)}
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {name: Path(tmp) / name.replace("+", "_") for name in settings}
        found = {name: bench(args, dirs[name], *s) for name, s in settings.items()}
        same = {name: replies(dirs[name]) == replies(dirs["before"]) for name in found}
    calls = sum(r["calls"] for r in found["before"][0])
    print(f"{args.strategy} on {args.dataset} 0-{args.limit - 1}, --max-calls {args.max_calls}: {calls} calls")
    base = summary(*found["before"])
    for name, (rows, elapsed) in found.items():
        wall, model, speed = summary(rows, elapsed)
        cpus, cache = settings[name]
        print(f"{name:14s} {cpus} thread(s), cache {cache:4d} MB: {wall:6.1f} s/problem ({base[0] / wall:.2f}x), "
              f"model {model:6.1f} s/problem ({base[1] / model:.2f}x), {speed:5.1f} completion tokens/model s; "
              f"replies identical to before: {same[name]}")


if __name__ == "__main__":
    main()
