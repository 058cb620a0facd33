"""Tests for reading a float tolerance from a problem statement, and for which tolerance a problem is judged with."""

from __future__ import annotations

import pytest

from solidcoder.matching import DEFAULT_TOLERANCE, problem_tolerance, stated_tolerance


@pytest.mark.parametrize(
    ("statement", "tolerance"),
    [
        ("Your answer is considered correct if its absolute or relative error does not exceed 10^{-4}.", 1e-4),
        ("Answers with absolute or relative error not exceeding $$$10^{-6}$$$ are accepted.", 1e-6),
        ("The answer is accepted if the absolute or relative error does not exceed 10^{ - 9}.", 1e-9),
        ("Print the answer with an absolute error of at most 10^-9.", 1e-9),
        ("Your output is judged correct if its absolute or relative error is at most 10^{\u22125}.", 1e-5),
        ("All numbers should be correct up to $10^{-6}$ relative or absolute precision.", 1e-6),
        ("Print the area within 1e-6.", 1e-6),
        ("An absolute error of 1E-07 is tolerated.", 1e-7),
        ("The checker accepts answers that differ from the jury's by at most 10^(-3).", 1e-3),
        ("Outputs whose error is below 10<sup>-8</sup> are accepted.", 1e-8),
        ("The relative error must not exceed 10\u207b\u2077.", 1e-7),
        ("The absolute error must not exceed 2 \\cdot 10^{-6}.", 2e-6),
        ("Print the probability with an absolute error of at most 0.001.", 1e-3),
        ("10^{-6} absolute error is allowed.", 1e-6),
    ],
)
def test_tolerance_is_read_from_the_statement(statement, tolerance):
    assert stated_tolerance(statement) == pytest.approx(tolerance)


@pytest.mark.parametrize(
    "statement",
    [
        "Print the sum of a and b (1 <= a, b <= 10^9).",
        "The error is in your code if the answer exceeds 10^{18}.",
        "Each p_i satisfies 10^{-3} <= p_i <= 1.\n\nPrint the answer; an error message is printed when it is empty.",
        "Print 0.5 if the coin is fair.",
        "The relative error must stay below 1e6.",
        "",
    ],
)
def test_statements_without_a_tolerance_state_none(statement):
    assert stated_tolerance(statement) is None


def test_the_first_stated_tolerance_wins():
    statement = "Absolute error 10^{-6} is allowed. Formally, |a - b| / max(1, |b|) <= 10^{-9} (relative error)."
    assert stated_tolerance(statement) == pytest.approx(1e-6)


def test_problem_tolerance_prefers_the_problems_own():
    assert problem_tolerance(0.5, "The absolute error must not exceed 10^{-4}.") == 0.5


def test_problem_tolerance_falls_back_to_the_statement():
    assert problem_tolerance(None, "The absolute error must not exceed 10^{-4}.") == pytest.approx(1e-4)


def test_problem_tolerance_defaults_to_1e_6():
    assert problem_tolerance(None, "Print the sum.") == DEFAULT_TOLERANCE == 1e-6


def test_a_zero_tolerance_of_the_problem_is_kept():
    assert problem_tolerance(0.0, "The absolute error must not exceed 10^{-4}.") == 0.0
