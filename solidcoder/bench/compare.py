"""Signal or noise: a 95 % interval for each configuration's pass@1, and paired comparisons on the same problems.

* A configuration's interval is Wilson's score interval over its problems (each problem's pass@1 counts as a
  Bernoulli trial; with several samples per problem, their mean), which stays inside [0, 1] and is honest at 40
  problems, where the normal approximation is not.
* Two configurations on the same problems are compared problem by problem: won (only the first passes), lost (only
  the second), tied. The difference in pass@1 gets a paired 95 % interval (the normal approximation to the mean of
  the per-problem differences, kept inside [-1, 1]) and an exact two-sided sign test on the problems that differ:
  the probability, were wins and losses equally likely, of a split at least this uneven. With few differing
  problems the sign test is the figure to read.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, sqrt

Z95 = 1.959964


def wilson(passed: float, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval of a proportion `passed / n` (passed may be fractional: mean pass@1 over samples)."""
    if n == 0:
        return 0.0, 1.0
    p = passed / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test: P(a split at least as uneven as wins:losses | each side has probability 1/2)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(wins, losses) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


@dataclass(frozen=True, kw_only=True)
class Paired:
    """`first` against `second` on the problems both finished."""

    problems: int
    wins: int  # problems where the first's pass@1 is higher
    losses: int
    difference: float  # mean pass@1 difference, first minus second
    low: float  # the paired 95 % interval of the difference
    high: float
    p_sign: float  # exact sign test on the problems that differ

    def line(self) -> str:
        """'+5.0 points [-2.3, +12.3] (paired 95 %), won 4, lost 2 of 40, sign test p = 0.69'."""
        return (f"{self.difference * 100:+.1f} points [{self.low * 100:+.1f}, {self.high * 100:+.1f}] (paired 95 %), "
                f"won {self.wins}, lost {self.losses} of {self.problems}, sign test p = {self.p_sign:.2g}")


def paired(first: dict[str, float], second: dict[str, float]) -> Paired:
    """Compare two configurations' per-problem pass@1 (problem id -> value) on the problems both have."""
    common = sorted(first.keys() & second.keys())
    diffs = [first[i] - second[i] for i in common]
    n = len(diffs)
    mean = sum(diffs) / n if n else 0.0
    spread = sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else 0.0
    half = Z95 * spread / sqrt(n) if n else 0.0
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    return Paired(problems=n, wins=wins, losses=losses, difference=mean, low=max(-1.0, mean - half),
                  high=min(1.0, mean + half), p_sign=sign_test(wins, losses))
