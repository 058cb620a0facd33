"""Prompts for training: a streaming dataset of code prompts, and the mixer that swaps in alignment prompts.

The training set is a `datasets.IterableDataset` that cycles through the problems forever (reshuffled each pass),
one row per problem: `prompt` (chat messages), `task` ("code"), `problem_id`, `payload` (""). TRL repeats each row
`num_generations` times in a row, so a group is `num_generations` consecutive rows of one prompt.

Alignment prompts are mixed in where generation starts (`PromptMixer.mix`, called by the trainer on each
generation batch), not when the data loader reads ahead, so a task built from step k's failures can be used at
step k+1. For each batch of n groups the mixer turns round(alpha x groups so far) - (alignment groups so far)
groups into alignment groups - every row of a group the same task, so groups stay homogeneous - provided the
buffer holds at least that many distinct tasks (and `min_buffer`); until then every group is code generation.
The long-run share of alignment groups is therefore alpha from the first mixed batch on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from solidcoder.problem import Problem
from solidcoder.prompting import PromptLibrary
from solidcoder.train.alignment import AlignmentTask, TaskBuffer

CODE, ALIGNMENT = "code", "alignment"


class PromptRenderer:
    """Chat messages for both tasks from the `train/` templates (overridable like every prompt)."""

    def __init__(self, library: PromptLibrary, variant: str = "paper", include_problem: bool = False) -> None:
        self.library, self.include_problem = library, include_problem
        self.alignment_template = "train/alignment" if variant == "paper" else "train/alignment_released"

    def code_messages(self, problem: Problem) -> list[dict[str, str]]:
        io_mode = "call" if problem.kind == "call" else "stdin"
        statement = problem.statement + (f"\n\n{problem.starter_code}" if problem.starter_code else "")
        messages = self.library.messages("train/code", problem=statement, language="Python 3", io_mode=io_mode,
                                         entry_point=problem.entry_point or "")
        return [{"role": m.role, "content": m.content} for m in messages]

    def alignment_messages(self, task: AlignmentTask, problem: Problem | None) -> list[dict[str, str]]:
        io_mode = "stdin" if problem is None or problem.kind == "stdio" else "call"
        statement = problem.statement if self.include_problem and problem is not None else ""
        names = "\n".join(f"- `{name}`" for name in task.truth)
        # the answer block spelled out with the task's own names: small models copy a generic `name = value` verbatim
        answer_lines = "\n".join(f"{name} = <value>" for name in task.truth)
        messages = self.library.messages(self.alignment_template, problem=statement, code=task.code, io_mode=io_mode,
                                         program_input=task.program_input, variable_names=names,
                                         answer_lines=answer_lines)
        return [{"role": m.role, "content": m.content} for m in messages]


def code_row(renderer: PromptRenderer, problem: Problem) -> dict[str, Any]:
    return {"prompt": renderer.code_messages(problem), "task": CODE, "problem_id": problem.id, "payload": ""}


def code_prompt_stream(problems: list[Problem], renderer: PromptRenderer, seed: int = 0):
    """An endless `datasets.IterableDataset` of code rows, reshuffled on every pass over the problems."""
    from datasets import IterableDataset

    rows = [code_row(renderer, p) for p in problems]

    def generate():
        rng, order = random.Random(seed), list(range(len(rows)))
        while True:
            rng.shuffle(order)
            yield from (rows[i] for i in order)

    return IterableDataset.from_generator(generate)


@dataclass
class MixConfig:
    alpha: float = 0.4
    min_buffer: int = 1
    recent: int | None = None  # sample tasks from the newest `recent` only (None: the whole buffer)
    seed: int = 0


@dataclass
class MixStats:
    batches: int = 0
    groups: int = 0
    alignment_groups: int = 0
    mixed_groups: int = 0  # groups seen since mixing started (the denominator of the long-run ratio)
    last_fraction: float = 0.0
    history: list[list[str]] = field(default_factory=list)  # per batch, the task of each group


class PromptMixer:
    """Replaces a share alpha of each generation batch's groups by alignment tasks from the buffer."""

    def __init__(self, buffer: TaskBuffer, renderer: PromptRenderer, problems: dict[str, Problem],
                 config: MixConfig | None = None) -> None:
        self.buffer, self.renderer, self.problems = buffer, renderer, problems
        self.config = config or MixConfig()
        self.stats = MixStats()
        self._rng = random.Random(self.config.seed)

    def mix(self, rows: list[dict[str, Any]], num_generations: int) -> list[dict[str, Any]]:
        """The batch with some groups turned into alignment groups; `rows` holds whole groups back to back."""
        groups = split_groups(rows, num_generations)
        wanted = self._alignment_quota(len(groups))
        tasks = self.buffer.sample(wanted, self.config.recent) if wanted else []
        chosen = sorted(self._rng.sample(range(len(groups)), len(tasks)))
        for index, task in zip(chosen, tasks, strict=True):
            groups[index] = [self._alignment_row(task) for _ in range(num_generations)]
        self._record(groups, len(tasks))
        return [row for group in groups for row in group]

    def _alignment_quota(self, n_groups: int) -> int:
        cfg = self.config
        if cfg.alpha <= 0 or len(self.buffer) < cfg.min_buffer:
            return 0
        target = round(cfg.alpha * (self.stats.mixed_groups + n_groups))
        return max(0, min(n_groups, target - self.stats.alignment_groups, len(self.buffer)))

    def _alignment_row(self, task: AlignmentTask) -> dict[str, Any]:
        prompt = self.renderer.alignment_messages(task, self.problems.get(task.problem_id))
        return {"prompt": prompt, "task": ALIGNMENT, "problem_id": task.problem_id, "payload": task.to_json()}

    def _record(self, groups: list[list[dict]], aligned: int) -> None:
        stats = self.stats
        stats.batches += 1
        stats.groups += len(groups)
        if aligned or stats.mixed_groups or (self.config.alpha > 0 and len(self.buffer) >= self.config.min_buffer):
            stats.mixed_groups += len(groups)
        stats.alignment_groups += aligned
        stats.last_fraction = aligned / len(groups) if groups else 0.0
        stats.history.append([group[0]["task"] for group in groups])


def split_groups(rows: list[dict[str, Any]], num_generations: int) -> list[list[dict[str, Any]]]:
    """Consecutive groups of `num_generations` rows; each must repeat one prompt (TRL's repeat order)."""
    if len(rows) % num_generations:
        raise ValueError(f"a generation batch of {len(rows)} rows is not whole groups of {num_generations}")
    groups = [rows[i:i + num_generations] for i in range(0, len(rows), num_generations)]
    for group in groups:
        if any(row["prompt"] != group[0]["prompt"] for row in group):
            raise ValueError("a group mixes different prompts; rows must arrive as TRL repeats them")
    return groups
