"""Best-of-k against hand-computed values, duplicates included."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solidcoder.verify.metrics import Scored, best_of_k


def brute_force(programs: list[Scored], k: int) -> float:
    """Enumerate every k-subset of the expanded sample; ties split evenly among the tied top programs."""
    expanded = [(p.score, p.correct) for p in programs for _ in range(p.count)]
    total, subsets = 0.0, 0
    for subset in combinations(range(len(expanded)), k):
        top = max(expanded[i][0] for i in subset)
        tied = [expanded[i][1] for i in subset if expanded[i][0] == top]
        total += sum(tied) / len(tied)
        subsets += 1
    return total / subsets


def test_best_of_1_is_the_plain_pass_rate():
    programs = [Scored(0.9, True), Scored(0.5, False, count=3)]
    assert best_of_k(programs, 1) == pytest.approx(1 / 4)


def test_hand_computed_with_duplicates():
    # 4 samples: A (score 3, wrong) x1, B (score 2, right) x2, C (score 1, wrong) x1. k = 2: C(4,2) = 6 pairs.
    # A is drawn in 3 pairs (wrong); the 3 pairs without A all contain a B (right): 3/6 = 0.5.
    programs = [Scored(3, False), Scored(2, True, count=2), Scored(1, False)]
    assert best_of_k(programs, 2) == pytest.approx(0.5)
    # k = 3: 4 triples, 3 contain A: 1/4.
    assert best_of_k(programs, 3) == pytest.approx(0.25)


def test_ties_split_evenly():
    programs = [Scored(1.0, True), Scored(1.0, False)]
    assert best_of_k(programs, 2) == pytest.approx(0.5)


def test_k_out_of_range():
    with pytest.raises(ValueError):
        best_of_k([Scored(1.0, True)], 2)


@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.integers(1, 3)), min_size=1, max_size=4),
       st.integers(1, 6))
def test_matches_brute_force(rows, k):
    programs = [Scored(float(s), c, n) for s, c, n in rows]
    k = min(k, sum(p.count for p in programs))
    assert best_of_k(programs, k) == pytest.approx(brute_force(programs, k))
