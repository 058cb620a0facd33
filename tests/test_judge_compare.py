"""The judge compares stdout the way the problem asks: tokens or lines, and the tolerance its statement states."""

from __future__ import annotations

import pytest

from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase

ONE_PER_LINE = "print(1)\nprint(2)\nprint(3)\n"


@pytest.fixture(scope="module")
def judge(sandbox_pool):
    return Judge(sandbox_pool)


def stdio(expected: str, statement: str = "", **fields) -> Problem:
    tests = [TestCase(kind="stdio", stdin="", expected_stdout=expected)]
    return Problem(id="p", kind="stdio", statement=statement, public_tests=tests, **fields)


def test_judge_compares_tokens_across_lines_by_default(judge):
    assert judge.judge(stdio("1 2 3\n"), ONE_PER_LINE).passed


def test_judge_compares_lines_when_the_problem_asks(judge):
    assert not judge.judge(stdio("1 2 3\n", output_match="lines"), ONE_PER_LINE).passed


def test_judge_names_the_first_wrong_token(judge):
    report = judge.judge(stdio("1 2 4\n"), ONE_PER_LINE)
    assert report.verdicts[0].detail == "token 3 (line 3): expected '4', got '3'"


def test_judge_takes_the_tolerance_from_the_statement(judge):
    problem = stdio("0.3333\n", "Print 1/3. Answers with an absolute or relative error up to 10^{-4} are accepted.")
    assert judge.judge(problem, "print(1 / 3)").passed


def test_judge_keeps_the_default_tolerance_without_a_stated_one(judge):
    assert not judge.judge(stdio("0.3333\n", "Print 1/3."), "print(1 / 3)").passed


def test_judge_uses_the_problems_own_tolerance(judge):
    assert judge.judge(stdio("0.3\n", "Print 1/3.", float_tolerance=0.1), "print(1 / 3)").passed


def test_judge_refuses_a_float_for_an_integer_answer(judge):
    problem = stdio("999999937\n", "Print the prime. The relative error must not exceed 10^{-6}.")
    assert not judge.judge(problem, "print(1e9)").passed
