"""What one sandbox run is given and gives back: its `Limits` and its `ExecResult` (`sandbox.py` runs it).

A run's `status` is one of `STATUSES`; a program ended by one of `CRASH_SIGNALS` crashed (a runtime error, its
signal named in verdicts), where another signal means it was killed.
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, field

STATUSES = ("ok", "runtime_error", "timeout", "memory_limit", "output_limit", "killed", "sandbox_error")
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGXFSZ}


@dataclass(frozen=True)
class Limits:
    """Per-run limits. `cpu_s` defaults to the wall-clock limit."""

    wall_s: float = 10.0
    cpu_s: float | None = None
    memory_mb: int = 1024
    max_processes: int = 32
    max_file_mb: int = 16
    max_open_files: int = 64
    max_output_bytes: int = 8 << 20

    @property
    def cpu_s_or_wall(self) -> float:
        return self.cpu_s if self.cpu_s is not None else self.wall_s

    def as_request(self) -> dict:
        values = asdict(self)
        values["cpu_s"] = self.cpu_s_or_wall
        return values


@dataclass
class ExecResult:
    """What happened to one run. `status` is one of STATUSES; `records` are the judge process's reports."""

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    records: list[dict] = field(default_factory=list)
    detail: str = ""
    artifact: bytes = b""  # a successful `build`'s binary
    parts: list[ExecResult] = field(default_factory=list)  # a grouped run's tests, those it reported (`batched.py`)

    @property
    def ok(self) -> bool:
        return self.status == "ok"
