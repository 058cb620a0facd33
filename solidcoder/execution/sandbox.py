"""Run untrusted, model-written Python quickly and in isolation: a pool of fork-server workers.

Each worker is a "zygote" process (see `zygote.py`) that has already imported the standard library modules
solutions use; a run is a fresh child cloned from it, so starting a program costs a fork, not an interpreter.

What a run is isolated from, on a Linux kernel that allows it (each layer is reported in `SandboxPool.layers`
and logged as a warning when it is off; none is skipped silently):

* the network: a new network namespace with no interface up, and a seccomp filter refusing non-AF_UNIX sockets;
* the filesystem: a mount namespace in which every mount is read-only except private tmpfs on /tmp and /dev/shm
  (the working directory is /tmp/work), wiped after every run; files readable by "other" stay readable, except
  that private home directories holding the Python installation are replaced by just its import paths;
* other users' files and privileges: an unprivileged uid/gid per worker (started as root), or a user namespace
  with all capabilities dropped (started as a normal user); no_new_privs; seccomp refuses ptrace, setuid, mount,
  namespace creation, module loading, bpf, perf, keyctl and io_uring;
* the caller's environment: the program sees only PATH, HOME, TMPDIR and LANG; API keys never reach it;
* resources: rlimits on address space, CPU time, processes, file size and open files; stdout/stderr capped;
  a wall-clock deadline;
* its own descendants: each run is init of a new PID namespace, so a double-forked daemon dies with the run.

What it is NOT isolated from: the kernel itself (a kernel exploit escapes); CPU caches and timing side
channels; reading world-readable files (the Python installation, /etc/passwd, /proc of the machine);
other runs' CPU and memory pressure (no cgroups, so one run can slow another). The test harness runs in the
same process as the program: verdicts are protected by a per-run nonce, exact-type comparison and functions
captured before the program runs, which defeats early exits, fake status lines, monkeypatching and objects
whose `__eq__` always returns True, but not a program that deliberately reads the harness's memory through
frames, `gc` or ctypes. Treat pass/fail as trustworthy for model output, not for an adversary who knows this code.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import secrets
import select
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

from solidcoder.execution.isolation import Layer
from solidcoder.execution.zygote import recv, send

log = logging.getLogger("solidcoder.sandbox")

STATUSES = ("ok", "runtime_error", "timeout", "memory_limit", "output_limit", "killed", "sandbox_error")
STDERR_KEPT = 16 << 10


@dataclass(frozen=True)
class Limits:
    """Per-run limits. `cpu_s` defaults to the wall-clock limit."""

    wall_s: float = 10.0
    cpu_s: float | None = None
    memory_mb: int = 1024
    max_processes: int = 32
    max_file_mb: int = 16
    max_open_files: int = 64
    max_output_bytes: int = 8 << 20

    def as_request(self) -> dict:
        values = asdict(self)
        values["cpu_s"] = self.cpu_s if self.cpu_s is not None else self.wall_s
        return values


@dataclass
class ExecResult:
    """What happened to one run. `status` is one of STATUSES; `records` are the harness's nonce-checked reports."""

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    records: list[dict] = field(default_factory=list)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_wire(cls, raw: dict, limits: Limits) -> ExecResult:
        stdout, stderr = raw.pop("stdout", b""), raw.pop("stderr", b"")
        return cls(
            stdout=stdout.decode("utf-8", errors="replace"),
            stderr=stderr[:STDERR_KEPT].decode("utf-8", errors="replace"),
            stdout_truncated=len(stdout) >= limits.max_output_bytes,
            stderr_truncated=len(stderr) > STDERR_KEPT,
            **raw,
        )


@dataclass(frozen=True)
class SandboxConfig:
    """How the pool is built. `workers=None` means one per CPU; `isolate=False` keeps rlimits only (tests)."""

    workers: int | None = None
    isolate: bool = True
    seccomp: bool = True
    tmp_mb: int = 64
    uid_base: int = 64000
    start_timeout_s: float = 30.0


class SandboxError(RuntimeError):
    """A worker could not be started at all."""


