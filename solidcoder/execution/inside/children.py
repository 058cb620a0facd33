"""The zygote's children: confined clones (the candidate's process per run, the worker's judge process), and
the zygote's side of that judge process. See zygote.py for what each child is and what it may see."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import signal
import socket
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from solidcoder.execution.inside import candidate, isolation, referee, rootfs

if TYPE_CHECKING:
    from solidcoder.execution.inside.zygote import Zygote

SETUP_FAILED_EXIT = 121
# The judge process outlives runs, so no run's CPU limit applies to it; the wall-clock deadline bounds each run.
# Its processes: itself and the threads a test script starts (a ThreadPoolExecutor calling the program).
JUDGE_LIMITS = {"cpu_s": 1 << 30, "memory_mb": 4096, "max_processes": 16, "max_file_mb": 64, "max_open_files": 64}


JUDGE_MEMORY_MARGIN_MB = 256  # a judge's memory: the run's limit plus this (the interpreter, the tests, decoding)


def judge_slots(keep: int) -> int:
    """Judge processes a worker may hold at once, each under a uid of its own: `keep` kept ones, the spare, the
    one that replaces a judge which died during its run, and an ended one not yet reaped."""
    return max(1, keep) + 3


@dataclass
class JudgeProcess:
    """One judge process: its pid, its control socket, the test script it serves (a digest) and its memory."""

    pid: int
    sock: socket.socket
    memory_mb: int
    uid: int
    key: str = ""


class JudgeServer:
    """The worker's judge processes, as seen from the zygote: one per distinct test script, never shared by two.

    A run goes to the judge that serves its test script (the pool's digest of the judge's job and memory limit),
    else to a fresh one: no state a test script leaves in its judge (contexts, filters, flags, patched modules)
    can reach a run of another script. `keep` judges stay, the least recently used is ended past that. A spare
    judge is cloned between runs (`prepare`), so a new script rarely waits for one. Each judge is cloned from the
    zygote before any run it serves, holding no payload, like every clone of the zygote.
    """

    def __init__(self, zygote: Zygote, keep: int = 4) -> None:
        self.zygote, self.keep = zygote, max(1, keep)
        self.judges: OrderedDict[str, JudgeProcess] = OrderedDict()
        self.spare: JudgeProcess | None = None
        self.current: JudgeProcess | None = None
        self.ended: list[JudgeProcess] = []
        self.memory_mb = 0  # the last run's limit: the spare's

    def fileno(self) -> int:
        return self.current.sock.fileno()

    def submit(self, key: str, memory_mb: int, fds: list[int]) -> None:
        """Hand one run to the judge of its test script (starting one if needed); OSError when none can start."""
        self.memory_mb = memory_mb
        self.current = self._judge_for(key, memory_mb)
        try:
            socket.send_fds(self.current.sock, [b"run"], fds)
        except OSError:  # it died between runs (a test script ended it): a fresh one takes this run
            self._end(self.current)
            self.current = self._judge_for(key, memory_mb)
            socket.send_fds(self.current.sock, [b"run"], fds)

    def finish(self, answered: bool) -> None:
        """After the wait: read the judge's answer, or end it when it had none in time (or asks to be replaced)."""
        judge, self.current = self.current, None
        if not answered or judge.sock.recv(16) != b"again":
            self._end(judge)

    def prepare(self) -> None:
        """Between runs: reap ended judges and clone a spare for the next new script (errors wait for that run)."""
        self._reap()
        if self.spare is None and self.memory_mb:
            with contextlib.suppress(OSError):
                self.spare = self._start(self.memory_mb)

    def _judge_for(self, key: str, memory_mb: int) -> JudgeProcess:
        if key in self.judges:
            self.judges.move_to_end(key)
            return self.judges[key]
        judge, self.spare = self.spare, None
        if judge is None or judge.memory_mb != memory_mb:
            if judge is not None:
                self._end(judge)
            judge = self._start(memory_mb)
        judge.key = key
        self.judges[key] = judge
        while len(self.judges) > self.keep:
            self._end(next(iter(self.judges.values())))
        return judge

    def _start(self, memory_mb: int) -> JudgeProcess:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = {0: self.zygote.devnull, 1: self.zygote.devnull, 2: self.zygote.devnull, referee.CONTROL: theirs.fileno()}
        limits = {**JUDGE_LIMITS, "memory_mb": memory_mb + JUDGE_MEMORY_MARGIN_MB, "uid": self._free_uid()}
        # In our PID namespace: pidfd_send_signal reaches the candidate only from an ancestor namespace.
        pid, setup = spawn(self.zygote, "judge", fds, limits, "/")
        theirs.close()
        message = os.read(setup, 4096)
        os.close(setup)
        judge = JudgeProcess(pid, ours, memory_mb, limits["uid"])
        if message != b"ready":
            self._end(judge)
            raise OSError(f"judge: {message.decode(errors='replace') or 'died before its setup finished'}")
        return judge

    def _free_uid(self) -> int:
        """A judge slot's uid that no judge (live, or ended and not yet reaped) runs as: judges never share one."""
        taken = {j.uid for j in [*self.judges.values(), *self.ended, *filter(None, [self.spare, self.current])]}
        free = [uid for uid in self.zygote.config["judge_uids"] if uid not in taken]
        if not free and self.ended:
            self._reap()
            return self._free_uid()
        return free[0] if free else self.zygote.config["judge_uids"][0]  # without root every slot's uid is 0

    def _end(self, judge: JudgeProcess) -> None:
        """Kill a judge now; it is reaped in `prepare`, after the run's reply."""
        if self.judges.get(judge.key) is judge:
            del self.judges[judge.key]
        judge.sock.close()
        kill(judge.pid)
        self.ended.append(judge)

    def _reap(self) -> None:
        for judge in self.ended:
            os.waitpid(judge.pid, 0)
        self.ended.clear()

    def stop(self) -> None:
        for judge in [*self.judges.values(), *filter(None, [self.spare])]:
            self._end(judge)
        self.spare, self.memory_mb = None, 0
        self.prepare()


