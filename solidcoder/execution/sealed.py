"""Built programs kept as sealed, read-only memfds, so that a run of one costs no copy of its binary.

A compiled program's binary (`build.py`) runs once per test. Writing it into a fresh memfd for every run, and the
run's init copying it into its directory, costs more than the program's own start for a statically linked binary
(about 1 ms each for 2 MB). Here a binary is written once into a memfd that is then sealed (no write, no resize, no
new seal: not even its holder can change it) and reopened read-only, so no descriptor to it can write and the
kernel can execute it; each run gets a duplicate of that descriptor, which the run's init executes in place
(`inside/native.py`). A binary is the same program in every run it is given to, and nothing of a run can change it,
so sharing one across runs carries nothing from one run to another.

Thread-safe; the least recently used binary's descriptor is closed beyond `limit`.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections import OrderedDict

SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
KEPT = 32  # binaries per pool: a few MB each (statically linked C++)


class SealedFiles:
    """Descriptors of sealed memfds by the digest of their contents."""

    def __init__(self, limit: int = KEPT) -> None:
        self.limit = limit
        self._fds: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, digest: str, data: bytes) -> int:
        """A new read-only descriptor (its own offset) of the sealed memfd holding `data`, made on first use; the
        caller closes it."""
        with self._lock:
            fd = self._fds.get(digest)
            if fd is None:
                fd = self._fds[digest] = sealed(data)
                while len(self._fds) > self.limit:
                    os.close(self._fds.popitem(last=False)[1])
            self._fds.move_to_end(digest)
            return os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)

    def close(self) -> None:
        with self._lock:
            while self._fds:
                os.close(self._fds.popitem()[1])


def sealed(data: bytes) -> int:
    """A read-only, close-on-exec descriptor of a sealed memfd holding `data`, offset 0."""
    writable = os.memfd_create("solidcoder-binary", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(writable, view):]
        fcntl.fcntl(writable, fcntl.F_ADD_SEALS, SEALS)
        return os.open(f"/proc/self/fd/{writable}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(writable)  # no writer left: the kernel may execute it (no ETXTBSY)
