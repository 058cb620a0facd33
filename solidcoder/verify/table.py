"""`solidcoder rank`: Best-of-k and programs per second for each pruning filter, with and without the ORM.

The layout follows Table 1 of Orlanski et al.: one row per filter set, Best-of-k and PPS for the verifier-only
ranking and, when an ORM is given, for the ORM ranking. Correctness is the strong verifier (hidden tests),
computed once per distinct program and reused for every row; a program pruned by a filter ranks below every
survivor. `--preset default` (the project's): cumulative rows (none, then syntax, then + lint, then + first 3 public
tests), the behaviour-majority ranker, one sequential timing pass. `--preset paper` (`RANK_PRESETS`): rows none,
each filter alone, and V_all (every filter); the first N tests of the whole suite; the paper's baseline ranker
(tests passed, duplicates breaking ties); problems verified in parallel and PPS averaged over 5 passes.
Pruning and ranking are `prune_then_rank`'s, the path `solve --prerank` and routing's tier 1 take too
(`strategies/selection.py`); the table is computed in one event loop (`run_rank`), problems side by side with
`parallel`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase
from solidcoder.requirements import check_installed
from solidcoder.store import ResultRow
from solidcoder.verify.metrics import Scored, best_of_k, programs_per_second
from solidcoder.verify.rank import Scorer, dedupe, normalize, prune_then_rank
from solidcoder.verify.weak import StrongVerifier, Verifier, filter_requirements


@dataclass(frozen=True)
class RankSettings:
    """What `rank --preset` chooses: the filters, how rows combine them, the baseline ranker, how PPS is timed."""

    prune: tuple[str, ...] = ("syntax", "lint", "tests:3")
    rows: str = "cumulative"  # or "each": none, every filter alone, then V_all
    ranker: str = "majority"  # or "tests-passed" (first N suite tests, duplicates breaking ties)
    repeats: int = 1  # timing passes averaged into PPS
    parallel: int = 1  # problems verified at once


RANK_PRESETS = {
    "default": RankSettings(),
    "paper": RankSettings(prune=("syntax", "lint", "suite:10"), rows="each", ranker="tests-passed", repeats=5,
                          parallel=4),
}


def rank_preset(name: str, prune: list[str] | None = None) -> RankSettings:
    """A named preset, its filters replaced by `prune` when given; BadInput for an unknown name."""
    if name not in RANK_PRESETS:
        raise BadInput(f"unknown --preset {name!r}; choose one of: {', '.join(RANK_PRESETS)}")
    settings = replace(RANK_PRESETS[name], prune=tuple(prune)) if prune else RANK_PRESETS[name]
    check_installed(filter_requirements(settings.prune), "--prune")  # before the candidates are read
    return settings


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
            pid, code = _sample(json.loads(line))
            samples.setdefault(str(pid), []).append(str(code))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise BadInput(f"{path}:{number}: expected a JSON object with problem_id and code ({exc})") from None
    return samples


def _sample(row: dict) -> tuple[str, str]:
    """(problem id, code) of a candidate row, or of a bench result row (store.py: `ResultRow`; the problem is its
    `id`)."""
    if "problem_id" in row:
        return row["problem_id"], row["code"]
    result = ResultRow.from_dict(row)
    if not result.id or result.code is None:
        raise KeyError("code" if result.id else "id")
    return result.id, result.code


async def correctness(problem: Problem, programs: list[str], judge: Judge) -> dict[str, bool]:
    distinct = [c.code for c in dedupe(programs)]
    verdicts = await StrongVerifier(judge).survivors(problem, distinct)
    return dict(zip(distinct, verdicts, strict=True))


def filter_sets(filters: list[Verifier], rows: str = "cumulative") -> list[tuple[str, list[Verifier]]]:
    """(label, filters) per row: every prefix of the chain (cumulative), or none, each alone, then V_all (each)."""
    if rows == "each":
        return [("none", []), *((f.name, [f]) for f in filters), ("V_all", list(filters))]
    return [(" + ".join(f.name for f in filters[:n]) or "none", filters[:n]) for n in range(len(filters) + 1)]


async def rank_table(problems: list[Problem], samples: dict[str, list[str]], judge: Judge,
                     filter_chain: list[Verifier], rankers: list[Scorer], k: int,
                     settings: RankSettings | None = None) -> list[TableRow]:
    """One row per filter set of `settings.rows` (the empty set first)."""
    settings = settings or RankSettings()
    known = [p for p in problems if samples.get(p.id)]
    if not known:
        raise BadInput("no candidate rows match the problems' ids")
    truth = {p.id: await correctness(p, samples[p.id], judge) for p in known}
    rows = []
    for label, chain in filter_sets(filter_chain, settings.rows):
        row = TableRow(label)
        for ranker in rankers:
            row.best_of_k[ranker.name], row.pps[ranker.name], row.survivors = await _evaluate(
                known, samples, truth, chain, ranker, k, settings)
        rows.append(row)
    return rows


async def _evaluate(problems, samples, truth, chain, ranker, k, settings: RankSettings) -> tuple[float, float, float]:
    """Mean Best-of-k, PPS (averaged over `settings.repeats` timed passes) and the share of samples kept."""
    pps, total = [], sum(len(samples[p.id]) for p in problems)
    for _ in range(settings.repeats):
        results, seconds = await _timed_pass(problems, samples, chain, ranker, settings.parallel)
        pps.append(programs_per_second(total, seconds))
    total_best, survived = 0.0, 0
    for problem, result in zip(problems, results, strict=True):
        survived += sum(c.count for c, _ in result.ranked)
        kept = {normalize(c.code): score for c, score in result.ranked}
        scored = [Scored(kept.get(c.code, float("-inf")), truth[problem.id][c.code], c.count)
                  for c in dedupe(samples[problem.id])]
        total_best += best_of_k(scored, min(k, len(samples[problem.id])))
    return total_best / len(problems), sum(pps) / len(pps), survived / total


async def _timed_pass(problems, samples, chain, ranker, parallel: int) -> tuple[list, float]:
    """Every problem pruned and ranked, `parallel` at once; the pass's seconds (sequential: the sum of each
    problem's own time, so setup outside prune-then-rank is not counted)."""
    if parallel <= 1:
        results = [await prune_then_rank(p, samples[p.id], chain, ranker) for p in problems]
        return results, sum(r.seconds for r in results)
    started, slots = time.perf_counter(), asyncio.Semaphore(parallel)

    async def ranked(problem: Problem):
        async with slots:
            return await prune_then_rank(problem, samples[problem.id], chain, ranker)

    results = list(await asyncio.gather(*(ranked(p) for p in problems)))
    return results, time.perf_counter() - started


