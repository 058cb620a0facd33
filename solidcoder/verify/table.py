"""`solidcoder rank`: Best-of-k and programs per second for each pruning filter, with and without the ORM.

The layout follows Table 1 of Orlanski et al.: one row per filter (cumulative: none, then syntax, then lint, then
first-N tests), Best-of-k and PPS for the verifier-only ranking and, when an ORM is given, for the ORM ranking.
Correctness is the strong verifier (hidden tests), computed once per distinct program and reused for every row;
a program pruned by a filter ranks below every survivor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem
from solidcoder.verify.metrics import Scored, best_of_k, programs_per_second
from solidcoder.verify.rank import Scorer, dedupe, normalize, prune_then_rank
from solidcoder.verify.weak import StrongVerifier, Verifier


@dataclass
class TableRow:
    filters: str
    best_of_k: dict[str, float] = field(default_factory=dict)  # ranker name -> mean Best-of-k
    pps: dict[str, float] = field(default_factory=dict)
    survivors: float = 0.0  # share of samples that survived the filters


def read_candidates(path: Path) -> dict[str, list[str]]:
    """Samples per problem from JSONL rows {problem_id, code} (bench result rows with those keys also do)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInput(f"cannot read candidates file {path}: {exc.strerror or exc}") from None
    samples: dict[str, list[str]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pid = row["problem_id"] if "problem_id" in row else row["id"]  # bench results name it `id`
            samples.setdefault(str(pid), []).append(str(row["code"]))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise BadInput(f"{path}:{number}: expected a JSON object with problem_id and code ({exc})") from None
    return samples


def correctness(problem: Problem, programs: list[str], judge: Judge) -> dict[str, bool]:
    distinct = [c.code for c in dedupe(programs)]
    verdicts = StrongVerifier(judge).survivors(problem, distinct)
    return dict(zip(distinct, verdicts, strict=True))


def rank_table(problems: list[Problem], samples: dict[str, list[str]], judge: Judge, filter_chain: list[Verifier],
               rankers: list[Scorer], k: int) -> list[TableRow]:
    """One row per prefix of `filter_chain` (the empty prefix first)."""
    known = [p for p in problems if samples.get(p.id)]
    if not known:
        raise BadInput("no candidate rows match the problems' ids")
    truth = {p.id: correctness(p, samples[p.id], judge) for p in known}
    rows = []
    for depth in range(len(filter_chain) + 1):
        chain = filter_chain[:depth]
        row = TableRow(" + ".join(v.name for v in chain) or "none")
        for ranker in rankers:
            row.best_of_k[ranker.name], row.pps[ranker.name], row.survivors = _evaluate(
                known, samples, truth, chain, ranker, k)
        rows.append(row)
    return rows


def _evaluate(problems, samples, truth, chain, ranker, k) -> tuple[float, float, float]:
    total_best, total_seconds, total_samples, survived = 0.0, 0.0, 0, 0
    for problem in problems:
        programs = samples[problem.id]
        result = prune_then_rank(problem, programs, chain, ranker)
        total_seconds += result.seconds
        total_samples += len(programs)
        survived += sum(c.count for c, _ in result.ranked)
        kept = {normalize(c.code): score for c, score in result.ranked}
        scored = [Scored(kept.get(c.code, float("-inf")), truth[problem.id][c.code], c.count)
                  for c in dedupe(programs)]
        total_best += best_of_k(scored, min(k, len(programs)))
    return total_best / len(problems), programs_per_second(total_samples, total_seconds), survived / total_samples


def format_table(rows: list[TableRow], k: int) -> str:
    rankers = list(rows[0].best_of_k)
    header = ["filters", "kept"] + [f"{name} Best-of-{k}" for name in rankers] + [f"{name} PPS" for name in rankers]
    lines = [" | ".join(header), " | ".join("---" for _ in header)]
    for row in rows:
        cells = [row.filters, f"{row.survivors:.0%}"]
        cells += [f"{100 * row.best_of_k[n]:.1f}" for n in rankers] + [f"{row.pps[n]:.1f}" for n in rankers]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def run_rank(candidates: Path, problems: list[Problem], prune: list[str], orm: str, k: int,
             executor: str = "local") -> str:
    """Load everything, build the filters and rankers, and return the formatted table. `executor` is where the
    verifiers run programs (`--executor local|ray[:ADDRESS]`); PPS then includes its overhead."""
    from solidcoder.execution.executor import make_executor
    from solidcoder.verify.rank import MajorityScorer
    from solidcoder.verify.weak import make_verifier

    samples = read_candidates(candidates)
    with make_executor(executor) as pool:
        judge = Judge(pool)
        chain = [make_verifier(spec, judge) for spec in prune]
        rankers: list[Scorer] = [MajorityScorer(judge)]
        if orm != "none":
            from solidcoder.verify.orm import OrmScorer

            rankers.append(OrmScorer(orm))
        return format_table(rank_table(problems, samples, judge, chain, rankers, k), k)
