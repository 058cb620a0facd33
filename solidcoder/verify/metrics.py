"""Best-of-k with duplicates expanded, and programs per second.

Best-of-k (Orlanski et al.): draw k of the n sampled programs uniformly without replacement, keep the one the
ranker scores highest (ties broken uniformly at random), and ask whether it is correct; report the expectation.
Programs are deduplicated before scoring, each distinct program is scored once, and its outcome is repeated by
its duplicate count before the expectation is taken, so duplicates weigh exactly as much as they were sampled.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from math import comb


@dataclass(frozen=True)
class Scored:
    """One distinct program: its ranking score, whether it is correct, how many times it was sampled."""

    score: float
    correct: bool
    count: int = 1


def best_of_k(programs: list[Scored], k: int) -> float:
    """Expected correctness of the top-scored program among k drawn from the expanded sample."""
    n = sum(p.count for p in programs)
    if k < 1 or k > n:
        raise ValueError(f"k must be between 1 and the number of samples ({n}), got {k}")
    levels: dict[float, list[int]] = defaultdict(lambda: [0, 0])  # score -> [samples, correct samples]
    for p in programs:
        levels[p.score][0] += p.count
        levels[p.score][1] += p.count * p.correct
    total, above = 0.0, 0
    for score in sorted(levels, reverse=True):
        size, correct = levels[score]
        # P(the best level among the k drawn is this one) = P(none above) - P(none above and none here)
        p_top = (comb(n - above, k) - comb(n - above - size, k)) / comb(n, k)
        total += p_top * correct / size
        above += size
    return total


def programs_per_second(programs: int, seconds: float) -> float:
    return programs / seconds if seconds > 0 else float("inf")
