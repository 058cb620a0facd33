"""The training metrics log: one JSON line per optimizer step under the run directory (`metrics.jsonl`).

Each line has the step, rewards per task (TRL's per-function means over the rows each function scored, and the
last generation batch's own figures), the alignment buffer size and tasks built, the share of alignment groups in
the last generation batch, sandbox errors, and the step time split into generation, reward and the rest
("update": log-probs, loss, backward, optimizer) in seconds.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from transformers import TrainerCallback


class StepTimer:
    """Wall time spent in named phases since the last `lap()`."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._mark = time.perf_counter()

    @contextmanager
    def measure(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - start

    def lap(self) -> dict[str, float]:
        """{generation_s, reward_s, update_s, step_s} since the previous lap; starts the next one."""
        now = time.perf_counter()
        step = now - self._mark
        gen, reward = self.phases.get("generation", 0.0), self.phases.get("reward", 0.0)
        self.phases, self._mark = {}, now
        return {"generation_s": gen, "reward_s": reward, "update_s": max(0.0, step - gen - reward), "step_s": step}


class MetricsLogger(TrainerCallback):
    """Writes `metrics.jsonl`; `sources` is a callable returning the run's live figures (buffer, mixer, rewards)."""

    TRL_KEYS = {"rewards/code_reward/mean": "code_reward_mean",
                "rewards/alignment_reward/mean": "alignment_reward_mean", "reward": "reward_mean", "loss": "loss",
                "completions/mean_length": "completion_length"}

    def __init__(self, path: Path, timer: StepTimer, sources) -> None:
        self.path, self.timer, self.sources = path, timer, sources
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._times: dict[str, float] = {}
        self.records: list[dict[str, Any]] = []

    def on_train_begin(self, args, state, control, **kwargs):
        self.timer.lap()

    def on_step_end(self, args, state, control, **kwargs):
        self._times = self.timer.lap()

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "train_runtime" in logs:  # the end-of-training summary, not a step
            return
        record = {"step": state.global_step, **self._times, **self.sources()}
        record.update({ours: _finite(logs[theirs]) for theirs, ours in self.TRL_KEYS.items() if theirs in logs})
        self.records.append(record)
        with self.path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
