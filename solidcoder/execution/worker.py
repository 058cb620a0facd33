"""One sandbox worker: a zygote process (`inside/zygote.py`) started with its configuration and driven over a Unix
socket.

The pool (`sandbox.py`) keeps the workers and gives each run to an idle one; a worker starts its zygote (with the
uids leased for it and its memory cgroup), sends one request's header and descriptors, waits for the reply within
the run's deadline, and stops the zygote when it dies or stops answering.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

from solidcoder.errors import SandboxFailure
from solidcoder.execution.inside.cgroup import create_memory_cgroup, remove_cgroup
from solidcoder.execution.inside.children import judge_slots
from solidcoder.execution.inside.isolation import Layer

if TYPE_CHECKING:
    from solidcoder.execution.sandbox import SandboxConfig


class Worker:
    """One zygote process and the Unix socket it is driven over."""

    def __init__(self, index: int, config: SandboxConfig, hidden: list[str], uids: list[int]) -> None:
        self.index, self.config, self.hidden = index, config, hidden
        # Leased for this pool (root start; unused in a user namespace): the program's, then one per judge slot.
        self.uid, self.judge_uids = uids[0], uids[1:]
        self.layers: list[Layer] = []
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.cgroup: str | None = None

    def start(self) -> None:
        root = os.geteuid() == 0
        zygote_config = {
            "isolate": self.config.isolate, "seccomp": self.config.seccomp, "tmp_mb": self.config.tmp_mb,
            # Without root the zygote maps only its own uid, as 0, into a user namespace: children run as that 0.
            "uid": self.uid if root else 0,
            "gid": self.uid if root else 0,
            # Each judge process has a uid of its own: no candidate or other judge shares its process count or may
            # signal it.
            "judge_uids": self.judge_uids if root else [0] * len(self.judge_uids),
            "nproc_base": 0 if root else _count_own_processes() + 64 + self._judges_at_most(),
            "judge_runs": self.config.judge_runs, "judges_kept": self.config.judges_kept,
            "hidden": self.hidden,
            **self._cgroup_config(),
        }
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            self.proc = subprocess.Popen(
                # -P: the zygote imports solidcoder from the caller's sys.path, never from the working directory.
                [sys.executable, "-S", "-P", "-m", "solidcoder.execution.inside.zygote", json.dumps(zygote_config)],
                stdin=theirs, stdout=subprocess.DEVNULL, env=env, close_fds=True, start_new_session=True)
        hello = self._receive(self.config.start_timeout_s)
        if hello is None:
            self.stop()
            raise SandboxFailure("sandbox worker failed to start (see stderr above)")
        self.layers = [Layer(**layer) for layer in hello["layers"]]

    def _judges_at_most(self) -> int:
        """Judge processes all workers may hold at once (kept ones and a spare each): they count as this uid's."""
        return judge_slots(self.config.judges_kept) * (self.config.workers or os.cpu_count() or 1)

    def _cgroup_config(self) -> dict:
        if not (self.config.isolate and self.config.memory_cgroup):
            return {}
        try:
            self.cgroup = self.cgroup or create_memory_cgroup(f"solidcoder-{os.getpid()}-{self.index}")
            return {"cgroup": self.cgroup}
        except OSError as exc:
            return {"cgroup_error": f"no memory cgroup: {exc.strerror or exc}"}

    def call(self, header: dict, fds: list[int], timeout_s: float) -> dict | None:
        """Send a request and wait for its reply; None when the worker died or hung (it is then stopped)."""
        try:
            socket.send_fds(self.sock, [json.dumps(header).encode()], fds)
        except OSError:
            self.stop()
            return None
        reply = self._receive(timeout_s)
        if reply is None:
            self.stop()
        return reply

    def _receive(self, timeout_s: float) -> dict | None:
        ready, _, _ = select.select([self.sock], [], [], timeout_s)
        if not ready:
            return None
        try:
            data = self.sock.recv(1 << 20)
            return json.loads(data) if data else None
        except (OSError, ValueError, RecursionError):
            return None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is None:
            return
        self.sock.close()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def remove_cgroup(self) -> None:
        if self.cgroup is not None:
            remove_cgroup(self.cgroup)


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