def spawn(zygote: Zygote, role: str, fds: dict[int, int], limits: dict, workdir: str) -> tuple[int, int]:
    """Clone a confined child for `role`; returns its pid and the read end of its setup pipe."""
    read_end, write_end = os.pipe()
    fds[7] = write_end
    pid = isolation.clone_run(namespaces=role == "candidate") if zygote.namespaces else os.fork()
    if pid == 0:
        Child(zygote, limits, role, fds, workdir).enter()
    os.close(write_end)
    return pid, read_end


class Child:
    """A freshly cloned child: its descriptors, namespaces, confinement, then the harness. Never returns.

    Setup reports on its own pipe (fd 7) and closes it before any program code runs, so a program can neither
    fake a sandbox failure nor hide one.
    """

    def __init__(self, zygote: Zygote, limits: dict, role: str, fds: dict[int, int], workdir: str) -> None:
        self.zygote, self.limits, self.role, self.fds, self.workdir = zygote, limits, role, fds, workdir
        self.setup_fd = fds[7]  # the setup pipe, until it is moved to 7

    def enter(self) -> None:
        try:
            self._setup()
            os.write(7, b"ready")
            os.close(7)
        except BaseException as exc:  # noqa: BLE001 - any setup failure is the sandbox's, not the program's
            with contextlib.suppress(OSError):
                os.write(self.setup_fd, f"sandbox setup failed: {type(exc).__name__}: {exc}".encode())
            os._exit(SETUP_FAILED_EXIT)
        if self.role == "candidate":
            candidate.run_candidate(_read_job(5))
        else:
            referee.serve(self.zygote.config.get("judge_runs", 1))
        os._exit(120)

    def _setup(self) -> None:
        os.setsid()
        candidate = self.role == "candidate"
        if candidate and self.zygote.namespaces and self.zygote.filesystem_on():
            rootfs.mount_run_filesystems(self.zygote.config["tmp_mb"], self.zygote.tmp_paths)
        if candidate and self.zygote.cgroup is not None:
            self.zygote.cgroup.join()
        _install_fds(self.fds)
        self.setup_fd = 7
        os.chdir(self.workdir if candidate else "/")
        self._confine()
        random.seed(int.from_bytes(os.urandom(16), "little"))  # children are clones: reseed each one

    def _confine(self) -> None:
        limits, config = self.limits, self.zygote.config
        isolation.apply_rlimits(isolation.ChildLimits(
            cpu_s=max(1, int(limits["cpu_s"] + 0.999)), memory_bytes=limits["memory_mb"] << 20,
            max_processes=config["nproc_base"] + limits["max_processes"], max_file_bytes=limits["max_file_mb"] << 20,
            max_open_files=limits["max_open_files"]))
        if self.role == "judge":
            isolation.drop_privileges(limits["uid"], limits["uid"])
        else:
            isolation.drop_privileges(config["uid"], config["gid"])
        if self.zygote.seccomp is not None:
            self.zygote.seccomp.load()


def _install_fds(fds: dict[int, int]) -> None:
    """Put each descriptor at its number (through high copies, so no source is overwritten); close all others."""
    high = {target: fcntl.fcntl(source, fcntl.F_DUPFD, 256) for target, source in fds.items()}
    for target, fd in high.items():
        os.dup2(fd, target)
    os.closerange(max(fds) + 1, 1 << 16)
    for fd in set(range(max(fds) + 1)) - set(fds):
        with contextlib.suppress(OSError):
            os.close(fd)


def _read_job(fd: int) -> dict:
    """The job the pool wrote into a memfd, read in the child, after the clone."""
    size = os.fstat(fd).st_size
    job = json.loads(os.pread(fd, size, 0)) if size else {}
    os.close(fd)
    return job


def kill(pid: int) -> None:
    """Kill a run's init (which takes its PID namespace with it) and, without a PID namespace, its group."""
    for target in (pid, -pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(target, signal.SIGKILL)
