"""The record of one `solve` run: every model call, every execution, every accumulated test, in order.

A `Trajectory` is written to `<run_dir>/trajectory.json` after every step (call, execution, decision; temp file,
then `os.replace`), so a run that dies part-way still leaves everything up to its last step on disk. Usage
totals are summed from the calls recorded here, not from the run-wide `Budget`, so concurrent runs sharing one
budget still report their own figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from solidcoder.models.base import Completion, Message


@dataclass
class Usage:
    """Model usage of one run."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.cost_usd += completion.cost_usd


class Trajectory:
    """Ordered steps of a run plus its outcome; `save()` writes it atomically when a run directory is set."""

    def __init__(self, run_dir: Path | None, header: dict[str, Any]):
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.header = header
        self.steps: list[dict[str, Any]] = []
        self.accumulated: list[dict[str, Any]] = []
        self.usage = Usage()
        self.outcome: dict[str, Any] = {"status": "running"}
        self.started = time.monotonic()
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)

    @property
    def path(self) -> Path | None:
        return self.run_dir / "trajectory.json" if self.run_dir is not None else None

    def call(self, stage: str, template: str, messages: list[Message], completion: Completion | None,
             temperature: float | None, error: str | None = None) -> None:
        """One model call: the prompt, the reply (or the error) and its usage."""
        step: dict[str, Any] = {"type": "call", "stage": stage, "template": template, "temperature": temperature,
                                "messages": [{"role": m.role, "content": m.content} for m in messages]}
        if completion is not None:
            self.usage.add(completion)
            step.update(reply=completion.text, model=completion.model, prompt_tokens=completion.prompt_tokens,
                        completion_tokens=completion.completion_tokens, cost_usd=completion.cost_usd,
                        latency_s=round(completion.latency_s, 4))
        if error is not None:
            step["error"] = error
        self.steps.append(step)
        self.save()

    def add(self, kind: str, stage: str, **data: Any) -> None:
        """Any other step: an execution, a decision, a rejected fix."""
        self.steps.append({"type": kind, "stage": stage, **data})
        self.save()

    def calls(self, stage: str | None = None) -> list[dict[str, Any]]:
        return [s for s in self.steps if s["type"] == "call" and (stage is None or s["stage"] == stage)]

    def to_dict(self) -> dict[str, Any]:
        return {**self.header, "outcome": self.outcome, "usage": {**asdict(self.usage), "tokens": self.usage.tokens},
                "elapsed_s": round(time.monotonic() - self.started, 3), "accumulated_tests": self.accumulated,
                "steps": self.steps}

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