def format_table(rows: list[TableRow], k: int) -> str:
    rankers = list(rows[0].best_of_k)
    header = ["filters", "kept"] + [f"{name} Best-of-{k}" for name in rankers] + [f"{name} PPS" for name in rankers]
    lines = [" | ".join(header), " | ".join("---" for _ in header)]
    for row in rows:
        cells = [row.filters, f"{row.survivors:.0%}"]
        cells += [f"{100 * row.best_of_k[n]:.1f}" for n in rankers] + [f"{row.pps[n]:.1f}" for n in rankers]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def read_generated_tests(path: Path) -> dict[str, list[TestCase]]:
    """Tests per problem from JSONL rows {problem_id, tests: [test case, ...]} (`docs/problem-schema.md`'s tests),
    written from the problem alone, never the hidden tests; BadInput names the line that is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BadInput(f"cannot read generated tests file {path}: {exc.strerror or exc}") from None
    tests: dict[str, list[TestCase]] = {}
    for number, line in enumerate(lines, 1):
        if line.strip():
            problem_id, cases = _generated_row(line, f"{path}:{number}")
            tests.setdefault(problem_id, []).extend(cases)
    return tests


def _generated_row(line: str, where: str) -> tuple[str, list[TestCase]]:
    try:
        row = json.loads(line)
        tests = [TestCase.from_dict(t, "call" if "call" in t else "stdio") for t in row["tests"]]
        return str(row["problem_id"]), tests
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise BadInput(f"{where}: expected a JSON object with problem_id and a list of tests ({exc})") from None


def run_rank(candidates: Path, problems: list[Problem], settings: RankSettings, orm: str, k: int,
             executor: str = "local", generated_tests: Path | None = None, data_file: Path | None = None) -> str:
    """Load everything, build the filters and rankers, and return the formatted table. `executor` is where the
    verifiers run programs (`--executor local|ray[:ADDRESS]`); PPS then includes its overhead. `generated_tests`
    adds CodeT's agreement selector on those tests. `data_file`, the dataset's file, is hidden from every run."""
    from solidcoder.execution.executor import make_executor
    from solidcoder.verify.rank import GeneratedTestsScorer
    from solidcoder.verify.weak import make_verifier

    samples = read_candidates(candidates)
    tests = read_generated_tests(generated_tests) if generated_tests is not None else None
    from solidcoder.execution.sandbox import SandboxConfig

    hidden = tuple(str(p) for p in (data_file, generated_tests) if p is not None)
    with make_executor(executor, SandboxConfig(hidden_paths=hidden)) as pool:
        judge = Judge(pool)
        chain = [make_verifier(spec, judge) for spec in settings.prune]
        rankers: list[Scorer] = [baseline_ranker(settings, judge)]
        if tests is not None:
            rankers.append(GeneratedTestsScorer(judge, tests))
        if orm != "none":
            from solidcoder.verify.orm import OrmScorer

            rankers.append(OrmScorer(orm))
        return format_table(asyncio.run(rank_table(problems, samples, judge, chain, rankers, k, settings)), k)


def baseline_ranker(settings: RankSettings, judge: Judge) -> Scorer:
    """The verifier-only ranker of the preset: behaviour majority, or tests passed of the suite filter's N."""
    from solidcoder.verify.rank import MajorityScorer, TestsPassedScorer

    if settings.ranker == "majority":
        return MajorityScorer(judge)
    counts = [int(spec.partition(":")[2]) for spec in settings.prune if spec.startswith("suite:")]
    return TestsPassedScorer(judge, counts[0] if counts else 10)
