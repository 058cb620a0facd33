"""The fork-server ("zygote") process behind each sandbox worker. It never holds a request's payload.

Started by `SandboxPool` as `python -m solidcoder.execution.inside.zygote CONFIG_JSON` with a Unix socket on stdin, it
pre-imports the modules solutions use, isolates itself once (network and IPC namespaces, a read-only root that
holds only system libraries and the Python installation), then serves requests. A request is a small header
(mode and limits) plus file descriptors made by the pool: memfds holding the program, the judge's job and stdin,
and empty memfds for stdout, stderr and the report. The zygote passes them on without reading them, so no code,
test, input or output of a run ever enters its memory, and a later child cloned from it cannot find them there.

Per run it clones the candidate's process, into new PID, mount and IPC namespaces with a fresh tmpfs /tmp and
/dev/shm and its own /proc, in the worker's memory cgroup, confined (rlimits, unprivileged uid, seccomp), running
`harness.py`. For `tests` runs a judge process (`referee.py`) holds the tests: one per distinct test script (the
pool's digest in the header says which; `children.JudgeServer`), cloned from the zygote before the first run it
serves, confined the same way, serving up to `judge_runs` runs of that script (1 gives every run a fresh one). A
spare judge is cloned after each reply, while the pool reads it. Per run a judge receives the job, two pipes to
the candidate and a pidfd that can kill it. It never executes candidate code and no candidate can see it
(another PID namespace), so a long-lived judge cannot carry one candidate's data to another; what it could carry
is a test script's changes to the judge itself, so it never serves another script, and between runs of its own
script it checks for them (`integrity.py`): one that finds them exits, and the next run gets a fresh one.

The zygote waits with a wall-clock deadline and output caps (the memfds' sizes), kills what is left (the judge
too, when the deadline passed it), and replies with exit statuses only. It never starts a thread: children
(`children.py`) are cloned without the interpreter's fork hooks, which is only safe in a single-threaded process.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import shutil
import socket
import sys
import tempfile
import time

from solidcoder.execution.inside import harness, integrity, isolation, native, rootfs
from solidcoder.execution.inside.cgroup import MemoryCgroup
from solidcoder.execution.inside.children import JudgeServer, kill, spawn

PRELOAD = (
    "array", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "enum", "fractions",
    "functools", "hashlib", "heapq", "itertools", "json", "math", "operator", "random", "re", "statistics",
    "string", "sys", "typing", "unicodedata", "io", "collections.abc", "cmath", "numbers", "queue", "textwrap",
    "threading", "time", "traceback", "ast", "pprint", "abc",
)
SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
FD_NAMES = ("program", "stdin", "stdout", "stderr", "report", "judge", "artifact")
MAX_HEADER = 1 << 16
_WATCH_S = 0.05  # how often a long run's output sizes are checked


class Zygote:
    """Serves run requests one at a time; `config` comes from the pool (uid, gid, tmp size, which layers)."""

    def __init__(self, config: dict) -> None:
        self.config = config
        self.layers: list[isolation.Layer] = []
        self.seccomp: isolation.SeccompProgram | None = None
        self.cgroup: MemoryCgroup | None = None
        self.namespaces = False
        self.tmp_paths: list[str] = []
        self.devnull = -1
        self.judge = JudgeServer(self, config.get("judges_kept", 4))

    def start(self) -> list[isolation.Layer]:
        for name in PRELOAD:
            importlib.import_module(name)
        integrity.prepare()  # the namespaces every judge checks, found once here
        self._open_cgroup()
        if self.config["isolate"]:
            self.layers += isolation.isolate_zygote(sys.path, self.config.get("hidden", []))
            mounts = (lambda: rootfs.mount_run_filesystems(self.config["tmp_mb"], [])) if self.filesystem_on() else None
            self.layers.append(isolation.probe_run_namespaces(mounts))
            self.namespaces = self.layers[-1].on
            self.tmp_paths = rootfs.tmp_import_paths(sys.path) if self.filesystem_on() else []
        else:
            self.layers += [isolation.Layer(n, False, "disabled by configuration")
                            for n in ("network", "filesystem", "pid_namespace")]
        self._prepare_seccomp()
        os.chdir("/")
        self.devnull = os.open(os.devnull, os.O_RDWR)
        # The environment children inherit: set once here instead of scrubbing it in every child.
        os.environ.clear()
        os.environ.update(SAFE_ENV)
        # Objects that exist now are never collected in children, so the collector does not touch (and copy)
        # every page of the zygote after each clone; children collect their own garbage as usual.
        gc.collect()
        gc.freeze()
        return self.layers

    def filesystem_on(self) -> bool:
        return any(layer.name == "filesystem" and layer.on for layer in self.layers)

    def _open_cgroup(self) -> None:
        path = self.config.get("cgroup")
        if not path:
            detail = self.config.get("cgroup_error") or "disabled by configuration"
            self.layers.append(isolation.Layer("memory_cgroup", False, f"{detail}; memfd, tmpfs and shared memory "
                                                                       "pages are bounded only by tmpfs sizes"))
            return
        self.cgroup = MemoryCgroup(path)
        self.layers.append(isolation.Layer("memory_cgroup", True, "each run's memory, shared memory and memfds "
                                                                  "counted against its memory limit"))

    def _prepare_seccomp(self) -> None:
        if not self.config["seccomp"]:
            self.layers.append(isolation.Layer("seccomp", False, "disabled by configuration"))
            return
        try:
            self.seccomp = isolation.SeccompProgram(isolation.build_seccomp_filter())
            self.layers.append(isolation.Layer("seccomp", True, "socket() refused (only connected AF_UNIX stream "
                                                                "pairs), ptrace, setuid, mount, namespaces, file "
                                                                "locks, inotify and kernel-admin calls refused"))
        except OSError as exc:
            self.layers.append(isolation.Layer("seccomp", False, f"libseccomp unavailable: {exc}"))

    def serve(self, control: socket.socket) -> None:
        while True:
            try:
                header, fds, _, _ = socket.recv_fds(control, MAX_HEADER, len(FD_NAMES))
            except OSError:
                return
            if not header:
                return
            request = json.loads(header)
            names = [name for name in request.get("fds", FD_NAMES) if name in FD_NAMES]  # the pool's order
            reply = self.execute(request, dict(zip(names, fds, strict=False)))
            control.sendall(json.dumps(reply).encode())
            self.judge.prepare()  # while the pool reads the reply

    def execute(self, header: dict, fds: dict[str, int]) -> dict:
        try:
            return Execution(self, header, fds).go()
        except OSError as exc:
            return {"setup_error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds.values():
                with contextlib.suppress(OSError):
                    os.close(fd)


class Execution:
    """One execution: the cloned candidate (and judge), the wait with deadline and output caps, exit statuses."""

    def __init__(self, zygote: Zygote, header: dict, fds: dict[str, int]) -> None:
        self.zygote, self.header, self.fds = zygote, header, fds
        self.limits = header["limits"]
        self.pids: dict[str, int] = {}
        self.setup_pipes: dict[str, int] = {}
        self.workdir = "/tmp" if zygote.namespaces and zygote.filesystem_on() else None

    def go(self) -> dict:
        if self.workdir is not None:
            return self._go()
        self.workdir = tempfile.mkdtemp(prefix="solidcoder-run-")  # no isolation: a scratch dir of the host's
        os.chown(self.workdir, self.zygote.config["uid"], self.zygote.config["gid"])
        try:
            return self._go()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _go(self) -> dict:
        if self.zygote.cgroup is not None:
            self.zygote.cgroup.set_limit(self.limits["memory_mb"] << 20)
        ooms = self.zygote.cgroup.oom_kills() if self.zygote.cgroup is not None else 0
        started = time.monotonic()
        channel = (os.pipe(), os.pipe()) if self.header["mode"] == "tests" else None  # requests, replies
        self._spawn("candidate", self._candidate_fds(channel))
        if channel is not None:
            pidfd = os.pidfd_open(self.pids["candidate"])
            try:
                self.zygote.judge.submit(self.header["judge_key"], self.limits["memory_mb"],
                                         self._judge_fds(channel, pidfd))
            except OSError:
                self._reap(False, False, 0.0)  # no judge: the candidate must not outlive the failed run
                raise
            finally:
                os.close(pidfd)
        for end in [fd for pair in (channel or ()) for fd in pair]:
            os.close(end)
        outcome = self._wait(started)
        outcome["oom"] = self.zygote.cgroup is not None and self.zygote.cgroup.oom_kills() > ooms
        return outcome

    def _candidate_fds(self, channel) -> dict[int, int]:
        fds = {0: self.fds["stdin"], 1: self.fds["stdout"], 2: self.fds["stderr"], 5: self.fds["program"]}
        if channel is not None:
            fds.update({harness.CANDIDATE_IN: channel[0][0], harness.CANDIDATE_OUT: channel[1][1]})
        else:
            fds[harness.REPORT_FD] = self.fds["report"]
        if "artifact" in self.fds:  # a build's binary, written by the build or read by the run (`native.py`)
            fds[native.ARTIFACT_FD] = self.fds["artifact"]
        return fds

    def _judge_fds(self, channel, pidfd: int) -> list[int]:
        """In the order of `referee.RUN_FDS`."""
        return [self.fds["judge"], self.fds["report"], channel[0][1], channel[1][0], pidfd]

    def _spawn(self, role: str, fds: dict[int, int]) -> None:
        self.pids[role], self.setup_pipes[role] = spawn(self.zygote, role, fds, self.limits, self.workdir)

    def _wait(self, started: float) -> dict:
        """Wait for the run to finish (the judge's answer, else the candidate's exit), at most until the deadline."""
        tests = self.header["mode"] == "tests"
        watched = self.zygote.judge.fileno() if tests else os.pidfd_open(self.pids["candidate"])
        deadline = started + self.limits["wall_s"]
        timed_out = flooded = False
        try:
            while not select.select([watched], [], [], min(_WATCH_S, max(0.0, deadline - time.monotonic())))[0]:
                if self._flooded():
                    flooded = True
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
        finally:
            if not tests:
                os.close(watched)
        if tests:
            self.zygote.judge.finish(answered=not (timed_out or flooded))
        return self._reap(timed_out, flooded or self._flooded(), time.monotonic() - started)

    def _flooded(self) -> bool:
        cap = self.limits["max_output_bytes"]
        return any(os.fstat(self.fds[name]).st_size > cap for name in ("stdout", "stderr"))

    def _reap(self, timed_out: bool, flooded: bool, wall_s: float) -> dict:
        for pid in self.pids.values():
            kill(pid)
        outcome = {"timed_out": timed_out, "flooded": flooded, "wall_s": wall_s}
        for role, pid in self.pids.items():
            _, status, usage = os.wait4(pid, 0)
            outcome[role] = {"exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                             "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                             "cpu_s": usage.ru_utime + usage.ru_stime}
        outcome["setup_error"] = self._setup_errors()
        return outcome

    def _setup_errors(self) -> str | None:
        """A child that did not say `ready` failed in the sandbox's own setup: its message, else None."""
        errors = []
        for role, fd in self.setup_pipes.items():
            message = os.read(fd, 4096)
            os.close(fd)
            if message != b"ready":
                errors.append(f"{role}: {message.decode(errors='replace') or 'died before its setup finished'}")
        return "; ".join(errors) or None


def main() -> None:
    """Serve until the pool closes its end of the control socket (also what happens when the pool's process dies)."""
    config = json.loads(sys.argv[1])
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    zygote = Zygote(config)
    layers = zygote.start()
    control.sendall(json.dumps({"layers": [vars(layer) for layer in layers]}).encode())
    zygote.serve(control)


if __name__ == "__main__":
    main()
