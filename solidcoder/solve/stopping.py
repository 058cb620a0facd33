"""Ctrl-C in `solve`: the first stops the run within 2 s, the second quits at once.

The first SIGINT says "stopping…", calls `on_first` (solve marks the trajectory interrupted and writes it, so what
ran is on disk whatever happens next) and cancels the run's task: each call in flight is cancelled, and recorded
as cancelled (core/calls.py); an embedded llama.cpp generation stops at its next token (models/llamacpp.py). What
cannot be cancelled (a prompt llama.cpp is still reading, a program running in the sandbox) is not waited for
longer than `grace_s`: then `on_exit` is called and the process ends with 130. A second SIGINT ends it at once, with
130. Where SIGINT was not at Python's default handler (a job started with it ignored), nothing is installed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any

INTERRUPTED = 130


class Stopping:
    """Runs one coroutine under solve's SIGINT handling (`run`); the handler is installed only while it runs."""

    def __init__(self, say: Callable[[str], None], on_first: Callable[[], None], on_exit: Callable[[], None],
                 grace_s: float = 1.5):
        self.say, self.on_first, self.on_exit, self.grace_s = say, on_first, on_exit, grace_s
        self.stopping = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        """`asyncio.run(work)`; a first Ctrl-C ends it with `asyncio.CancelledError`."""
        if threading.current_thread() is not threading.main_thread() or \
                signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return asyncio.run(work)
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            return asyncio.run(self._watched(work))
        finally:
            if not self.stopping:  # once stopping, a second Ctrl-C while the sandbox closes must still quit at once
                signal.signal(signal.SIGINT, previous)

    async def _watched(self, work: Coroutine[Any, Any, Any]) -> Any:
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        return await work

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.stopping:
            self.say("interrupted again: quitting now")
            self._exit()
        if self._task is None:  # not started yet: nothing to keep
            raise KeyboardInterrupt
        self.stopping = True
        self.say("stopping… (the calls in flight are cancelled; Ctrl-C again quits at once)")
        self.on_first()
        self._loop.call_soon_threadsafe(self._task.cancel)
        timer = threading.Timer(self.grace_s, self._exit)
        timer.daemon = True  # a run that stops in time exits without it
        timer.start()

    def _exit(self) -> None:
        """The end, now: the trajectory is on disk already (written at the first Ctrl-C and at every call)."""
        self.on_exit()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)
