"""Prune-then-rank: deduplicate the samples, prune with weak verifiers, score the survivors, rank them.

Rankers (`Scorer`s) score distinct programs. `MajorityScorer` is the verifier-only baseline: programs vote with
their behaviour on the public tests' inputs (identical verdicts and outputs form one vote group, weighted by
duplicate counts), and the duplicate count breaks ties. `AgreementScorer` is CodeT's dual execution agreement on
generated tests. `solidcoder.verify.orm.OrmScorer` is the learned one. Scorers and `prune_then_rank` are async: the
programs run through the judge's one call (`Judge.ajudge`), one after another, and a sandbox failure raises
`SandboxFailure` instead of scoring anything. `reranked` orders a ranking by a second scorer (a selector's).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase
from solidcoder.verify.weak import Verifier, first_tests


@dataclass
class Candidate:
    """A distinct program and how many of the samples were this program."""

    code: str
    count: int = 1


class Scorer(Protocol):
    name: str

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]: ...


def normalize(code: str) -> str:
    """Two samples are duplicates when they differ only in trailing whitespace."""
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def dedupe(programs: list[str]) -> list[Candidate]:
    counts = Counter(normalize(code) for code in programs)
    return [Candidate(code, count) for code, count in counts.items()]


class DuplicateScorer:
    """Ranks by how often a program was sampled (the cheapest possible ranker)."""

    name = "duplicates"

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        return [float(c.count) for c in candidates]


@dataclass
class MajorityScorer:
    """Votes by behaviour on the public tests; the duplicate count breaks ties."""

    judge: Judge
    name: str = "majority"

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        signatures = [await self._signature(problem, c.code) for c in candidates]
        votes: Counter = Counter()
        for signature, candidate in zip(signatures, candidates, strict=True):
            votes[signature] += candidate.count
        total = sum(c.count for c in candidates) + 1
        return [votes[s] + c.count / total for s, c in zip(signatures, candidates, strict=True)]

    async def _signature(self, problem: Problem, code: str) -> tuple:
        report = await self.judge.ajudge(problem, code, problem.public_tests)
        return tuple((v.status, v.actual) for v in report.verdicts)


@dataclass
class AgreementScorer:
    """CodeT's dual execution agreement (Chen et al. 2022): every candidate runs on tests generated from the problem
    (never the hidden ones); candidates passing exactly the same generated tests form a consensus set, scored by how
    many samples it holds times how many tests it passes. Behaviour majority on the public inputs breaks ties (all
    of them, when no candidate passes a generated test)."""

    judge: Judge
    tests: list[TestCase]
    name: str = "agreement"

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        passed = [await self._passed(problem, c.code) for c in candidates]
        sizes: Counter = Counter()
        for tests, candidate in zip(passed, candidates, strict=True):
            sizes[tests] += candidate.count
        majority = await MajorityScorer(self.judge).scores(problem, candidates)
        scale = max(majority, default=0) + 1
        return [sizes[t] * len(t) * scale + m for t, m in zip(passed, majority, strict=True)]

    async def _passed(self, problem: Problem, code: str) -> frozenset[int]:
        report = await self.judge.ajudge(problem, code, self.tests) if self.tests else None
        return frozenset(i for i, v in enumerate(report.verdicts) if v.passed) if report else frozenset()


@dataclass
class GeneratedTestsScorer:
    """`AgreementScorer` across problems: each problem's candidates are ranked on that problem's generated tests
    (`rank --generated-tests`); a problem without any is ranked by behaviour majority alone."""

    judge: Judge
    tests: dict[str, list[TestCase]]
    name: str = "agreement"

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        return await AgreementScorer(self.judge, self.tests.get(problem.id, [])).scores(problem, candidates)


@dataclass
class TestsPassedScorer:
    """The ORM paper's baseline: ranks by how many of the first N suite tests a program passes; the duplicate
    count breaks ties."""

    judge: Judge
    first_n: int = 10
    name: str = "tests-passed"

    async def scores(self, problem: Problem, candidates: list[Candidate]) -> list[float]:
        tests, total = first_tests(problem, self.first_n, suite=True), sum(c.count for c in candidates) + 1
        passed = [(await self.judge.ajudge(problem, c.code, tests)).pass_count if tests else 0 for c in candidates]
        return [n + c.count / total for n, c in zip(passed, candidates, strict=True)]


@dataclass
class RankResult:
    """Survivors in ranked order with their scores, what each filter pruned, and how long it all took."""

    ranked: list[tuple[Candidate, float]] = field(default_factory=list)
    pruned: dict[str, int] = field(default_factory=dict)
    samples: int = 0
    seconds: float = 0.0

    @property
    def best(self) -> Candidate | None:
        return self.ranked[0][0] if self.ranked else None


async def prune_then_rank(problem: Problem, programs: list[str], verifiers: list[Verifier],
                          scorer: Scorer | None = None) -> RankResult:
    """The whole path, timed: dedupe, each verifier in order on the survivors, then score and sort."""
    started = time.perf_counter()
    candidates = dedupe(programs)
    result = RankResult(samples=len(programs))
    for verifier in verifiers:
        keep = await verifier.survivors(problem, [c.code for c in candidates])
        result.pruned[verifier.name] = sum(c.count for c, k in zip(candidates, keep, strict=True) if not k)
        candidates = [c for c, k in zip(candidates, keep, strict=True) if k]
    scores = await (scorer or DuplicateScorer()).scores(problem, candidates) if candidates else []
    result.ranked = sorted(zip(candidates, scores, strict=True), key=lambda pair: -pair[1])
    result.seconds = time.perf_counter() - started
    return result


async def reranked(problem: Problem, ranked: list[Candidate], scorer: Scorer) -> list[Candidate]:
    """`ranked` ordered by `scorer`, best first; among equal scores the order of `ranked` stands."""
    scores = await scorer.scores(problem, ranked)
    return [c for _, c in sorted(zip(scores, ranked, strict=True), key=lambda pair: -pair[0])]
