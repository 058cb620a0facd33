"""Median wall time of `solidcoder --help` and `solidcoder prompts list`, each in a fresh process.

Heavy libraries (litellm, openai, llama_cpp) must be imported lazily, inside commands that need them, so these stay
fast. Uses the installed `solidcoder` script when on PATH, else `python -m solidcoder`.

    python benchmarks/cli_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 0.4
COMMANDS = (["--help"], ["prompts", "list"])


def launcher() -> list[str]:
    script = shutil.which("solidcoder")
    return [script] if script else [sys.executable, "-m", "solidcoder"]


def median_wall(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=Path(__file__).resolve().parents[1])
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    base = launcher()
    median_wall(base + ["--help"], 2)  # warm the OS file cache and bytecode cache before measuring
    worst = 0.0
    print(f"launcher: {' '.join(base)}; {runs} fresh processes each; target <= {TARGET_S:.2f} s")
    for args in COMMANDS:
        median = median_wall(base + args, runs)
        worst = max(worst, median)
        print(f"solidcoder {' '.join(args):14} median {median:.3f} s")
    print(f"{'PASS' if worst <= TARGET_S else 'FAIL'}: slowest median {worst:.3f} s vs target {TARGET_S:.2f} s")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