class _Worker:
    """One zygote process and its control pipes."""

    def __init__(self, index: int, config: SandboxConfig) -> None:
        self.index, self.config = index, config
        self.layers: list[Layer] = []
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        root = os.geteuid() == 0
        zygote_config = {
            "isolate": self.config.isolate, "seccomp": self.config.seccomp, "tmp_mb": self.config.tmp_mb,
            # Without root the zygote maps only its own uid, as 0, into a user namespace: children run as that 0.
            "uid": self.config.uid_base + self.index if root else 0,
            "gid": self.config.uid_base + self.index if root else 0,
            "nproc_base": 0 if root else _count_own_processes() + 64,
        }
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "solidcoder.execution.zygote", json.dumps(zygote_config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True, start_new_session=True)
        hello = self._receive(self.config.start_timeout_s)
        if hello is None:
            self.stop()
            raise SandboxError("sandbox worker failed to start (see stderr above)")
        self.layers = [Layer(**layer) for layer in hello["layers"]]

    def call(self, request: dict, timeout_s: float) -> dict | None:
        """Send a request and wait for its reply; None when the worker died or hung (it is then stopped)."""
        try:
            send(self.proc.stdin.fileno(), request)
        except OSError:
            self.stop()
            return None
        reply = self._receive(timeout_s)
        if reply is None:
            self.stop()
        return reply

    def _receive(self, timeout_s: float) -> dict | None:
        fd = self.proc.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], timeout_s)
        if not ready:
            return None
        try:
            return recv(fd)
        except (OSError, EOFError, ValueError):
            return None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is None:
            return
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def _count_own_processes() -> int:
    """Processes of this uid: RLIMIT_NPROC counts them too when the sandbox runs without root."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


class SandboxPool:
    """A pool of zygote workers. Thread-safe: `run` blocks the calling thread until a worker is free."""

    def __init__(self, config: SandboxConfig | None = None, limits: Limits | None = None) -> None:
        self.config = config or SandboxConfig()
        self.limits = limits or Limits()
        count = self.config.workers or os.cpu_count() or 1
        self._workers = [_Worker(i, self.config) for i in range(count)]
        for worker in self._workers:
            worker.start()
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        for worker in self._workers:
            self._idle.put(worker)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        for layer in self.layers:
            if not layer.on:
                log.warning("sandbox layer %s is off: %s", layer.name, layer.detail)

    @property
    def layers(self) -> list[Layer]:
        return self._workers[0].layers

    @property
    def size(self) -> int:
        return len(self._workers)

    def run(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        """Run one harness job (see harness.py) with a fresh nonce; never raises for the program's behaviour."""
        limits = limits or self.limits
        job = {**job, "nonce": secrets.token_hex(16)}
        data = stdin.encode() if isinstance(stdin, str) else stdin
        request = {"job": job, "stdin": data, "limits": limits.as_request()}
        worker = self._idle.get()
        try:
            if not worker.alive():
                worker.start()
            reply = worker.call(request, limits.wall_s + 10.0)
        except (OSError, SandboxError) as exc:
            reply = {"status": "sandbox_error", "detail": f"worker unavailable: {exc}"}
        finally:
            self._idle.put(worker)
        if reply is None:
            reply = {"status": "sandbox_error", "detail": "sandbox worker died or stopped answering"}
        return ExecResult.from_wire(reply, limits)

    def run_program(self, code: str, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        """Run `code` as a script with `stdin`; the caller judges stdout."""
        return self.run({"mode": "stdio", "code": code}, stdin, limits)

    def map(self, jobs: list[tuple[dict, str | bytes, Limits | None]]) -> list[ExecResult]:
        """Run several jobs on all workers at once, results in order."""
        return list(self._pool().map(lambda item: self.run(*item), jobs))

    async def arun(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        return await asyncio.get_running_loop().run_in_executor(self._pool(), self.run, job, stdin, limits)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="sandbox")
            return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for worker in self._workers:
            worker.stop()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def with_limits(self, **changes) -> Limits:
        return replace(self.limits, **changes)
