"""What parsing.py's lock costs: `parse_python` (bounds + lock) against a bare `ast.parse` on real model replies.

The programs are those of the recorded replies of a run directory's calls.jsonl that parse (default: the HumanEval
164 run), each parsed `--repeats` times both ways in one process, interleaved; prints the per-parse figures and
their ratio.

    python benchmarks/parse_lock.py [--calls benchmarks/results/humaneval164_qwen05b/calls.jsonl] [--repeats 20]
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from pathlib import Path

from solidcoder.parsing import parse_python
from solidcoder.stages.base import extract_code


def programs(calls: Path) -> list[str]:
    rows = (json.loads(line) for line in calls.read_text().splitlines() if line.strip())
    texts = [text for row in rows for text in row["completion"].get("choices") or [row["completion"]["text"]]]
    found = [extract_code(text) for text in texts]
    return [code for code in found if code.strip() and _parses(code)]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def timed(parse, codes: list[str], repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        for code in codes:
            parse(code)
    return (time.perf_counter() - start) / (repeats * len(codes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Path, default=Path("benchmarks/results/humaneval164_qwen05b/calls.jsonl"))
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    codes = programs(args.calls)
    bare, entry = [], []
    for _ in range(3):  # interleaved rounds: drift on a busy machine hits both alike
        bare.append(timed(ast.parse, codes, args.repeats))
        entry.append(timed(parse_python, codes, args.repeats))
    b, e = min(bare), min(entry)
    print(f"{len(codes)} programs, mean {sum(map(len, codes)) / len(codes):,.0f} characters; best of 3 rounds")
    print(f"ast.parse:    {b * 1e6:8.1f} us per parse")
    print(f"parse_python: {e * 1e6:8.1f} us per parse (bounds + lock): {e / b:.3f}x, +{(e - b) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
