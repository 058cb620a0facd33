"""A built program's stdio tests in groups, one sandbox run per group (`inside/batch.py`), each test still a process
of its own with its own limits and nothing left from the test before.

A run's start (a confined clone, its namespaces and mounts) costs several times what a small binary's start does,
so a check of many small tests pays mostly for runs. Grouped, a C++ check of small tests costs no more than a Python
check of the same tests (`benchmarks/sandbox_throughput.py`). Groups are contiguous, at most `MAX_GROUP` tests and
`MAX_GROUP_INPUT` bytes of input each, as many as the pool has workers when the tests allow; a test a group did not
report (its batch stopped: killed from outside, output over the batch's cap, a run that failed) runs on its own,
where every limit has its usual verdict. Only where each run has its own PID namespace (`kill(-1)` between tests
must reach nothing else) and only for a binary run in place; otherwise every test is a run of its own. `parts`
reads a group's report back into one result per test (the pool calls it as it reads the run, `ExecResult.parts`).
"""

from __future__ import annotations

import math
import signal
from collections.abc import Generator
from dataclasses import replace

from solidcoder.execution.executor import Executor
from solidcoder.execution.inside.batch import KEPT_STDERR, MAX_OUTPUT
from solidcoder.execution.runs import CRASH_SIGNALS, ExecResult, Limits

MAX_GROUP = 16
MAX_GROUP_INPUT = 8 << 20
SLACK_S = 0.2  # per test, for starting it and emptying the run's folders after it
_TEST_CRASHES = CRASH_SIGNALS - {signal.SIGXFSZ}  # a grouped test ending so has the verdict a run of its own has

Step = Generator[list[tuple[dict, str | bytes, Limits]], list[ExecResult], list[ExecResult]]


def run_tests(pool: Executor, job: dict, inputs: list[str], limits: Limits) -> Step:
    """The results of `job` on each input, in order: grouped where it pays, the rest one run each."""
    groups = _groups(pool, job, [len(text) for text in inputs])
    if not groups:
        return (yield [(job, text, limits) for text in inputs]) if inputs else []
    runs = yield [group_job(job, [inputs[i] for i in group], limits) for group in groups]
    found = {index: part for group, run in zip(groups, runs, strict=True)
             for index, part in zip(group, run.parts, strict=False)}
    missing = [index for index in range(len(inputs)) if index not in found]
    if missing:
        found.update(zip(missing, (yield [(job, inputs[i], limits) for i in missing]), strict=True))
    return [found[index] for index in range(len(inputs))]


def group_job(job: dict, inputs: list[str], limits: Limits) -> tuple[dict, bytes, Limits]:
    """One run of `job` on every input: its job, stdin (the inputs one after another) and the run's limits."""
    data = [text.encode() for text in inputs]
    grouped = {**job, "inputs": [len(item) for item in data], "test_wall_s": limits.wall_s,
               "test_cpu_s": limits.cpu_s_or_wall}
    run = replace(limits, wall_s=(limits.wall_s + SLACK_S) * len(data) + 1.0, cpu_s=None,
                  max_output_bytes=len(data) * max(MAX_OUTPUT, KEPT_STDERR) + 1)
    return grouped, b"".join(data), run


def groupable(pool: Executor, job: dict) -> bool:
    """A built binary (run in place) on a pool whose runs each have their own PID namespace."""
    own_pids = any(layer.name == "pid_namespace" and layer.on for layer in pool.layers)
    return job.get("mode") == "exec" and job.get("code") is None and bool(job.get("binary")) and own_pids


def _groups(pool: Executor, job: dict, sizes: list[int]) -> list[list[int]]:
    """Contiguous groups of test indices, two tests or more each; none when grouping does not apply or pay."""
    per_group = min(MAX_GROUP, math.ceil(len(sizes) / max(1, pool.size)))
    if per_group < 2 or not groupable(pool, job):
        return []
    groups: list[list[int]] = []
    for index, size in enumerate(sizes):
        if not groups or len(groups[-1]) >= per_group or sum(sizes[i] for i in groups[-1]) + size > MAX_GROUP_INPUT:
            groups.append([])
        groups[-1].append(index)
    return groups


def parts(records: list[dict], stdout: bytes, stderr: bytes) -> list[ExecResult]:
    """A grouped run's tests as the runs of their own would have ended (`inside/batch.py`'s records), in order, up
    to the first that one run must judge again (stopped, killed by another signal) or a record out of place."""
    parts: list[ExecResult] = []
    out_at = err_at = 0
    for record in (r for r in records if r.get("event") == "test"):
        part = _part(record, len(parts), stdout[out_at:], stderr[err_at:])
        if part is None:
            break
        parts.append(part[0])
        out_at, err_at = out_at + part[1], err_at + part[2]
    return parts


def _part(record: dict, index: int, stdout: bytes, stderr: bytes) -> tuple[ExecResult, int, int] | None:
    """One test's result and the bytes of stdout and stderr it takes; None when it is not one to keep."""
    try:
        out_size, (err_size, err_kept) = int(record["stdout"]), record["stderr"]
        code, sig, timed_out = record["exit_code"], record["signal"], record["timed_out"] is True
        wall_s, cpu_s = float(record["wall_s"]), float(record["cpu_s"])
    except (KeyError, TypeError, ValueError):
        return None
    fits = 0 <= out_size <= len(stdout) and 0 <= int(err_kept) <= min(int(err_size), len(stderr))
    if record["index"] != index or record.get("stop") is not False or not fits:
        return None
    if timed_out or sig == signal.SIGXCPU:
        status = "timeout"
    elif sig is not None:
        if sig not in _TEST_CRASHES:
            return None
        status = "runtime_error"
    else:
        status = "ok" if code == 0 else "runtime_error"
    result = ExecResult(status, exit_code=code, signal=sig, stdout=stdout[:out_size].decode("utf-8", errors="replace"),
                        stderr=stderr[:err_kept].decode("utf-8", errors="replace"),
                        stderr_truncated=err_size > err_kept, wall_s=wall_s, cpu_s=cpu_s)
    return result, out_size, int(err_kept)
