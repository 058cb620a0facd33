"""Per-worker memory cgroups: created by the pool, held open by the zygote, joined by each candidate.

A cgroup bounds what RLIMIT_AS does not see (memfd, tmpfs and shared-memory pages) and its OOM counter tells a run
killed for memory. cgroup v1 (`memory.limit_in_bytes`) where the memory hierarchy is mounted there, else v2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets


def _own_cgroup_dir() -> str:
    """This process's memory cgroup directory: the v1 memory hierarchy when mounted, else the v2 one."""
    with open("/proc/self/cgroup") as fh:
        lines = fh.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and os.path.isdir("/sys/fs/cgroup/memory"):
            return "/sys/fs/cgroup/memory" + path
    v2 = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), None)
    if v2 is None:
        raise OSError(errno.ENOENT, "no memory cgroup hierarchy is mounted")
    return "/sys/fs/cgroup" + v2


def create_memory_cgroup(prefix: str) -> str:
    """A new child memory cgroup of ours, named `prefix` and a random suffix: never one that another pool (of this
    process or another) holds; OSError when cgroups cannot be written here."""
    for _ in range(8):
        path = os.path.join(_own_cgroup_dir(), f"{prefix}-{secrets.token_hex(6)}")
        try:
            os.mkdir(path)
            break
        except FileExistsError:
            continue
    else:
        raise OSError(errno.EEXIST, "no free cgroup name")
    if not any(os.path.exists(os.path.join(path, f)) for f in ("memory.limit_in_bytes", "memory.max")):
        os.rmdir(path)
        raise OSError(errno.ENOTSUP, "the memory controller is not enabled for our cgroup")
    return path


def remove_cgroup(path: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(path)


class MemoryCgroup:
    """A per-worker memory cgroup, held by open files (the zygote's root hides /sys): limit, join, OOM count.

    It bounds what RLIMIT_AS does not see (memfd and tmpfs pages, page tables) and kills the run when it is full.
    """

    def __init__(self, path: str) -> None:
        v1 = os.path.exists(os.path.join(path, "memory.limit_in_bytes"))
        names = ("memory.limit_in_bytes", "memory.oom_control") if v1 else ("memory.max", "memory.events")
        self.procs = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
        self.limit_fd = os.open(os.path.join(path, names[0]), os.O_WRONLY)
        self.events = os.open(os.path.join(path, names[1]), os.O_RDONLY)
        swap = os.path.join(path, "memory.memsw.limit_in_bytes" if v1 else "memory.swap.max")
        self.swap_fd = os.open(swap, os.O_WRONLY) if os.path.exists(swap) else None
        self.limit: int | None = None
        self.v1 = v1

    def set_limit(self, limit: int) -> None:
        """Bound memory (and swap: none beyond it) at `limit` bytes."""
        if limit == self.limit:
            return
        writes = [(self.limit_fd, limit), (self.swap_fd, limit if self.v1 else 0)]
        if self.v1 and self.limit is not None and limit > self.limit:
            writes.reverse()  # v1 refuses a memory limit above the memory+swap limit
        for fd, value in writes:
            if fd is not None:
                os.pwrite(fd, str(value).encode(), 0)
        self.limit = limit

    def join(self) -> None:
        """Move the calling process into the cgroup (before it drops its privileges)."""
        os.pwrite(self.procs, b"0", 0)

    def oom_kills(self) -> int:
        for line in os.pread(self.events, 4096, 0).decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0
