"""`solve`'s progress on stderr: one line per model call, and how far the call in flight has got.

A finished call is a line of its own, e.g. `model call 3: strategies/direct  5 samples, 156 prompt + 187 completion
tokens, 4.2 s`. While the embedded model generates, the call in flight says which call and which of its samples it
is: `model call 3: strategies/direct  sample 3 of 5, 120 tokens, 14 s`. On a terminal that is one live line (rich's
live display), redrawn in place and replaced by the finished call's line; when stderr is not a terminal (a log, a
pipe) it is a plain line every `PLAIN_EVERY_S` seconds, never redrawn. The call in flight is numbered as the next
call to finish: the embedded model runs one generation at a time.

`call_progress(console)` is the one display of a console, so that the model's reports (`_prepare`) and the
trajectory's steps (`_progress`) reach the same live line.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from rich.console import Console
from rich.live import Live
from rich.text import Text

from solidcoder.escaping import terminal_safe

if TYPE_CHECKING:
    from solidcoder.models.llamacpp import Generating

PLAIN_EVERY_S = 10.0
_DISPLAYS: WeakKeyDictionary[Console, CallProgress] = WeakKeyDictionary()


def call_progress(console: Console) -> CallProgress:
    """The progress display writing to `console` (made on first use)."""
    if console not in _DISPLAYS:
        _DISPLAYS[console] = CallProgress(console)
    return _DISPLAYS[console]


class CallProgress:
    """Lines for finished calls (`step`), the live or plain line of the call in flight (`generating`); `close`
    takes the live line away. `generating` is called from the model's worker thread, hence the lock."""

    def __init__(self, console: Console, plain_every_s: float = PLAIN_EVERY_S):
        self.console, self.plain_every_s = console, plain_every_s
        self.finished, self.live, self.plain_due = 0, None, 0.0
        self.lock = threading.Lock()
        if console.is_terminal:
            atexit.register(self.close)  # an error or Ctrl-C can end the run with a call in flight

    def generating(self, generation: Generating) -> None:
        line = _line(self.finished + 1, generation.template or "model", str(generation))
        with self.lock:
            if self.console.is_terminal:
                self._show_live(line)
            elif time.monotonic() >= self.plain_due:
                self.plain_due = time.monotonic() + self.plain_every_s
                self.console.print(line, soft_wrap=True)

    def step(self, step: dict[str, Any]) -> None:
        """A call the trajectory recorded: its line replaces the live one."""
        with self.lock:
            self._stop_live()
            self.finished += 1
            self.plain_due = 0.0
            self.console.print(_line(self.finished, step["template"], _cost(step)), soft_wrap=True)

    def close(self) -> None:
        with self.lock:
            self._stop_live()

    def _show_live(self, line: Text) -> None:
        """The live line, one line however narrow the terminal (cut with `…`: the finished line is whole)."""
        line.no_wrap, line.overflow = True, "ellipsis"
        if self.live is None:
            self.live = Live(line, console=self.console, auto_refresh=False, transient=True,
                             redirect_stdout=False, redirect_stderr=False)
            self.live.start()
        self.live.update(line, refresh=True)

    def _stop_live(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None


def _line(number: int, template: str, how: str) -> Text:
    return Text.assemble((f"model call {number}: ", "bold cyan"), terminal_safe(f"{template}  {how}"))


def _cost(step: dict[str, Any]) -> str:
    """What a finished call cost: its samples (when it asked for several), tokens and time, or that it was replayed;
    a failed call names the error's kind only (the run's last line says why, the trajectory holds the message)."""
    if "error" in step:
        return f"failed ({step['error'].split(':', 1)[0]})"
    samples = f"{len(step['choices'])} samples, " if len(step.get("choices") or ()) > 1 else ""
    tokens = f"{samples}{step.get('prompt_tokens', 0)} prompt + {step.get('completion_tokens', 0)} completion tokens"
    return f"{tokens}, replayed (not sent again)" if step.get("replayed") else \
        f"{tokens}, {step.get('latency_s', 0):.1f} s"
