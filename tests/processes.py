"""Child processes that tests interrupt: they get SIGINT's default disposition whatever the caller gave pytest.

A shell starts a background job (`bash .ci/run &`) with SIGINT ignored, and an ignored signal stays ignored
across fork and exec: Python then never installs its KeyboardInterrupt handler, and a test's Ctrl-C would do
nothing. `interruptible()` puts the default back in the child before it runs.
"""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interruptible(command: list[str], **kwargs: Any) -> subprocess.Popen:
    """`subprocess.Popen(command, ...)` whose child receives SIGINT as a foreground process would."""
    return subprocess.Popen(command, preexec_fn=_default_sigint, **kwargs)  # noqa: PLW1509 - the child execs at once
