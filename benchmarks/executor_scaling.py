"""Executor overhead: programs per second through the local sandbox pool and through the Ray executor, same machine.

Both executors get the same number of sandbox workers (one per CPU) and the same programs, measured in the same
run, one after the other:
  trivial    a program that does nothing (the per-run cost is all overhead)
  humaneval  a HumanEval check judged by `Judge` (prompt + canonical solution, then `check`), cycling the
             problems whose check takes under 1 ms in-process (the same selection as sandbox_throughput.py)
  stdin      a program that sums 1000 numbers from stdin
Throughput uses 2 x workers runs in flight (so the Ray hop can overlap another run); latency is one run at a
time, which shows the hop itself. On one machine Ray can only add cost: the point is to know how much, since
on a cluster it is what each extra node's cores are bought with.

Usage: python benchmarks/executor_scaling.py [--seconds S] [--data PATH]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import ray
from sandbox_throughput import DEFAULT_DATA, STDIN_DATA, STDIN_PROGRAM, humaneval_cases, in_process_seconds, rate

from solidcoder.execution.executor import make_executor
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import Limits, SandboxConfig


def workloads(executor, typical: list) -> dict:
    judge = Judge(executor)

    def check(case) -> None:
        if not judge.judge(*case).passed:
            raise SystemExit(f"{case[0].id}: the canonical solution failed; the figures would lie")

    return {"trivial": (lambda _: executor.run_program("pass"), [None]),
            "humaneval": (check, typical),
            "stdin": (lambda _: executor.run_program(STDIN_PROGRAM, STDIN_DATA), [None])}


def measure(executor, typical: list, workers: int, seconds: float) -> dict[str, tuple[float, float]]:
    """{workload: (runs per second with 2 x workers in flight, ms per run one at a time)}"""
    figures = {}
    for name, (work, items) in workloads(executor, typical).items():
        throughput = rate(work, items, 2 * workers, seconds)
        latency = 1000.0 / rate(work, items, 1, seconds / 2)
        figures[name] = (throughput, latency)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per throughput figure")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="HumanEval JSONL with canonical solutions")
    args = parser.parse_args()
    workers = os.cpu_count() or 1
    typical = [case for case in humaneval_cases(args.data) if in_process_seconds(*case) < 1e-3]
    print(f"workers={workers} per executor; load average at start {os.getloadavg()[0]:.2f}; "
          f"{len(typical)} typical HumanEval checks")
    config, limits = SandboxConfig(workers=workers), Limits(wall_s=10.0)
    with make_executor("local", config, limits) as pool:
        local = measure(pool, typical, workers, args.seconds)
    started = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    with make_executor("ray", config, limits) as executor:
        ready_s = time.perf_counter() - started
        remote = measure(executor, typical, workers, args.seconds)
    ray.shutdown()
    print(f"Ray start (ray.init + one actor with its pool): {ready_s:.1f} s")
    print(f"{'workload':10s} {'local/s':>9s} {'ray/s':>9s} {'ray/local':>9s}   {'local ms':>8s} {'ray ms':>8s} "
          f"{'hop ms':>7s}")
    for name in local:
        (fast, lat), (slow, rlat) = local[name], remote[name]
        print(f"{name:10s} {fast:9.1f} {slow:9.1f} {slow / fast:9.2f}   {lat:8.2f} {rlat:8.2f} {rlat - lat:7.2f}")
    fast, slow = local["humaneval"][0], remote["humaneval"][0]
    print(f"HumanEval checks: {fast:.0f}/s local, {slow:.0f}/s through Ray on this machine "
          f"({100 * (1 - slow / fast):.0f}% overhead)")


if __name__ == "__main__":
    main()
