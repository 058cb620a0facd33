"""Free-text problem files: call stubs with doctest/assert/arrow/LeetCode examples, Input/Output example sections,
forcing the kind, one-line errors, and a corpus of statements pasted in each judge's layout
(tests/fixtures/statements: each NAME.txt with the exact problem it must yield in NAME.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from solidcoder.errors import BadInput
from solidcoder.solve.textproblem import parse_problem_text, read_problem_text

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STATEMENTS = Path(__file__).resolve().parent / "fixtures" / "statements"
CORPUS = sorted(path.stem for path in STATEMENTS.glob("*.txt"))
FORMATS = ("cf_", "atcoder_", "hackerrank_", "leetcode_", "doctest_", "asserts", "markdown_")
PROSE = re.compile(r"\b(contains|given|print|standard|format|integers?|lines?)\b", re.IGNORECASE)


def wanted(name: str) -> dict:
    return json.loads((STATEMENTS / f"{name}.json").read_text(encoding="utf-8"))


def parsed(name: str):
    return read_problem_text(STATEMENTS / f"{name}.txt")


def test_doctest_stub_is_a_call_problem():
    problem = read_problem_text(EXAMPLES / "is_palindrome.txt")
    assert (problem.id, problem.kind, problem.entry_point) == ("is_palindrome", "call", "is_palindrome")
    assert problem.starter_code == "def is_palindrome(s: str) -> bool:\n"
    assert [(t.call, t.expected) for t in problem.public_tests][1] == ('is_palindrome("race a car")', False)
    assert len(problem.public_tests) == 3 and "ignoring case" in problem.statement


def test_arrow_assert_and_tuple_examples():
    text = """Return the pair (min, max).

    def bounds(xs):

    bounds([3, 1, 2]) -> (1, 3)
    assert bounds([5]) == (5, 5)
    bounds([0, 0]) => (0, 0).
    >>> bounds([2, 9])
    (2, 9)
    """
    problem = parse_problem_text(text, "bounds")
    scripts = [t.script for t in problem.public_tests]
    assert scripts == ["assert bounds([3, 1, 2]) == (1, 3)", "assert bounds([5]) == (5, 5)",
                       "assert bounds([0, 0]) == (0, 0)", "assert bounds([2, 9]) == (2, 9)"]


def test_sample_sections_make_a_stdio_problem():
    problem = read_problem_text(EXAMPLES / "sum_pairs.txt")
    assert problem.kind == "stdio" and problem.entry_point is None
    assert [(t.stdin, t.expected_stdout) for t in problem.public_tests] == [("2\n1 2\n-5 5\n", "3\n0\n")]


def test_unfenced_numbered_examples_and_format_sections():
    text = ("Print the sum.\n\nInput\nTwo integers.\n\nOutput\nTheir sum.\n\nExample Input 1:\n1 2\n\n"
            "Example Output 1:\n3\n\nExample Input 2:\n5 5\n\nExample Output 2:\n10\n")
    problem = parse_problem_text(text, "p")
    assert [(t.stdin, t.expected_stdout) for t in problem.public_tests] == [("1 2\n", "3\n"), ("5 5\n", "10\n")]


def test_forcing_the_kind():
    text = "def f(x):\n\nSample Input\n```\n1\n```\nSample Output\n```\n2\n```\n"
    assert parse_problem_text(text, "p").kind == "stdio"
    forced = parse_problem_text(text, "p", function="f")
    assert forced.kind == "call" and forced.entry_point == "f"
    assert parse_problem_text("Double x.\nf(2) -> 4\n", "p", function="f").public_tests[0].expected == 4
    assert parse_problem_text("def f(x):\n", "p", kind="stdio").public_tests == []


@pytest.mark.parametrize("text, message", [
    ("Just prose, no stub, no examples.", "cannot tell how the solution is run"),
])
def test_undecidable_text_is_bad_input(text, message):
    with pytest.raises(BadInput, match=message):
        parse_problem_text(text, "p")


def test_unreadable_and_empty_files(tmp_path):
    with pytest.raises(BadInput, match="cannot read"):
        read_problem_text(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(BadInput, match="empty"):
        read_problem_text(tmp_path / "empty.txt")
    with pytest.raises(BadInput, match="not a Python function name"):
        parse_problem_text("text", "p", function="not-a-name")


def test_the_corpus_has_twenty_statements_covering_every_format():
    assert len(CORPUS) >= 20 and all(any(name.startswith(f) for name in CORPUS) for f in FORMATS)


@pytest.mark.parametrize("name", CORPUS)
def test_statement_has_its_kind_and_entry_point(name):
    problem = parsed(name)
    assert (problem.kind, problem.entry_point) == (wanted(name)["kind"], wanted(name)["entry_point"])


@pytest.mark.parametrize("name", CORPUS)
def test_statement_yields_exactly_its_examples(name):
    assert [t.to_dict() for t in parsed(name).public_tests] == wanted(name)["tests"]


@pytest.mark.parametrize("name", CORPUS)
def test_statement_stub_is_the_starter_code(name):
    assert parsed(name).starter_code == wanted(name)["starter_code"]


@pytest.mark.parametrize("name", [n for n in CORPUS if wanted(n)["kind"] == "stdio"])
def test_format_descriptions_never_become_tests(name):
    texts = [t.stdin + t.expected_stdout for t in parsed(name).public_tests]
    assert not any(PROSE.search(text) for text in texts)


def test_format_sections_without_examples_are_not_a_problem():
    text = ("A. Sum\n\ninput\nstandard input\noutput\nstandard output\n\nInput\nThe first line contains a and b."
            "\n\nOutput\nPrint a + b.\n")
    with pytest.raises(BadInput, match="cannot tell how the solution is run"):
        parse_problem_text(text, "p")


def test_fenced_format_blocks_yield_to_labelled_samples():
    text = ("Input\n```\nN\n```\nOutput\n```\nS\n```\n\nSample Input 1\n3\n\nSample Output 1\n6\n")
    assert [(t.stdin, t.expected_stdout) for t in parse_problem_text(text, "p").public_tests] == [("3\n", "6\n")]


def test_leetcode_example_naming_no_parameter_is_skipped():
    text = "def f(a, b):\n\nExample 1:\nInput: a = 1, c = 2\nOutput: 3\nExample 2:\nInput: a = 1, b = 2\nOutput: 3\n"
    assert [t.call for t in parse_problem_text(text, "p").public_tests] == ["f(1, 2)"]


def test_forced_function_inside_a_class_is_a_method():
    text = "class Solution:\n    def helper(self):\n    def solve(self, x):\n>>> Solution().solve(2)\n4\n"
    problem = parse_problem_text(text, "p", function="solve")
    assert (problem.entry_point, problem.public_tests[0].call) == ("Solution.solve", "Solution().solve(2)")
