"""Agreement of solidcoder's C++ verdicts with a plain `g++ -std=c++17 -O2 && ./a.out < input` harness.

The corpus and both harnesses are tests/test_cpp_agreement.py's: the C++ programs of tests/fixtures/cpp_agreement/
(right, wrong, slow, crash and broken ones for CodeContests and APPS stdin problems), each judged on the first tests
of its problem under a 1 s limit by `Judge` on a sandbox pool and by the plain harness, which compares outputs by
the dataset's rule with its own code. A program agrees when both give the same verdict: pass, or the same first
failing test with the same kind (wrong answer, time limit, runtime error, compile error). Prints the agreement
overall and per kind (the kind the program's name claims), every program's two verdicts with --verbose, and every
disagreement; `--out FILE` writes the same text. Always exits 0: it is a measurement.

    python benchmarks/cpp_agreement.py [--workers 2] [--out FILE] [--verbose]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_cpp_agreement import KINDS, TIME_LIMIT_S, corpus, judge_verdict, plain_verdict  # noqa: E402

from solidcoder.execution.sandbox import SandboxConfig, SandboxPool  # noqa: E402


def compared(workers: int) -> list[tuple]:
    """(program, plain verdict, judge verdict) for every program of the corpus."""
    rows = []
    with SandboxPool(SandboxConfig(workers=workers)) as pool, tempfile.TemporaryDirectory() as tmp:
        for number, program in enumerate(corpus()):
            workdir = Path(tmp) / str(number)
            workdir.mkdir()
            rows.append((program, plain_verdict(program, workdir), judge_verdict(pool, program)))
    return rows


def summary(rows: list[tuple], verbose: bool) -> list[str]:
    agreed = [program for program, plain, judged in rows if plain == judged]
    lines = [f"programs: {len(rows)} over {len({p.problem for p, _, _ in rows})} problems; time limit "
             f"{TIME_LIMIT_S:g} s; agreed: {len(agreed)} of {len(rows)} ({100 * len(agreed) / len(rows):.1f}%)"]
    total, same = Counter(p.kind for p, _, _ in rows), Counter(p.kind for p in agreed)
    claimed = Counter(p.kind for p, plain, _ in rows if plain.kind == KINDS[p.kind])
    lines.append(f"{'kind':<8} {'programs':>8} {'agreed':>7} {'plain verdict as named':>23}")
    lines += [f"{kind:<8} {total[kind]:>8} {same[kind]:>7} {claimed[kind]:>23}" for kind in KINDS]
    shown = rows if verbose else [row for row in rows if row[1] != row[2]]
    lines += [f"{'  ' if plain == judged else 'DISAGREE'} {p.path.name}: plain {plain}; judge {judged}"
              for p, plain, judged in shown]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--verbose", action="store_true", help="every program's two verdicts, not only disagreements")
    args = parser.parse_args()
    if shutil.which("g++") is None:
        sys.exit("g++ is not installed")
    start = time.perf_counter()
    rows = compared(args.workers)
    lines = [f"sandbox: {args.workers} workers", *summary(rows, args.verbose),
             f"wall time: {time.perf_counter() - start:.0f} s"]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
