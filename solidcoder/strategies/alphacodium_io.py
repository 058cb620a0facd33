"""AlphaCodium's structured answers and test measures: reading a stage's YAML reply into typed values as the anchor
reads it, the AI tests as test cases, a failing test as the anchor shows it (for an assert script, the asserted
call and the values expected and returned), and the anchor's distance between a program's output and the expected
one (`alpha_codium/gen/stages/run_tests.py: calc_distance_between_results`,
Codium-ai/AlphaCodium@eb7577dbe998ae7e55696264591ac3c5dde75638).

A reply is free YAML (no grammar or schema is asked for), read per stage as the anchor's code reads it
(`READERS`): trailing backticks (and, for the failure analyses, quotes) and a leading ```yaml cut, then
`yaml.safe_load` (our bounded `load_yaml`, aliases refused); only when that fails, the stage's second try: the
reflection's first closed fenced block (`postprocess_response`), or `try_fix_yaml` (a `|-` block scalar after each
of the stage's keys) for the ranking and the AI tests. Departure: `postprocess_response` also cuts a trailing
"stop" (a backend's artefact) first; here it is not.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass, replace
from typing import Any

import yaml

from solidcoder.parsing import literal, load_yaml, parse_python
from solidcoder.problem import Problem, TestCase
from solidcoder.stages.live import Evaluation, Outcome

_FENCED = re.compile(r"```[\w-]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CLOSED_FENCE = re.compile(r"```\w*\n(.*?)```", re.DOTALL)  # the anchor's `postprocess_response`
_TEST_LINE = re.compile(r"\btest\.py:([0-9]{1,9})")  # where the judge's detail says a script test failed


@dataclass(frozen=True)
class Reader:
    """How the anchor reads one stage's YAML reply: it cuts `trailing` characters from the end and a leading
    ```yaml, then `yaml.safe_load`s the rest; when that fails, the stage's second try, if it has one: the first
    closed fenced block (`fenced`, `run_self_reflect`'s `postprocess_response`) or `load_yaml`'s `try_fix_yaml`
    with the stage's `keys` (its `keys_fix_yaml`)."""

    trailing: str = "` \n"
    fenced: bool = False
    keys: tuple[str, ...] = ()


# Each stage's reader: `run_self_reflect` and the failure analyses read the reply themselves, the other stages
# through `load_yaml` (possible solutions without keys, so with no second try).
READERS: dict[str, Reader] = {
    "reflect": Reader(fenced=True), "possible_solutions": Reader(),
    "choose_best": Reader(keys=("name:", "content:", "why:", "- ")),
    "ai_tests": Reader(keys=("input:", "output:", "explanation:")),
    "analyze_failure": Reader(trailing="'` \n"), "analyze_and_fix": Reader(trailing="'` \n"),
}


def read_reply(text: str, reader: Reader) -> dict | None:
    """The mapping in a stage's reply, read as the anchor reads it (`reader`): the second try only when the text
    is not YAML at all; None when no mapping can be read."""
    body = text.rstrip(reader.trailing).removeprefix("```yaml")
    try:
        data = load_yaml(body)
    except yaml.YAMLError:
        second = _second_try(body, reader)
        data = _safe_load(second) if second else None
    return data if isinstance(data, dict) else None


def _second_try(body: str, reader: Reader) -> str | None:
    if reader.fenced:
        found = _CLOSED_FENCE.search(body)
        return found.group(1) if found else None
    return _block_scalars(body, reader.keys) if reader.keys else None


def load_reply(text: str, keys: tuple[str, ...] = ()) -> dict | None:
    """The mapping in a YAML or JSON reply, read leniently: the stripped text, else its first fenced block (closed
    or not), else `try_fix_yaml` with `keys`; None when none can be read. For readers outside AlphaCodium's flow
    (routing's generated tests); the flow reads each stage as the anchor does (`read_reply`)."""
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
    (`call_of`) with a literal expected value; None when it cannot be one."""
    if problem.kind != "call":
        return TestCase(kind="stdio", stdin=example.input, expected_stdout=example.output)
    call = call_of(example.input.strip(), entry_name(problem))
    try:
        return TestCase(kind="call", call=call, expected=literal(example.output)) if call else None
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def entry_name(problem: Problem) -> str:
    """The name a test calls the entry point by (`Solution.f` is called as `Solution().f(...)`)."""
    return (problem.entry_point or "").split(".")[-1]


def call_of(text: str, name: str) -> str | None:
    """An AI test's input as an expression that calls the entry point `name`: as written when it does, else, when it
    is no call at all, as the arguments of one (`1, 2` or `a=1, b=2`); None when it never calls the entry point."""
    tree = _expression(text)
    if tree is not None and entry_calls(tree, name):
        return text
    if isinstance(tree, ast.Call):  # a call of some other function
        return None
    wrapped = f"{name}({text})"
    return wrapped if _expression(wrapped) is not None else None


def _expression(text: str) -> ast.expr | None:
    try:
        return parse_python(text, "eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def entry_calls(node: ast.AST, name: str) -> list[ast.Call]:
    """The calls of the entry point within `node`, by its name: `f(...)` or `obj.f(...)`."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)
            and name in (getattr(n.func, "id", None), getattr(n.func, "attr", None))]


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


