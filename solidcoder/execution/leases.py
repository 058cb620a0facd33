"""The uids a pool's sandboxed processes run as, leased so that no two pools share one.

Resource limits such as RLIMIT_NPROC count per uid, and a process may signal others of its uid: two pools (in one
process or in several) whose workers ran as the same uid would let one run's processes stop another's. Each uid
is leased by an exclusive `flock` on its own lock file in a directory every solidcoder process on the machine
uses (/run/solidcoder-uids, else one in the temporary directory); the kernel drops the lock when the leasing
process ends, however it ends. A uid that some process already runs as is never leased.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile

LEASE_DIRS = ("/run/solidcoder-uids", os.path.join(tempfile.gettempdir(), "solidcoder-uids"))
UID_SPAN = 1500  # uids tried from the pool's first one (64000 + 1500 stays below nobody's 65534)


class UidLease:
    """`count` uids, at or above `first`, held until `close()` (or the end of this process)."""

    def __init__(self, first: int, count: int, span: int = UID_SPAN) -> None:
        self.uids: list[int] = []
        self._locks: list[int] = []
        folder, busy = _lease_dir(), _uids_in_use()
        for uid in range(first, first + span):
            if len(self.uids) == count:
                return
            if uid not in busy:
                self._take(folder, uid)
        self.close()
        raise OSError(errno.EAGAIN, f"no {count} free sandbox uids in {first}..{first + span - 1}")

    def _take(self, folder: str, uid: int) -> None:
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return
        self.uids.append(uid)
        self._locks.append(fd)

    def close(self) -> None:
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._locks, self.uids = [], []


def _lease_dir() -> str:
    for folder in LEASE_DIRS:
        with contextlib.suppress(OSError):
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
    raise OSError(errno.EACCES, f"no writable directory for uid leases ({', '.join(LEASE_DIRS)})")


def _uids_in_use() -> set[int]:
    """The uids of the processes this machine's /proc shows."""
    found = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                found.add(entry.stat().st_uid)
    return found
