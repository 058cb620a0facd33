"""AlphaCodium's structured answers and test measures: reading a YAML (or JSON) reply into typed values, the JSON
schemas equivalent to the anchor's Pydantic definitions, the text a failing test is shown as, and the anchor's
distance between a program's output and the expected one (`alpha_codium/gen/stages/run_tests.py:
calc_distance_between_results`, Codium-ai/AlphaCodium@eb7577dbe998ae7e55696264591ac3c5dde75638).

A reply is read as the anchor's `load_yaml` reads it: trailing backticks and a leading ```yaml fence dropped, then
`yaml.safe_load`; on failure the first fenced block (`postprocess_response`), then the anchor's `try_fix_yaml` (a
`|-` block scalar after each named key). JSON, what a backend that enforces the schema returns, is YAML too.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

from solidcoder.parsing import literal, load_yaml, parse_python
from solidcoder.problem import Problem, TestCase
from solidcoder.stages.live import Evaluation, Outcome

_FENCED = re.compile(r"```[\w-]*\n(.*?)(?:```|\Z)", re.DOTALL)
_STRING = {"type": "string"}


def _object(**properties: dict) -> dict:
    """A strict JSON-schema object: every property required, no others (what strict structured output asks)."""
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


def _strings(*names: str) -> dict:
    return {name: _STRING for name in names}


def _array(items: dict) -> dict:
    return {"type": "array", "items": items}


_EXAMPLE = _object(**_strings("input", "output", "explanation"))
SCHEMAS: dict[str, dict] = {
    "reflect": _object(self_reflection=_array(_STRING), tests_explanations=_array(_EXAMPLE)),
    "possible_solutions": _object(possible_solutions=_array(_object(
        **_strings("name", "content", "why_it_works"), labels=_array(_STRING), complexity=_STRING))),
    "choose_best": _object(**_strings("name", "content", "why"), flow=_array(_STRING),
                           problem_tests=_array(_object(**_strings("input", "output"))),
                           input_output_examples_flow=_array(_STRING)),
    "ai_tests": _object(tests=_array(_EXAMPLE)),
    "analyze_failure": _object(**_strings("failed_tests", "what_went_wrong", "fixed_flow")),
    "analyze_and_fix": _object(**_strings("failed_tests", "what_went_wrong", "fixed_flow", "fixed_code")),
}
# The keys the anchor's `try_fix_yaml` turns into block scalars, per stage (its `keys_fix_yaml` arguments).
FIX_KEYS: dict[str, tuple[str, ...]] = {
    "choose_best": ("name:", "content:", "why:", "- "), "ai_tests": ("input:", "output:", "explanation:"),
}


def load_reply(text: str, keys: tuple[str, ...] = ()) -> dict | None:
    """The mapping in a YAML or JSON reply, read as the anchor's `load_yaml`; None when none can be read."""
    body = text.rstrip("'` \n").removeprefix("```yaml").removeprefix("```json").strip("\n")
    fenced = _FENCED.search(text)
    for candidate in (body, fenced.group(1) if fenced else None, _block_scalars(body, keys) if keys else None):
        data = _safe_load(candidate) if candidate else None
        if isinstance(data, dict):
            return data
    return None


def _safe_load(text: str) -> Any:
    try:
        return load_yaml(text)
    except yaml.YAMLError:
        return None


def _block_scalars(text: str, keys: tuple[str, ...]) -> str:
    """The anchor's `try_fix_yaml`: a line that starts with a key and holds no '|' gets a `|-` block scalar."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        for key in keys:
            if line.strip().startswith(key) and "|" not in line:
                lines[i] = line.replace(key, f"{key} |-\n        ")
    return "\n".join(lines)


def as_text(value: Any) -> str:
    """A YAML field as prompt text: a string as is, a list as bullet lines, anything else dumped as YAML."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(f"- {item.strip()}" for item in value)
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True).strip()


@dataclass(frozen=True)
class Reflection:
    """The self-reflection stage's answer: the problem in bullet points and each public test's explanation."""

    bullets: str
    explanations: str


def read_reflection(data: dict, tests: int) -> Reflection | None:
    """The anchor's checks: both fields present, one explanation per public test."""
    explanations = data.get("tests_explanations")
    if "self_reflection" not in data or not isinstance(explanations, list) or len(explanations) != tests:
        return None
    return Reflection(as_text(data["self_reflection"]), as_text(explanations))


@dataclass(frozen=True)
class Solution:
    """One possible solution: its name and its YAML text as the prompts show it."""

    name: str
    text: str


