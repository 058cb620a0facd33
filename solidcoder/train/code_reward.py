"""The code reward (Eq. 4 of CodeRL+): 1 when the generated program passes every test of its problem, else 0.

Completions of a batch are judged concurrently on the sandbox pool (one thread per worker, each blocking on a
free zygote), so reward time stays a small share of a step. A judgement the *sandbox* spoiled (a worker that
could not run the program) is retried, then scored None (TRL gives such a row zero advantage instead of a false
0) and counted and logged; when more than `max_sandbox_error_fraction` of a batch is spoiled, the reward raises
rather than train on noise. Every judged rollout goes to the observers (the alignment task builder).

Reward functions follow TRL's interface: `fn(prompts, completions, **dataset_columns) -> list[float | None]`,
and return None for rows of the other task.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from solidcoder.errors import SandboxFailure
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.problem import Problem
from solidcoder.train.alignment import Rollout, RolloutObserver, _map_threads

log = logging.getLogger("solidcoder.train")

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


def completion_text(completion: Any) -> str:
    """TRL hands conversational completions as `[{"role": "assistant", "content": ...}]`, plain ones as str."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content") or "" for m in completion if m.get("role", "assistant") == "assistant")


def extract_program(text: str) -> str:
    """The last ```python block, else the last fenced block, else the whole text."""
    blocks = _FENCE.findall(text)
    python = [body for tag, body in blocks if tag.lower() in ("python", "python3", "py")]
    if python or blocks:
        return (python or [body for _, body in blocks])[-1]
    return text


@dataclass(frozen=True)
class CodeRewardConfig:
    """`hidden_tests`: judge on public + hidden tests (default) or public only."""

    hidden_tests: bool = True
    sandbox_retries: int = 1
    max_sandbox_error_fraction: float = 0.25


@dataclass
class CodeRewardStats:
    judged: int = 0
    passed: int = 0
    sandbox_errors: int = 0
    last_batch: dict[str, float] = field(default_factory=dict)


class CodeReward:
    """TRL reward function for code rows: judge each program, notify observers, return 1.0 / 0.0 / None."""

    __name__ = "code_reward"

    def __init__(self, judge: Judge, problems: dict[str, Problem], observers: Sequence[RolloutObserver] = (),
                 config: CodeRewardConfig | None = None) -> None:
        self.judge, self.problems, self.observers = judge, problems, list(observers)
        self.config = config or CodeRewardConfig()
        self.stats = CodeRewardStats()

    def __call__(self, prompts: list, completions: list, task: list[str], problem_id: list[str],
                 **_: Any) -> list[float | None]:
        rows = [i for i, kind in enumerate(task) if kind == "code"]
        items = [(self.problems[problem_id[i]], extract_program(completion_text(completions[i]))) for i in rows]
        rollouts = _map_threads(self._judge, items, self.judge.pool.size)
        rewards: list[float | None] = [None] * len(task)
        for i, rollout in zip(rows, rollouts, strict=True):
            rewards[i] = None if rollout is None else float(rollout.passed)
        self._account([r for r in rollouts if r is not None], len(rollouts))
        for observer in self.observers:
            observer.observe([r for r in rollouts if r is not None])
        return rewards

    def _judge(self, item: tuple[Problem, str]) -> Rollout | None:
        problem, code = item
        tests = problem.all_tests if self.config.hidden_tests else problem.public_tests
        failure: SandboxFailure | None = None
        for _attempt in range(1 + self.config.sandbox_retries):
            try:
                return _rollout(problem, code, tests, self.judge.judge(problem, code, tests=tests))
            except SandboxFailure as exc:
                failure = exc
        log.warning("sandbox error judging a rollout of %s (%s); scored None, not 0", problem.id, failure)
        return None

    def _account(self, rollouts: list[Rollout], attempted: int) -> None:
        errors = attempted - len(rollouts)
        passed = sum(r.passed for r in rollouts)
        self.stats.judged += len(rollouts)
        self.stats.passed += passed
        self.stats.sandbox_errors += errors
        self.stats.last_batch = {"code_rows": attempted, "code_passed": passed, "sandbox_errors": errors}
        if attempted and errors / attempted > self.config.max_sandbox_error_fraction:
            raise SandboxFailure(f"{errors} of {attempted} rollouts hit sandbox errors; refusing to train on it")


def _rollout(problem: Problem, code: str, tests: list, report: JudgeReport) -> Rollout:
    failure = next((v for v in report.verdicts if v.status == "fail"), None)
    failing_test = tests[failure.index] if failure is not None else None
    statuses = [v.status for v in report.verdicts]
    if len(statuses) < report.total:
        statuses.append("missing")  # a run that stopped early never counts as a clean semantic failure
    return Rollout(problem, code, report.passed, statuses, failing_test, failure.actual if failure else None)
