"""The fork-server ("zygote") process behind each sandbox worker.

Started by `SandboxPool` as `python -m solidcoder.execution.zygote CONFIG_JSON`, it pre-imports the standard
library modules that solutions use, isolates itself once (network and mount namespaces, read-only filesystem,
private /tmp), then serves requests from its parent over stdin/stdout: for each one it clones a child into a new
PID namespace, confines it (rlimits, scrubbed environment, unprivileged uid, seccomp) and runs the harness there,
collecting stdout, stderr and harness reports with caps and a wall-clock deadline. It never starts a thread:
children are cloned without the interpreter's fork hooks, which is only safe in a single-threaded process.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import pickle
import random
import select
import shutil
import signal
import struct
import sys
import time

from solidcoder.execution import harness, isolation

PRELOAD = (
    "array", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "enum", "fractions",
    "functools", "hashlib", "heapq", "itertools", "json", "math", "operator", "random", "re", "statistics",
    "string", "sys", "typing", "unicodedata", "io", "collections.abc", "cmath", "numbers", "queue", "textwrap",
    "threading", "time", "traceback", "ast", "pprint", "abc",
)
SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
SETUP_FAILED_EXIT = 121
READY = '{"event": "ready"}'
_HEADER = struct.Struct("<Q")
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}


def send(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def recv(fd: int):
    """One framed message, or None at end of stream."""
    header = _read_exact(fd, _HEADER.size)
    return None if header is None else pickle.loads(_read_exact(fd, _HEADER.unpack(header)[0]) or b"")


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class Zygote:
    """Serves run requests one at a time; `config` comes from the pool (uid, gid, tmp size, which layers)."""

    def __init__(self, config: dict) -> None:
        self.config = config
        self.layers: list[isolation.Layer] = []
        self.seccomp: isolation.SeccompProgram | None = None
        self.private_tmp = False

    def start(self) -> list[isolation.Layer]:
        for name in PRELOAD:
            importlib.import_module(name)
        if self.config["isolate"]:
            self.layers += isolation.isolate_zygote(self.config["tmp_mb"])
            self.layers.append(isolation.probe_pid_namespace())
        else:
            self.layers += [isolation.Layer(n, False, "disabled by configuration")
                            for n in ("network", "filesystem", "pid_namespace")]
        self.private_tmp = any(layer.name == "filesystem" and layer.on for layer in self.layers)
        self._prepare_seccomp()
        os.chdir("/")
        # The environment children inherit: set once here instead of scrubbing it in every child.
        os.environ.clear()
        os.environ.update(SAFE_ENV)
        # Objects that exist now are never collected in children, so the collector does not touch (and copy)
        # every page of the zygote after each clone; children collect their own garbage as usual.
        gc.collect()
        gc.freeze()
        return self.layers

    def _prepare_seccomp(self) -> None:
        if not self.config["seccomp"]:
            self.layers.append(isolation.Layer("seccomp", False, "disabled by configuration"))
            return
        try:
            self.seccomp = isolation.SeccompProgram(isolation.build_seccomp_filter())
            self.layers.append(isolation.Layer("seccomp", True, "sockets (but AF_UNIX), ptrace, setuid, mount, "
                                                                "namespaces and kernel-admin calls refused"))
        except OSError as exc:
            self.layers.append(isolation.Layer("seccomp", False, f"libseccomp unavailable: {exc}"))

    def serve(self, ctrl_in: int, ctrl_out: int) -> None:
        while (request := recv(ctrl_in)) is not None:
            send(ctrl_out, self.execute(request))

    def execute(self, request: dict) -> dict:
        try:
            workdir = self._make_workdir()
        except OSError as exc:
            return {"status": "sandbox_error", "detail": f"cannot create the working directory: {exc}"}
        try:
            return Run(self, request, workdir).go()
        except OSError as exc:
            return {"status": "sandbox_error", "detail": f"{type(exc).__name__}: {exc}"}
        finally:
            self._clean(workdir)

    def _make_workdir(self) -> str:
        if self.private_tmp:
            path = "/tmp/work"
            os.mkdir(path, 0o700)
        else:
            import tempfile

            path = tempfile.mkdtemp(prefix="solidcoder-run-")
        os.chown(path, self.config["uid"], self.config["gid"])
        return path

    def _clean(self, workdir: str) -> None:
        if not self.private_tmp:
            shutil.rmtree(workdir, ignore_errors=True)
            return
        for root in ("/tmp", "/dev/shm"):
            for entry in os.scandir(root):
                _remove(entry.path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


class Run:
    """One program execution: pipes, the cloned child, the read loop with caps and deadline, the verdict."""

    def __init__(self, zygote: Zygote, request: dict, workdir: str) -> None:
        self.zygote, self.request, self.workdir = zygote, request, workdir
        self.limits = request["limits"]
        self.out, self.err, self.rep = bytearray(), bytearray(), bytearray()
        self.timed_out = self.flooded = False

    def go(self) -> dict:
        stdin_fd = os.memfd_create("stdin")
        os.write(stdin_fd, self.request.get("stdin", b""))
        os.lseek(stdin_fd, 0, os.SEEK_SET)
        pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, report
        started = time.perf_counter()
        pid = isolation.clone_into_pid_namespace()[0] if self.zygote.config["isolate"] else os.fork()
        if pid == 0:
            self._child(stdin_fd, pipes)
        os.close(stdin_fd)
        for _, write_end in pipes:
            os.close(write_end)
        self._collect(pid, [p[0] for p in pipes], started)
        _, status, usage = os.wait4(pid, 0)
        return self._verdict(status, usage, time.perf_counter() - started)

    def _child(self, stdin_fd: int, pipes: list[tuple[int, int]]) -> None:
        """Confine this fresh child, say so on the report pipe, then hand over to the harness. Never returns.

        The `ready` record carries the nonce and is written before any program code runs, so a run without it
        failed in the sandbox's own setup (a sandbox_error), and no program can fake that outcome.
        """
        try:
            os.setsid()
            for target, source in enumerate((stdin_fd, pipes[0][1], pipes[1][1], pipes[2][1])):
                os.dup2(source, target)
            os.closerange(4, 1 << 16)
            os.chdir(self.workdir)
            self._confine()
            random.seed(int.from_bytes(os.urandom(16), "little"))  # children are clones: reseed each one
            os.write(3, f"{self.request['job']['nonce']} {READY}\n".encode())
        except BaseException as exc:  # noqa: BLE001 - any setup failure is the sandbox's, not the program's
            os.write(2, f"sandbox setup failed: {type(exc).__name__}: {exc}".encode())
            os._exit(SETUP_FAILED_EXIT)
        harness.run_child(self.request["job"], 3)
        os._exit(120)

    def _confine(self) -> None:
        limits, config = self.limits, self.zygote.config
        isolation.apply_rlimits(isolation.ChildLimits(
            cpu_s=max(1, int(limits["cpu_s"] + 0.999)), memory_bytes=limits["memory_mb"] << 20,
            max_processes=config["nproc_base"] + limits["max_processes"], max_file_bytes=limits["max_file_mb"] << 20,
            max_open_files=limits["max_open_files"]))
        isolation.drop_privileges(config["uid"], config["gid"])
        if self.zygote.seccomp is not None:
            self.zygote.seccomp.load()

    def _collect(self, pid: int, fds: list[int], started: float) -> None:
        buffers = {fds[0]: self.out, fds[1]: self.err, fds[2]: self.rep}
        caps = {fds[0]: self.limits["max_output_bytes"], fds[1]: self.limits["max_output_bytes"], fds[2]: 64 << 20}
        deadline = started + self.limits["wall_s"]
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        open_fds = set(fds)
        while open_fds:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                self.timed_out = True
                break
            for fd, _ in poller.poll(remaining * 1000):
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    continue
                buffers[fd] += chunk
                if len(buffers[fd]) > caps[fd]:
                    self.flooded = True
                    open_fds.clear()
                    break
        _kill_group(pid)
        for fd in fds:
            os.close(fd)

    def _verdict(self, status: int, usage, wall_s: float) -> dict:
        result = {
            "stdout": bytes(self.out[: self.limits["max_output_bytes"]]), "stderr": bytes(self.err),
            "wall_s": wall_s, "cpu_s": usage.ru_utime + usage.ru_stime,
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "records": _records(self.rep, self.request["job"]["nonce"]),
        }
        if not any(record.get("event") == "ready" for record in result["records"]):
            detail = bytes(self.err).decode(errors="replace").strip() or "the child died before its setup finished"
            return {"status": "sandbox_error", "detail": detail[-2000:], "wall_s": wall_s}
        result["status"] = self._status(result)
        return result

    def _status(self, result: dict) -> str:
        sig, code = result["signal"], result["exit_code"]
        cpu_exhausted = sig == signal.SIGXCPU or (sig == signal.SIGKILL and result["cpu_s"] >= self.limits["cpu_s"])
        if self.timed_out or cpu_exhausted:
            return "timeout"
        if self.flooded:
            return "output_limit"
        if sig is not None:
            return "runtime_error" if sig in _CRASH_SIGNALS else "killed"
        if any(record.get("event") == "memory_error" for record in result["records"]):
            return "memory_limit"
        return "ok" if code == 0 else "runtime_error"


def _kill_group(pid: int) -> None:
    """Kill the run's init (which takes its PID namespace with it) and, without a PID namespace, its group."""
    for target in (pid, -pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)


def _records(raw: bytearray, nonce: str) -> list[dict]:
    """Parse report lines, keeping only those that carry this run's nonce."""
    prefix, records = (nonce + " ").encode(), []
    for line in bytes(raw).split(b"\n"):
        if line.startswith(prefix):
            try:
                records.append(json.loads(line[len(prefix) :]))
            except ValueError:
                continue
    return records


def main() -> None:
    """Serve until the pool closes our stdin (also what happens when the pool's process dies)."""
    config = json.loads(sys.argv[1])
    ctrl_in, ctrl_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    zygote = Zygote(config)
    layers = zygote.start()
    send(ctrl_out, {"layers": [vars(layer) for layer in layers]})
    zygote.serve(ctrl_in, ctrl_out)


if __name__ == "__main__":
    main()
