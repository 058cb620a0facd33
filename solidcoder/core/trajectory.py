"""The record of one `solve` run: every model call (from its `CallRecord`) and every execution (from its
`Execution`, core/executions.py), then the outcome, in order.

A `Trajectory` is written to `<run_dir>/trajectory.json` after every call and at the end (temp file, then
`os.replace`), so a run that dies part-way still leaves everything up to its last step on disk. A run stopped by
Ctrl-C has the outcome "interrupted"; a call that was in flight is a step with `"cancelled": true` and its error.
Usage totals are summed from the calls recorded here, not from the run-wide `Budget`, so concurrent runs sharing one
budget still report their own figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solidcoder.models.base import Completion

if TYPE_CHECKING:
    from solidcoder.core.calls import CallRecord
    from solidcoder.core.executions import Execution


@dataclass
class Usage:
    """Model usage of one run: `replayed` of the `calls` came from the replay log, `model_s` is time in the model."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    replayed: int = 0
    model_s: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, completion: Completion, replayed: bool = False) -> None:
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.cost_usd += completion.cost_usd
        self.replayed += replayed
        self.model_s += completion.latency_s


class Trajectory:
    """Ordered steps of a run plus its outcome; `save()` writes it atomically when a run directory is set."""

    def __init__(self, run_dir: Path | None, header: dict[str, Any],
                 on_step: Callable[[dict[str, Any]], None] | None = None):
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.on_step = on_step  # told of every call step as it is recorded (the CLI prints progress)
        self.header = header
        self.steps: list[dict[str, Any]] = []
        self.usage = Usage()
        self.outcome: dict[str, Any] = {"status": "running"}
        self.started = time.monotonic()
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)

    @property
    def path(self) -> Path | None:
        return self.run_dir / "trajectory.json" if self.run_dir is not None else None

    def call(self, record: CallRecord) -> None:
        """One model call: the prompt, the reply (every choice's, when it asked for several) or the error, its usage,
        and whether it was replayed."""
        step: dict[str, Any] = {"type": "call", "template": record.template,
                                "temperature": record.temperature,
                                "messages": [{"role": m.role, "content": m.content} for m in record.messages]}
        completion = record.completion
        if completion is not None:
            self.usage.add(completion, replayed=record.replayed)
            step.update(reply=completion.text, model=completion.model, prompt_tokens=completion.prompt_tokens,
                        completion_tokens=completion.completion_tokens, cost_usd=completion.cost_usd,
                        latency_s=round(completion.latency_s, 4), replayed=record.replayed)
            if completion.choices:
                step["choices"] = list(completion.choices)
        if record.error is not None:
            step["error"] = record.error
        if record.cancelled:
            step["cancelled"] = True
        self.steps.append(step)
        self.save()
        if self.on_step is not None:
            self.on_step(step)

    def interrupted(self) -> None:
        """Mark the run stopped by Ctrl-C and write it: the calls recorded so far, the one in flight as cancelled."""
        self.outcome = {"status": "interrupted", "reason": "interrupted (Ctrl-C)", "verified": False}
        self.save()

    def execution(self, execution: Execution) -> None:
        """One program judged: the tests it ran, each verdict and the first failure (a step of type "execution")."""
        self.steps.append({"type": "execution", **execution.to_dict()})
        self.save()

    def calls(self, template: str | None = None) -> list[dict[str, Any]]:
        """The call steps, or those that rendered `template` (e.g. "strategies/direct")."""
        return [s for s in self.steps if s["type"] == "call" and (template is None or s["template"] == template)]

    def to_dict(self) -> dict[str, Any]:
        return {**self.header, "outcome": self.outcome, "usage": {**asdict(self.usage), "tokens": self.usage.tokens},
                "elapsed_s": round(self.elapsed_s(), 3), "steps": self.steps}

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def save(self) -> None:
        """Write trajectory.json atomically (temp file in the same directory, then rename)."""
        if self.path is None:
            return
        tmp = self.path.with_name(f".trajectory.{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            tmp.write_text(json.dumps(self.to_dict(), indent=1, default=repr), encoding="utf-8")
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
