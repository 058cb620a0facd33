"""The training metrics log: one JSON line per optimizer step under the run directory (`metrics.jsonl`).

Each line has the step, rewards per task (TRL's per-function means over the rows each function scored, and the
last generation batch's own figures), the alignment buffer size and tasks built, the share of alignment groups in
the last generation batch, sandbox errors, the step time split into generation, reward and the rest
("update": log-probs, loss, backward, optimizer) in seconds, the completion tokens generated per second of
generation (null on steps that generated nothing), and this process's peak GPU memory allocated and reserved by
torch since the previous line (null without CUDA). The last three also go to the progress output.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

GIB = 2**30


class StepTimer:
    """Wall time spent in named phases, and completion tokens generated, since the last `lap()`."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self.completion_tokens = 0
        self._mark = time.perf_counter()

    def add_tokens(self, count: int) -> None:
        self.completion_tokens += count

    @contextmanager
    def measure(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - start

    def lap(self) -> dict[str, float | None]:
        """{generation_s, reward_s, update_s, step_s, generation_tokens_per_s} since the previous lap; starts the
        next one. Tokens per second is None when nothing was generated."""
        now = time.perf_counter()
        step = now - self._mark
        gen, reward = self.phases.get("generation", 0.0), self.phases.get("reward", 0.0)
        speed = self.completion_tokens / gen if "generation" in self.phases and gen > 0 else None
        self.phases, self.completion_tokens, self._mark = {}, 0, now
        return {"generation_s": gen, "reward_s": reward, "update_s": max(0.0, step - gen - reward), "step_s": step,
                "generation_tokens_per_s": speed}


def gpu_memory_peaks() -> dict[str, float | None]:
    """GiB torch allocated and reserved at most on this process's GPU since the previous call, which resets the
    peaks; None for both while CUDA is not in use."""
    import torch

    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return {"gpu_mem_allocated_gib": None, "gpu_mem_reserved_gib": None}
    peaks = {"gpu_mem_allocated_gib": torch.cuda.max_memory_allocated() / GIB,
             "gpu_mem_reserved_gib": torch.cuda.max_memory_reserved() / GIB}
    torch.cuda.reset_peak_memory_stats()
    return peaks


class MetricsLogger(TrainerCallback):
    """Writes `metrics.jsonl`; `sources` is a callable returning the run's live figures (buffer, mixer, rewards).

    It adds memory and speed to the `logs` TRL passes on: the progress callback, which transformers registers after
    every other callback, prints them with TRL's own figures."""

    SHOWN = ("generation_tokens_per_s", "gpu_mem_allocated_gib", "gpu_mem_reserved_gib")

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
        gpu_memory_peaks()

    def on_step_end(self, args, state, control, **kwargs):
        self._times = self.timer.lap()

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "train_runtime" in logs:  # the end-of-training summary, not a step
            return
        record = {"step": state.global_step, **self._times, **gpu_memory_peaks(), **self.sources()}
        record.update({ours: _finite(logs[theirs]) for theirs, ours in self.TRL_KEYS.items() if theirs in logs})
        logs.update({key: _rounded(record[key]) for key in self.SHOWN})
        self.records.append(record)
        with self.path.open("a") as fh:
            fh.write(json.dumps(record) + "\n")


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value
