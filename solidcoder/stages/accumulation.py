"""Defensive accumulation: the growing test suite, and the monotonic rule every fix must obey.

The suite starts as the public tests. Each generated test a candidate failed is kept (with `defensive` on), so
every later candidate and fix is run against all of them at once. A fix is accepted only when it keeps every test
the current candidate passed and passes at least one more; a fix that breaks an earlier test is rejected, so the
candidate's passing set only ever grows.
"""

from __future__ import annotations

from dataclasses import dataclass

from solidcoder.problem import TestCase
from solidcoder.stages.live import Evaluation, GeneratedTest, SuiteTest


class TestSuite:
    """Public tests plus accumulated generated ones."""

    __test__ = False  # keeps pytest from collecting this class

    def __init__(self, public: list[TestCase], defensive: bool = True):
        self.defensive = defensive
        self.tests = [SuiteTest(f"public-{i}", t) for i, t in enumerate(public)]
        self.accumulated: list[SuiteTest] = []
        self._made = 0

    def wrap(self, test: GeneratedTest) -> SuiteTest:
        """Give a generated test its id (without keeping it)."""
        self._made += 1
        return SuiteTest(f"generated-{self._made}", test)

    def keep(self, test: SuiteTest) -> bool:
        """Accumulate a failing generated test; False (not kept) when defensive accumulation is off."""
        if not self.defensive:
            return False
        self.tests.append(test)
        self.accumulated.append(test)
        return True

    def with_extra(self, extra: SuiteTest | None) -> list[SuiteTest]:
        """The tests a fix must pass: the suite, plus the round's failing test when it was not kept."""
        if extra is None or extra in self.tests:
            return list(self.tests)
        return [*self.tests, extra]


@dataclass(frozen=True)
class FixDecision:
    accepted: bool
    reason: str
    regressed: tuple[str, ...] = ()


def decide_fix(current: Evaluation, fix: Evaluation, require_progress: bool = True) -> FixDecision:
    """Accept a fix only if it regresses nothing the current candidate passed and (by default) passes more.

    `require_progress=False` is for a failure no execution can confirm (`--no-live`): then not regressing is all
    that can be checked.
    """
    regressed = tuple(sorted(current.passed_ids - fix.passed_ids))
    if regressed:
        return FixDecision(False, f"regression: the fix breaks {', '.join(regressed)}", regressed)
    progress = fix.passed_ids > current.passed_ids or (fix.green and not current.green)
    if require_progress and not progress:
        return FixDecision(False, f"no progress: {fix.summary()}")
    return FixDecision(True, f"progress: {fix.summary()}")