def _records(data: dict, key: str) -> list[dict] | None:
    """`data[key]` when it is a non-empty list of mappings (the schema's shape), else None."""
    items = data.get(key)
    return items if isinstance(items, list) and items and all(isinstance(i, dict) for i in items) else None


def read_solutions(data: dict) -> list[Solution] | None:
    """The possible solutions, without the first whose name says brute force (`remove_bruce_force_solutions`)."""
    items = _records(data, "possible_solutions")
    if items is None:
        return None
    solutions = [Solution(str(s.get("name", "")).strip(), as_text(s)) for s in items]
    brute = next((i for i, s in enumerate(solutions) if "brute" in s.name.lower()), None)
    return solutions if brute is None else solutions[:brute] + solutions[brute + 1:]


@dataclass(frozen=True)
class Example:
    """An AI-generated test as the model wrote it."""

    input: str
    output: str


def read_examples(data: dict) -> list[Example] | None:
    items = _records(data, "tests")
    if items is None:
        return None
    return [Example(str(t.get("input", "")), str(t.get("output", ""))) for t in items if "input" in t]


def example_test(example: Example, problem: Problem) -> TestCase | None:
    """An AI test as a test case typed like the problem: stdin and expected stdout, or a call of the entry point
    (a bare argument list is wrapped in one) with a literal expected value; None when it cannot be one."""
    if problem.kind != "call":
        return TestCase(kind="stdio", stdin=example.input, expected_stdout=example.output)
    call = example.input.strip()
    try:
        expression = parse_python(call, "eval").body
        if not isinstance(expression, ast.Call):
            call = f"{(problem.entry_point or '').split('.')[-1]}({call})"
            parse_python(call, "eval")
        return TestCase(kind="call", call=call, expected=literal(example.output))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


@dataclass(frozen=True)
class Analysis:
    """The failure analysis of the public-test fix (`code_contests_prompt_analyze_failure`)."""

    what_went_wrong: str
    fixed_flow: str


def read_analysis(data: dict) -> Analysis | None:
    if "what_went_wrong" not in data or "fixed_flow" not in data:
        return None
    return Analysis(as_text(data["what_went_wrong"]), as_text(data["fixed_flow"]))


def read_fixed_code(data: dict) -> str | None:
    """`fixed_code`, cleaned as the anchor does (fences dropped; when it does not parse, without its last line);
    None when the field is missing, and "" when the code does not parse either way (the anchor keeps its code)."""
    if "fixed_code" not in data:
        return None
    code = str(data["fixed_code"]).rstrip("'` \n").removeprefix("```python").removeprefix("python").lstrip("\n")
    for candidate in (code, "\n".join(code.splitlines()[:-1]).rstrip("'` \n")):
        if _parses(candidate):
            return candidate + "\n"
    return ""


def _parses(code: str) -> bool:
    try:
        parse_python(code)
    except (SyntaxError, ValueError):
        return False
    return bool(code.strip())


def error_text(outcome: Outcome) -> str:
    """A failing test as the anchor's `run_tests` shows it to the fix prompts."""
    text = f"test input:\n{outcome.input}\nexpected output:\n{outcome.expected}\ncode output:\n{outcome.actual}\n"
    return text + (f"{outcome.status}: {outcome.detail}\n" if outcome.status != "fail" and outcome.detail else "")


def empty_output(outcome: Outcome) -> bool:
    """The anchor's `not non_empty_output`: the program ran and printed nothing."""
    return outcome.status == "fail" and not outcome.actual.strip()


def distance(evaluation: Evaluation) -> float:
    """The anchor's distance to the expected outputs: summed over the tests, per test line by line, the absolute
    difference when every line is a number, else the count of differing lines; infinite when a test crashed, timed
    out or printed nothing. Departures: a passed test counts 0 (the anchor compares it too: 0 unless its judge
    tolerated a difference), and line counts that differ are infinite (numpy's broadcasting of a single line is
    not imitated)."""
    return sum((_test_distance(o) for o in evaluation.outcomes if not o.passed), 0.0)


def _test_distance(outcome: Outcome) -> float:
    if outcome.status != "fail" or not outcome.actual.strip():
        return math.inf
    expected, actual = outcome.expected.rstrip().split("\n"), outcome.actual.rstrip().split("\n")
    if len(expected) != len(actual):
        return math.inf
    numbers = _floats(expected), _floats(actual)
    if numbers[0] is not None and numbers[1] is not None:
        return sum(abs(a - b) for a, b in zip(*numbers, strict=True))
    return float(sum(a != b for a, b in zip(expected, actual, strict=True)))


def _floats(lines: list[str]) -> list[float] | None:
    try:
        return [float(line) for line in lines]
    except ValueError:
        return None
