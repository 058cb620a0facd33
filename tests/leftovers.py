"""Processes a sandbox run leaves behind: none may outlive it. Shared by the sandbox's tests of every language."""

from __future__ import annotations

import os
import time
from pathlib import Path

from solidcoder.execution.sandbox import SandboxPool


def sandbox_pids(pool: SandboxPool) -> list[int]:
    """Host pids of processes running under the pool's sandbox uids (none should outlive a run)."""
    uids = set(pool.uids)
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    found.append(int(entry.name))
            except FileNotFoundError:
                continue
    return found


def no_leftovers(pool: SandboxPool) -> None:
    """No process of the sandbox uids survives its run (the kernel reaps a dead PID namespace asynchronously)."""
    deadline = time.monotonic() + 2.0
    while (left := sandbox_pids(pool)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert left == [], [Path(f"/proc/{pid}/status").read_text()[:200] for pid in left]
