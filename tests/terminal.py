"""Run the CLI as a user at a narrow terminal sees it: stdout and stderr on a pseudo-terminal, $COLUMNS set.

A pipe is not a terminal, and rich lays tables out differently for one; the width bugs (cells cut with `…`, paths
broken over lines) only show on a terminal, so these tests give the program a real one (`pty`)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")  # styles, and links


def run_in_terminal(args: list[str], columns: int = 80, timeout: float = 240,
                    cwd: Path | None = None, raw: bool = False) -> tuple[int, str]:
    """(exit code, everything the program wrote, without colour codes and with `\\n` line ends); `raw`: with its
    colour codes and every other escape sequence, as the terminal received them."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm", "NO_COLOR": "1"}  # "dumb" would mean 80 columns
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    try:
        text = _read_all(leader, time.monotonic() + timeout)
    finally:
        os.close(leader)
        if proc.poll() is None:  # past the deadline
            proc.kill()
    return proc.wait(timeout=10), (text if raw else ANSI.sub("", text)).replace("\r\n", "\n")


def _read_all(fd: int, deadline: float) -> str:
    """Until every writer has closed the terminal (EIO) or the deadline passes."""
    chunks = []
    while select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
