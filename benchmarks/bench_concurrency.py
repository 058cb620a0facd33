"""Bench runner concurrency: wall time of a 40-problem Direct run at concurrency 1, 8 and 32.

A scripted OpenAI-compatible server (tests/scripted_server.py, real HTTP on 127.0.0.1) answers every call after
200 ms with the problem's canonical HumanEval solution (in its own process, like a real model server, so that its
threads do not share this process's GIL); every answer is judged on the hidden tests in the real
sandbox, exactly as in a real run. The model client is warmed up first so the openai import is not timed.
Speed-up is over concurrency 1; with 40 problems, concurrency c needs ceil(40 / c) waves of calls, so the best
possible speed-up is 40 / ceil(40 / c) (20 at c = 32), which is printed next to the target 0.9 x c.
`--no-judge` replaces the sandbox verdict by "passed" to measure the runner and the HTTP layer alone: on a small
machine the sandbox (not the model calls) bounds the end-to-end speed-up at high concurrency.

    python benchmarks/bench_concurrency.py [--problems 40 (past 164, copies)] [--delay 0.2] [--levels 1 8 32]
        [--no-judge]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import sys
import tempfile
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bench_support import HUMANEVAL, canonical_responder  # noqa: E402
from scripted_server import ScriptedServer  # noqa: E402

from solidcoder.bench.runner import BenchRunner, RunSpec  # noqa: E402
from solidcoder.bench.tasks import CodeTask  # noqa: E402
from solidcoder.datasets import DataOptions, load_dataset  # noqa: E402
from solidcoder.execution.judge import JudgeReport, TestVerdict  # noqa: E402
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool  # noqa: E402
from solidcoder.models.base import Message  # noqa: E402
from solidcoder.models.factory import ModelOptions, make_model  # noqa: E402
from solidcoder.prompting import PromptLibrary  # noqa: E402
from solidcoder.store import ResultStore  # noqa: E402
from solidcoder.strategies import make_strategy  # noqa: E402


class UnjudgedTask(CodeTask):
    """Every answer passes without running: isolates the runner and HTTP layer from sandbox throughput."""

    async def judged(self, problem, code, tests) -> JudgeReport:
        return JudgeReport([TestVerdict(i, "pass") for i in range(len(tests))], total=len(tests))


async def timed_run(url: str, problems, pool: SandboxPool, concurrency: int, run_dir: Path,
                    judge: bool) -> tuple[float, float, int]:
    model = make_model("openai/scripted-model", ModelOptions(api_base=url))
    await model.acomplete([Message("user", "warm up")])  # the client and its import are not part of the run
    task = (CodeTask if judge else UnjudgedTask)(problems, make_strategy("direct"), PromptLibrary.from_env(), pool)
    store = ResultStore(run_dir)
    start, cpu = time.perf_counter(), time.process_time()
    runner = BenchRunner(spec=RunSpec("humaneval", "direct", "m", "h"), task=task, model=model, store=store,
                         concurrency=concurrency)
    totals = await runner.run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    store.close()
    client = getattr(model, "_aclient", None)
    if client is not None:  # close it on this loop, not at garbage collection after the loop is gone
        await client.close()
    return wall, cpu, totals.passed


def with_copies(problems: list, count: int) -> list:
    """The first `count` problems, cycling through copies under new ids past the end (HumanEval has 164): at
    concurrency 32 the speed-up bound count / ceil(count / 32) only nears 32 with a few hundred units."""
    copies = []
    for i in range(count):
        problem = problems[i % len(problems)]
        copies.append(problem if i < len(problems) else replace(problem, id=f"{problem.id}~{i // len(problems)}"))
    return copies


def serve(delay: float, conn, stop) -> None:
    # http.server listens with a backlog of 5: 32 simultaneous connects overflow it, and the kernel drops SYNs
    # that the client only retries after a second. Real model servers listen with a deep backlog; so does this one.
    # It also writes headers and body in two sends, which Nagle + delayed ACK turn into a 40 ms stall per reply.
    ThreadingHTTPServer.request_queue_size = 256
    BaseHTTPRequestHandler.disable_nagle_algorithm = True
    with ScriptedServer() as server:
        server.responder = canonical_responder(delay_s=delay)
        conn.send(server.url)
        stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-judge", action="store_true", help="skip the sandbox verdicts (runner + HTTP only)")
    args = parser.parse_args()
    problems = with_copies(load_dataset("humaneval", DataOptions(data_file=HUMANEVAL))[0], args.problems)
    print(f"{len(problems)} HumanEval problems, Direct, every call answered after {args.delay * 1000:.0f} ms, "
          + ("not judged (--no-judge)" if args.no_judge else
             f"judged on hidden tests in a {args.workers}-worker sandbox pool"))
    print(f"{'concurrency':>11} {'wall s':>8} {'cpu s':>6} {'passed':>7} {'speed-up':>9} {'target 0.9c':>11} "
          f"{'wave bound':>10}")
    base = None
    parent, child = multiprocessing.Pipe()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(args.delay, child, stop), daemon=True)
    server.start()
    url = parent.recv()
    with SandboxPool(SandboxConfig(workers=args.workers)) as pool:
        for level in args.levels:
            with tempfile.TemporaryDirectory() as tmp:
                wall, cpu, passed = asyncio.run(timed_run(url, problems, pool, level, Path(tmp), not args.no_judge))
            base = base or wall
            bound = len(problems) / math.ceil(len(problems) / level)
            print(f"{level:>11} {wall:>8.2f} {cpu:>6.2f} {passed:>7} {base / wall:>8.1f}x {0.9 * level:>10.1f}x "
                  f"{bound:>9.1f}x")
    stop.set()
    server.join(5)


if __name__ == "__main__":
    main()
