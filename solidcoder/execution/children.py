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
from typing import TYPE_CHECKING

from solidcoder.execution import harness, isolation, referee, rootfs

if TYPE_CHECKING:
    from solidcoder.execution.zygote import Zygote

SETUP_FAILED_EXIT = 121
# The judge process outlives runs, so no run's CPU limit applies to it; the wall-clock deadline bounds each run.
# Its processes: itself and the threads a test script starts (a ThreadPoolExecutor calling the program).
JUDGE_LIMITS = {"cpu_s": 1 << 30, "memory_mb": 4096, "max_processes": 16, "max_file_mb": 64, "max_open_files": 64}


class JudgeServer:
    """The worker's judge process, as seen from the zygote: cloned when a run needs one, replaced when it is gone.

    It is cloned before the run it first serves, so it starts holding no payload, like every clone of the zygote.
    """

    def __init__(self, zygote: Zygote) -> None:
        self.zygote = zygote
        self.pid = 0
        self.sock: socket.socket | None = None

    def fileno(self) -> int:
        return self.sock.fileno()

    def submit(self, fds: list[int]) -> None:
        """Hand one run to the judge (starting one if needed); OSError when none can be started."""
        if self.sock is None:
            self._start()
        try:
            socket.send_fds(self.sock, [b"run"], fds)
        except OSError:  # it died between runs (a test script ended it): a fresh one takes this run
            self.stop()
            self._start()
            socket.send_fds(self.sock, [b"run"], fds)

    def finish(self, answered: bool) -> None:
        """After the wait: read the judge's answer, or stop it when it had none in time (or asks to be replaced)."""
        if not answered or self.sock.recv(16) != b"again":
            self.stop()

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fds = {0: self.zygote.devnull, 1: self.zygote.devnull, 2: self.zygote.devnull, referee.CONTROL: theirs.fileno()}
        # In our PID namespace: pidfd_send_signal reaches the candidate only from an ancestor namespace.
        pid, setup = spawn(self.zygote, "judge", fds, JUDGE_LIMITS, "/")
        theirs.close()
        message = os.read(setup, 4096)
        os.close(setup)
        self.pid, self.sock = pid, ours
        if message != b"ready":
            self.stop()
            raise OSError(f"judge: {message.decode(errors='replace') or 'died before its setup finished'}")

    def stop(self) -> None:
        if self.sock is None:
            return
        self.sock.close()
        self.sock = None
        kill(self.pid)
        os.waitpid(self.pid, 0)


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
            harness.run_candidate(_read_job(5))
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
            isolation.drop_privileges(config["judge_uid"], config["judge_uid"])
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