@dataclass(frozen=True)
class Asserted:
    """What a failing assert checks, as the anchor shows a test: the expression that calls the entry point (its
    input) and the value the assert expects of it (its expected output)."""

    expression: str
    expected: str


def failing_assert(script: str, detail: str, name: str) -> Asserted | None:
    """The assert of a script test that failed: the one on the line the judge's `detail` names, else the first that
    calls the entry point `name`; None when no assert calls it."""
    try:
        nodes = list(ast.walk(parse_python(script)))
    except (SyntaxError, ValueError):
        return None
    asserts = [n for n in nodes if isinstance(n, ast.Assert) and entry_calls(n.test, name)]
    line = int(found.group(1)) if (found := _TEST_LINE.search(detail)) else 0
    named = [n for n in asserts if n.lineno <= line <= (n.end_lineno or n.lineno)]
    return _asserted(script, (named or asserts)[0].test, name) if asserts else None


def _asserted(script: str, test: ast.expr, name: str) -> Asserted:
    """`call == value` (either way round, or `is`): the call and the value; `call` and `not call`: True and False;
    any other condition: its first call of the entry point, expected to make the condition (shown) hold."""
    source = functools.partial(ast.get_source_segment, script)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.Is):
        left, right = test.left, test.comparators[0]
        checked, value = (left, right) if entry_calls(left, name) else (right, left)
        return Asserted(source(checked) or "", _value_text(source(value) or "", value))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return Asserted(source(test.operand) or "", "False")
    first = entry_calls(test, name)[0]
    return Asserted(source(first) or "", "True" if first is test else source(test) or "")


def _value_text(text: str, node: ast.expr) -> str:
    """An expected value as the program's value is shown (its repr) when it is a literal, else its source."""
    try:
        return repr(literal(node))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return text


def shown(outcome: Outcome, asserted: Asserted | None, returned: str | None) -> Outcome:
    """A failed assert script's outcome as the anchor shows a test: the asserted expression as its input, the value
    expected, and the value the program `returned` when it ran that expression again (else what the judge said)."""
    if asserted is None:
        return outcome
    actual = returned if returned is not None else outcome.actual
    return replace(outcome, input=asserted.expression, expected=asserted.expected, actual=actual)


def error_text(outcome: Outcome) -> str:
    """A failing test as the anchor's `run_tests` shows it to the fix prompts: input, expected and actual output,
    and the error when the program did not finish (said once: a call that raised has only its error to show)."""
    text = f"test input:\n{outcome.input}\nexpected output:\n{outcome.expected}\ncode output:\n{outcome.actual}\n"
    error = outcome.status != "fail" and outcome.detail and outcome.detail != outcome.actual
    return text + (f"{outcome.status}: {outcome.detail}\n" if error else "")


def empty_output(outcome: Outcome) -> bool:
    """The anchor's `not non_empty_output`: the program ran and printed nothing."""
    return outcome.status == "fail" and not outcome.actual.strip()


def distance(evaluation: Evaluation) -> float:
    """The anchor's distance to the expected outputs, summed over the failed tests: per test, line by line, the
    absolute difference when every line is a number, else the count of differing lines, a single line compared with
    each line of the other side (numpy's broadcasting). What a test is compared by is what the program printed (a
    stdin program, also before it crashed or ran out of time) or returned (a call, its value's repr; nothing when it
    raised); infinite only when a program that finished printed nothing, or when the line counts differ and neither
    is one (numpy cannot broadcast them, and the anchor's `except` makes that infinite). Departure: a passed test
    counts 0 where the anchor compares it too (0 unless its judge tolerated a difference)."""
    return sum((_test_distance(o) for o in evaluation.failures()), 0.0)


def _test_distance(outcome: Outcome) -> float:
    given = _given(outcome)
    if outcome.status == "fail" and not given.strip():
        return math.inf
    expected, actual = _broadcast(outcome.expected.rstrip().split("\n"), given.strip().split("\n"))
    if len(expected) != len(actual):
        return math.inf
    numbers = _floats(expected), _floats(actual)
    if numbers[0] is not None and numbers[1] is not None:
        return sum(abs(a - b) for a, b in zip(*numbers, strict=True))
    return float(sum(a != b for a, b in zip(expected, actual, strict=True)))


def _given(outcome: Outcome) -> str:
    """What the program printed or returned on the test: nothing when all there is to show is its error."""
    return "" if outcome.status != "fail" and outcome.actual == outcome.detail else outcome.actual


def _broadcast(expected: list[str], actual: list[str]) -> tuple[list[str], list[str]]:
    """Both sides at the same length when one of them is a single line (repeated), as numpy broadcasts it."""
    size = max(len(expected), len(actual))
    return (expected * size if len(expected) == 1 else expected), (actual * size if len(actual) == 1 else actual)


def _floats(lines: list[str]) -> list[float] | None:
    try:
        return [float(line) for line in lines]
    except ValueError:
        return None
