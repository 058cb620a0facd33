"""Several tests of one built program in one run, inside the sandbox (the judge's stdio tests; `execution/batched.py`
on the host). It decides no verdict: it reports how each test's process ended, and its output.

Starting a run (a confined clone, its namespaces and mounts) costs several times what starting a small binary costs,
so a check of many small tests runs them here one after another, each as `native.run_exec` runs one: a fresh child
under the run's confinement, its own stdin (the test's input, cut from the run's stdin, whose lengths the job
lists), stdout and stderr, started in place from the artifact descriptor, its CPU limited per test (RLIMIT_CPU, as a
run of its own would be) and killed at the test's wall limit. Between tests nothing is left: every process of the
run's PID namespace is killed and reaped, and the run's directory and /dev/shm are emptied. (System V IPC objects
and POSIX message queues of the run's IPC namespace outlive a test; they hold only what the same program wrote.)

Per test, its stdout (whole) and the first `KEPT_STDERR` bytes of its stderr are appended to the run's stdout and
stderr, and a record to the report: {"event": "test", "index", "exit_code", "signal", "timed_out", "wall_s", "cpu_s",
"stdout": size, "stderr": [size, kept]}. The batch stops before its end, leaving the rest to runs of their own (where
every limit gives its usual verdict), after a test killed from outside (SIGKILL: the memory cgroup's OOM killer), one
whose output passed `MAX_OUTPUT`, or one that left what cannot be removed. It runs only as the init of its own PID
namespace (`kill(-1)` must reach no process outside the run); elsewhere it reports nothing.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import select
import shutil
import signal
import time

from solidcoder.execution.inside import native

KEPT_STDERR = 16 << 10  # as a run of its own keeps
MAX_OUTPUT = 1 << 20  # a test's stdout or stderr beyond this ends the batch: its own run judges the output limit
_WATCH_S = 0.05  # how often a running test's output sizes are checked
_SCRATCH = ("/dev/shm",)  # besides the run's directory


def run_batch(job: dict) -> int:
    """Run every input of `job` (lengths `job["inputs"]`, limits `test_wall_s`, `test_cpu_s`); exit code 0, or 1
    with the error on stderr when this process failed (the tests it did not report get runs of their own)."""
    if os.getpid() != 1 or not os.path.exists(native.IN_PLACE):
        return 0  # not a PID namespace's init, or no binary to run in place: every test gets a run of its own
    try:
        _run_all(job)
    except OSError as exc:  # the binary cannot start in place, the run's memory is full, ...
        os.write(2, f"batch: {exc.strerror or exc}\n".encode(errors="replace"))
        return 1
    return 0


def _run_all(job: dict) -> None:
    native.prepare_parent()
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (min(math.ceil(job["test_cpu_s"]), hard), hard))  # each child's
    offset = 0
    for index, length in enumerate(job["inputs"]):
        record = run_test(job, os.pread(0, length, offset) if length else b"")
        offset += length
        os.write(native.REPORT_FD, json.dumps({"event": "test", "index": index, **record}).encode() + b"\n")
        if record["stop"] or not _emptied():
            return


def run_test(job: dict, data: bytes) -> dict:
    """One test's child, from start to its last process reaped; how it ended and what it wrote."""
    files = [_memfd(data), _memfd(b""), _memfd(b"")]
    try:
        started = time.monotonic()
        pid = native.start(job["command"], dict(enumerate(files)), native.IN_PLACE)
        timed_out, flooded = _watch(pid, files[1:], started + job["test_wall_s"])
        _kill_all()
        _, status, usage = os.wait4(pid, 0)
        wall_s = time.monotonic() - started
        _end_all()
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        out, err = _keep(files[1], 1, MAX_OUTPUT), _keep(files[2], 2, KEPT_STDERR)
        return {"exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None, "signal": sig,
                "timed_out": timed_out, "wall_s": wall_s, "cpu_s": usage.ru_utime + usage.ru_stime,
                "stdout": out[0], "stderr": [err[0], err[1]],
                "stop": flooded or (sig == signal.SIGKILL and not timed_out)}
    finally:
        for fd in files:
            os.close(fd)


def _watch(pid: int, outputs: list[int], deadline: float) -> tuple[bool, bool]:
    """Wait for the child to end; (timed out, output over `MAX_OUTPUT`) when it was stopped for either."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return True, False
            if select.select([pidfd], [], [], min(_WATCH_S, left))[0]:
                return False, False
            if any(os.fstat(fd).st_size > MAX_OUTPUT for fd in outputs):
                return False, True
    finally:
        os.close(pidfd)


def _kill_all() -> None:
    """SIGKILL to every process of the run's PID namespace but this one (its init)."""
    with contextlib.suppress(ProcessLookupError):  # none left
        os.kill(-1, signal.SIGKILL)


def _end_all() -> None:
    """Kill and reap every process left, until none is: one forked while the last kill went round is killed next."""
    while True:
        _kill_all()
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def _keep(fd: int, target: int, cap: int) -> tuple[int, int]:
    """Append up to `cap` bytes of a test's output to the run's descriptor `target`; (its size, bytes kept)."""
    size = os.fstat(fd).st_size
    kept = min(size, cap)
    native.write_all(target, os.pread(fd, kept, 0))
    return size, kept


def _emptied() -> bool:
    """Remove everything a test left in the run's directory and scratch folders; False when something stays."""
    for folder in (".", *_SCRATCH):
        if not os.path.isdir(folder):
            continue
        try:
            for entry in os.scandir(folder):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
        except OSError:
            return False
    return True


def _memfd(data: bytes) -> int:
    fd = os.memfd_create("test", os.MFD_CLOEXEC)
    native.write_all(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
