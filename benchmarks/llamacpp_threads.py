"""Tokens per second of the embedded llama.cpp engine: one thread (llama.cpp's own default on a 2-core machine,
half the logical CPUs) against `physical_cores()` threads (solidcoder's default), measured in the same run.

Usage: python benchmarks/llamacpp_threads.py GGUF [--tokens N] [--repeats R]
Each setting loads the model once, then generates N tokens greedily R times from the same HumanEval-style prompt;
the figure is completion tokens over generation wall time (prompt processing included, as in a real call).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from solidcoder.models.base import Message
from solidcoder.models.llamacpp import LlamaCppModel, physical_cores
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import load_settings

PROMPT = [Message("user", "Write a Python function `running_max(xs)` that returns the list of running maxima of "
                          "xs, with a docstring and three doctest examples. Explain each step first.")]


def rate(gguf: Path, threads: int, tokens: int, repeats: int) -> tuple[float, float]:
    """(tokens per second, seconds per call) over `repeats` greedy calls of at most `tokens` tokens."""
    model = LlamaCppModel(gguf, load_settings().get(gguf.stem), RetryPolicy(attempts=1), n_threads=threads)
    model.complete(PROMPT, temperature=0.0, max_tokens=8)  # load the weights before timing
    started, made = time.perf_counter(), 0
    for _ in range(repeats):
        made += model.complete(PROMPT, temperature=0.0, max_tokens=tokens).completion_tokens
    elapsed = time.perf_counter() - started
    return made / elapsed, elapsed / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results = {threads: rate(args.gguf, threads, args.tokens, args.repeats) for threads in (1, physical_cores())}
    for threads, (speed, per_call) in results.items():
        print(f"{threads} thread(s): {speed:5.1f} tokens/s, {per_call:5.1f} s per {args.tokens}-token call")
    one, default = results[1][0], results[physical_cores()][0]
    print(f"physical_cores() = {physical_cores()}: {default / one:.2f}x the tokens/s of one thread")


if __name__ == "__main__":
    main()
