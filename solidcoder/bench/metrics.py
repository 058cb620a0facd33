"""Scores from result rows: pass@1 on hidden tests, unbiased pass@k, and cost per problem.

pass@k is the unbiased estimator of Chen et al. (2021): with n samples of which c pass, 1 - C(n-c, k) / C(n, k),
averaged over problems. A problem's rows count only when they are in results.jsonl; infrastructure errors are
counted apart (those keys never reached a verdict) and excluded from every score.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from math import comb

from solidcoder.languages import tagged
from solidcoder.store import ResultRow

GROUP = ("dataset", "strategy", "model", "config_hash", "run")  # run: set by `report` where two directories share a
# configuration (the same command run twice); otherwise empty


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) passes."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass
class Summary:
    """One configuration's scores over the problems it finished."""

    dataset: str
    strategy: str
    model: str
    config_hash: str
    run: str = ""
    problems: int = 0
    samples: int = 0
    pass_at: dict[int, float] = field(default_factory=dict)
    infra_errors: int = 0
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    model_s: float = 0.0  # seconds the model spent per problem (rows' `model_s`; 0 in rows that lack it)
    label: str = ""
    language: str = "python"  # the programs' (rows' `language`; rows before 2026-12-06 are Python)
    kept_tests: int = 0  # tests the strategy kept on answers the hidden tests accept (oracle precision) ...
    false_alarms: int = 0  # ... and how many of them reject those answers
    tiers: dict[int, int] = field(default_factory=dict)  # solidcoder-routed: problems that ended in each tier,
    tiers_passed: dict[int, int] = field(default_factory=dict)  # ... those of them the hidden tests accept,
    tier_tokens: dict[int, float] = field(default_factory=dict)  # ... and tokens per problem each tier spent
    oracle_rounds: dict[str, int] = field(default_factory=dict)  # outcome -> rounds (the notes' `oracle`)
    # template -> tokens per problem (rows' `template_usage`; rows before 2026-12-03 have `stage_usage`, keyed by the
    # template name's last part)
    template_tokens: dict[str, float] = field(default_factory=dict)
    per_problem: dict[str, float] = field(default_factory=dict)  # problem id -> pass@1 (the mean over its samples)
    # problem id -> {alternative: passed} (rows' `alternatives_passed`: best-of-n's pick among its first k samples)
    alternatives: dict[str, dict[str, bool]] = field(default_factory=dict)
    tests_share: float | None = None  # the mean share of its hidden tests an answer passed (None: no counts)
    endings: dict[str, int] = field(default_factory=dict)  # "pass" or the first failing test's verdict -> answers

    @property
    def pass1(self) -> float:
        return self.pass_at.get(1, 0.0)

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens

    @property
    def name(self) -> str:
        """The label or strategy, and the programs' language when it is not Python (`direct [cpp]`)."""
        return tagged(self.label or self.strategy, self.language)


def _group(row: ResultRow) -> tuple:
    return tuple(getattr(row, k) for k in GROUP)


def summarize(results: list[ResultRow], errors: list[ResultRow]) -> list[Summary]:
    """One Summary per (dataset, strategy, model, config) found in the rows, in first-seen order."""
    by_group: dict[tuple, list[ResultRow]] = defaultdict(list)
    for row in _unique(results):
        by_group[_group(row)].append(row)
    done = {_key(row) for row in results}
    failed: dict[tuple, set] = defaultdict(set)
    for row in errors:
        if _key(row) not in done:
            failed[_group(row)].add(_key(row))
    groups = list(dict.fromkeys([*by_group, *failed]))
    return [_summary(g, by_group.get(g, []), len(failed.get(g, ()))) for g in groups]


def _key(row: ResultRow) -> tuple[str, str]:
    return row.run, row.key


def _unique(rows: list[ResultRow]) -> list[ResultRow]:
    seen: set[tuple[str, str]] = set()
    out = []
    for row in rows:
        if _key(row) not in seen:
            seen.add(_key(row))
            out.append(row)
    return out


def _summary(group: tuple, rows: list[ResultRow], infra: int) -> Summary:
    summary = Summary(*group, infra_errors=infra)
    per_problem: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        per_problem[row.id].append(bool(row.passed))
    summary.problems = len(per_problem)
    summary.per_problem = {pid: sum(v) / len(v) for pid, v in per_problem.items()}
    if not rows:
        return summary
    summary.language = rows[0].language or "python"
    _count_endings(summary, rows)
    n = min(len(v) for v in per_problem.values())
    summary.samples = n
    for k in sorted({1, n} | {k for k in (5, 10, 100) if k <= n}):
        summary.pass_at[k] = sum(pass_at_k(len(v), sum(v), k) for v in per_problem.values()) / len(per_problem)
    for name in ("calls", "prompt_tokens", "completion_tokens", "wall_s", "model_s"):
        setattr(summary, name, sum(getattr(row, name) for row in rows) / len(per_problem))
    summary.cost_usd = sum(row.cost_usd for row in rows)
    summary.alternatives = {row.id: dict(row.alternatives_passed) for row in rows if row.alternatives_passed}
    judged = [row for row in rows if row.false_alarms is not None]
    summary.kept_tests = sum(row.kept_tests or 0 for row in judged)
    summary.false_alarms = sum(row.false_alarms or 0 for row in judged)
    for row in rows:
        _count_tiers(summary, row, len(per_problem))
        _count_rounds(summary, row)
        for template, (_, prompt, completion) in row.usage.items():
            tokens = summary.template_tokens.get(template, 0)
            summary.template_tokens[template] = tokens + (prompt + completion) / len(per_problem)
    return summary


def _count_rounds(summary: Summary, row: ResultRow) -> None:
    """Algorithm 1's oracle rounds, by outcome."""
    oracle = row.notes.oracle if row.notes else None
    for outcome in oracle.outcomes if oracle else ():
        summary.oracle_rounds[outcome] = summary.oracle_rounds.get(outcome, 0) + 1


def _count_endings(summary: Summary, rows: list[ResultRow]) -> None:
    """How the answers did on the hidden tests: the mean share passed, and each answer's ending (rows before
    2026-12-06 have no `first_status`: only the share is counted for them)."""
    counted = [row.tests_passed / row.tests_total for row in rows if row.tests_total and row.tests_passed is not None]
    summary.tests_share = sum(counted) / len(counted) if counted else None
    for row in rows:
        ending = "pass" if row.passed else row.first_status
        if ending:
            summary.endings[ending] = summary.endings.get(ending, 0) + 1


def _count_tiers(summary: Summary, row: ResultRow, problems: int) -> None:
    """Routing's record: the tier the problem ended in (and whether it passed), and the tokens each tier spent."""
    route = row.notes.route if row.notes else None
    if route is None:
        return
    if route.tier is not None:
        summary.tiers[route.tier] = summary.tiers.get(route.tier, 0) + 1
        summary.tiers_passed[route.tier] = summary.tiers_passed.get(route.tier, 0) + bool(row.passed)
    for spent in route.tiers:
        summary.tier_tokens[spent.tier] = summary.tier_tokens.get(spent.tier, 0) + spent.tokens / problems
