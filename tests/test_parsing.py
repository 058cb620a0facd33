"""The one parse entry point (`solidcoder/parsing.py`): safe under threads on CPython 3.11, bounded on every input,
and the only place in the package that builds a tree from untrusted text."""

from __future__ import annotations

import ast
import re
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from solidcoder.errors import UnreadableCode, UnreadableText
from solidcoder.execution.trace import forgery_route
from solidcoder.parsing import MAX_DEPTH, compile_source, literal, load_json, load_yaml, parse_python
from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import strip_self_tests

PACKAGE = Path(__file__).resolve().parents[1] / "solidcoder"
PROGRAM = '''
def f(xs, k):
    """doc"""
    out = []
    for i, x in enumerate(xs):
        if x % k == 0 and (i > 2 or x < 10):
            out.append([x * 2, {"a": (i, x)}, lambda y: y + x])
    return sorted(out, key=lambda t: (t[0], -len(t)))
'''
FLAT = "def f(x):\n    return " + " + ".join(["x"] * 3000) + "\n"


class _Finalized:
    def __del__(self):
        sum(range(50))  # Python code run by the collector, in whichever thread triggered it


def _parse_under_finalizers(parse, errors: list[str]) -> None:
    for _ in range(300):
        junk = [_Finalized() for _ in range(50)]
        for item in junk:
            item.self = item  # a cycle: only the collector frees it, at an arbitrary allocation
        del junk
        try:
            parse(PROGRAM * 20)
        except SystemError as exc:
            errors.append(str(exc))
            return


def _race(parse) -> list[str]:
    errors: list[str] = []
    threads = [threading.Thread(target=_parse_under_finalizers, args=(parse, errors)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


@pytest.mark.skipif(sys.version_info[:2] != (3, 11) or sys.version_info >= (3, 11, 8),
                    reason="the race is CPython 3.11.0-3.11.7's (gh-106905)")
def test_the_race_is_real_on_this_python_when_ast_parse_is_called_bare():
    assert _race(ast.parse), "the reproduction must fail without the lock, or it proves nothing below"


def test_eight_threads_parsing_under_finalizers_through_the_entry_point_raise_no_system_error():
    assert _race(parse_python) == []


def test_no_module_but_the_entry_point_builds_a_tree_from_text():
    """Every tree built from text (a parse, a literal, a compile to AST) is built in parsing.py, under its lock."""
    pattern = re.compile(r"\bast\.parse\(|PyCF_ONLY_AST|literal_eval\(")
    found = [f"{path.relative_to(PACKAGE)}:{n}" for path in PACKAGE.rglob("*.py") if path.name != "parsing.py"
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if pattern.search(line.split("#")[0]) and not line.lstrip().startswith(('"', "`"))]
    assert found == []


def test_a_long_flat_expression_is_unreadable_code_a_syntax_error_not_a_recursion_error():
    with pytest.raises(UnreadableCode) as caught:
        parse_python(FLAT)
    assert isinstance(caught.value, SyntaxError)
    assert strip_self_tests(FLAT) == FLAT  # not read, so returned unchanged for the sandbox to judge
    assert extract_code(f"```python\n{FLAT}```").startswith("def f(x):")


def test_a_tree_deeper_than_the_bound_is_refused_and_one_at_the_bound_is_read():
    at_bound = "x = " + " + ".join(["1"] * (MAX_DEPTH - 4))
    assert isinstance(parse_python(at_bound), ast.Module)
    with pytest.raises(UnreadableCode, match="nested more than"):
        parse_python("x = " + " + ".join(["1"] * (MAX_DEPTH + 5)))


def test_compile_source_judges_as_python_does_and_turns_a_compiler_overflow_into_unreadable_code():
    compile_source(" + ".join(["1"] * 1000), "<t>", "eval")  # Python compiles it: so do we
    with pytest.raises(UnreadableCode):
        compile_source(FLAT * 10, "<t>")


def test_an_unreadable_program_has_a_route_to_the_tracer_not_none():
    assert forgery_route(FLAT) and "cannot be checked" in forgery_route(FLAT)
    assert forgery_route(PROGRAM) is None


def test_text_past_the_size_bound_is_refused_before_parsing():
    with pytest.raises(UnreadableCode, match="at most"):
        parse_python("x = 1\n" * 200_000)
    with pytest.raises(UnreadableText):
        load_json("[" + "1," * 600_000 + "1]")


def test_literals_and_json_nested_past_the_bounds_are_value_or_syntax_errors():
    with pytest.raises(SyntaxError):
        literal("[" * 150 + "]" * 150)
    with pytest.raises(ValueError):
        load_json("[" * 100_000 + "]" * 100_000)
    assert literal(" [1, (2, 'a')] ") == [1, (2, "a")] and load_json('{"a": "x\ny"}') == {"a": "x\ny"}


def test_yaml_aliases_are_refused_at_once_where_safe_load_would_expand_them():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(12))
    start = time.perf_counter()
    with pytest.raises(yaml.YAMLError, match="aliases"):
        load_yaml(bomb)
    assert time.perf_counter() - start < 1.0
    assert load_yaml("name: x\ntests:\n  - input: '1'\n    output: '2'\n") == {
        "name": "x", "tests": [{"input": "1", "output": "2"}]}


def test_yaml_nested_past_the_stack_is_a_yaml_error():
    with pytest.raises(yaml.YAMLError):
        load_yaml("[" * 5000 + "]" * 5000)
