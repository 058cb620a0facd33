"""The alignment reward (Eq. 5 of CodeRL+): the fraction of listed variables whose predicted value is right.

Default (`"paper"`): the model ends its answer with a block

    [ANSWER]
    name = <Python literal>
    func.name = <Python literal>
    [/ANSWER]

(without the block, `name = value` lines anywhere count; the last line for a name wins). Each value is parsed with
`ast.literal_eval` only, never `eval`; an unparsable or missing value counts as wrong. Values match when they have
the same type and are equal, with a small relative/absolute tolerance for floats (an int predicted for a float, or
the reverse, matches within the tolerance; a bool never matches an int). The reward is correct / listed, in [0, 1].

Variant `"released"`, as in the authors' released code (recipe/reward/reward_function_coderlplus.py), which differs
from the paper's equation: ground truth is the module-level locals at exit capped at 3 variables (build tasks with
`TaskBuilderConfig(module_only=True, max_variables=3)`), the answer is a JSON object on the last line,
`{"final_output": ..., "variables": {...}}`, and the score is 0.1 for that format plus 0.9 x (right items / (1 +
variables)), where the program's final output is one more item. Its value comparison here is the same strict one
as above, applied after `literal_eval` of string values (the released code also equates "true"/"1"/True etc.).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from solidcoder.parsing import literal
from solidcoder.train.alignment import AlignmentTask

_BLOCK = re.compile(r"\[ANSWER\](.*?)\[/ANSWER\]", re.DOTALL)
_LINE = re.compile(r"^\s*`?([A-Za-z_][\w.]*)`?\s*=\s*(.+?)\s*$")
_UNPARSED = object()
VARIANTS = ("paper", "released")


@dataclass(frozen=True)
class AlignmentRewardConfig:
    variant: str = "paper"
    rel_tol: float = 1e-6
    abs_tol: float = 1e-9
    format_bonus: float = 0.1  # released variant only

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"alignment reward variant must be one of {VARIANTS}, got {self.variant!r}")


def parse_literal(text: str) -> Any:
    """`ast.literal_eval(text)`, or the `_UNPARSED` sentinel."""
    try:
        return literal(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _UNPARSED


def parse_predictions(completion: str) -> dict[str, Any]:
    """`name -> value` from the last [ANSWER] block (else the whole text); unparsable values are left out."""
    blocks = _BLOCK.findall(completion)
    body = blocks[-1] if blocks else completion
    predictions = {}
    for line in body.splitlines():
        match = _LINE.match(line)
        if match and (value := parse_literal(match.group(2))) is not _UNPARSED:
            predictions[match.group(1)] = value
    return predictions


def values_match(predicted: Any, truth: Any, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Same type and equal; floats within tolerance (int/float interchangeable, bool never a number)."""
    if isinstance(truth, bool) or isinstance(predicted, bool):
        return type(predicted) is type(truth) and predicted == truth
    if isinstance(truth, (int, float)) and isinstance(predicted, (int, float)):
        if isinstance(truth, int) and isinstance(predicted, int):
            return predicted == truth
        return math.isclose(predicted, truth, rel_tol=rel_tol, abs_tol=abs_tol)
    if type(predicted) is not type(truth):
        return False
    if isinstance(truth, (list, tuple)):
        return len(predicted) == len(truth) and all(
            values_match(p, t, rel_tol, abs_tol) for p, t in zip(predicted, truth, strict=True))
    if isinstance(truth, dict):
        return predicted.keys() == truth.keys() and all(
            values_match(predicted[k], truth[k], rel_tol, abs_tol) for k in truth)
    return predicted == truth


class AlignmentScorer:
    """Scores one completion against one task under the configured variant."""

    def __init__(self, config: AlignmentRewardConfig | None = None) -> None:
        self.config = config or AlignmentRewardConfig()

    def score(self, completion: str, task: AlignmentTask) -> float:
        if self.config.variant == "released":
            return self._released(completion, task)
        return self._paper(completion, task)

    def _match(self, predicted: Any, truth: Any) -> bool:
        return values_match(predicted, truth, self.config.rel_tol, self.config.abs_tol)

    def _paper(self, completion: str, task: AlignmentTask) -> float:
        if not task.truth:
            return 0.0
        predictions = parse_predictions(completion)
        right = sum(name in predictions and self._match(predictions[name], value) for name, value in task.truth.items())
        return right / len(task.truth)

    def _released(self, completion: str, task: AlignmentTask) -> float:
        answer = _last_line_json(completion)
        if not (isinstance(answer, dict) and "final_output" in answer and isinstance(answer.get("variables"), dict)):
            return 0.0
        variables = answer["variables"]
        right = self._output_matches(answer["final_output"], task.final_output)
        right += sum(name in variables and self._loose(variables[name], value) for name, value in task.truth.items())
        return self.config.format_bonus + (1 - self.config.format_bonus) * right / (1 + len(task.truth))

    def _output_matches(self, predicted: Any, expected: str | None) -> bool:
        if expected is None:
            return False
        if isinstance(predicted, str) and predicted.strip() == expected.strip():
            return True
        truth = parse_literal(expected)
        return truth is not _UNPARSED and self._loose(predicted, truth)

    def _loose(self, predicted: Any, truth: Any) -> bool:
        """JSON has no tuples or sets: a string value also counts when its literal matches."""
        return self._match(predicted, truth) or self._match(_as_value(predicted), truth)


def _last_line_json(completion: str) -> Any:
    lines = completion.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None


def _as_value(value: Any) -> Any:
    """JSON gives strings for tuples, sets and such; read a string as a literal when it is one."""
    if isinstance(value, str):
        parsed = parse_literal(value)
        return value if parsed is _UNPARSED else parsed
    return value


class AlignmentReward:
    """TRL reward function for alignment rows (`payload` holds the task as JSON); None for code rows."""

    __name__ = "alignment_reward"

    def __init__(self, scorer: AlignmentScorer | None = None) -> None:
        self.scorer = scorer or AlignmentScorer()
        self.last_batch: dict[str, float] = {}

    def __call__(self, prompts: list, completions: list, task: list[str], payload: list[str],
                 **_: Any) -> list[float | None]:
        from solidcoder.train.code_reward import completion_text

        rewards: list[float | None] = [None] * len(task)
        for i, kind in enumerate(task):
            if kind == "alignment":
                rewards[i] = self.scorer.score(completion_text(completions[i]), AlignmentTask.from_json(payload[i]))
        scored = [r for r in rewards if r is not None]
        mean = sum(scored) / len(scored) if scored else 0.0
        self.last_batch = {"alignment_rows": len(scored), "alignment_reward": mean}
        return rewards
