"""The typed result row (store.py: `ResultRow`) against the runs on record: every committed row loads and is written
back as the same JSON, and `solidcoder report` on two committed run directories still states the figures their
READMEs quote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from solidcoder.store import ERRORS, RESULTS, Notes, OracleRounds, ResultRow, Route, TierCost, read_rows

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "benchmarks" / "results"
LOGS = sorted([*RECORDED.rglob(RESULTS), *RECORDED.rglob(ERRORS)])


def test_every_committed_run_directory_has_rows_to_read():
    rows = sum(len(read_rows(path)) for path in LOGS)
    assert len({path.parent for path in LOGS}) >= 19 and rows > 1500


@pytest.mark.parametrize("path", LOGS, ids=lambda path: str(path.relative_to(RECORDED)))
def test_a_committed_row_reads_as_a_result_row_and_writes_back_unchanged(path):
    for number, row in enumerate(read_rows(path), 1):
        typed = ResultRow.from_dict(row)
        assert typed.to_dict() == row, f"{path}:{number}"
        assert ResultRow.from_dict(typed.to_dict()) == typed


def test_the_typed_records_of_a_routed_row_are_fields():
    row = next(ResultRow.from_dict(r) for r in read_rows(RECORDED / "mbpp_report40_qwen05b" / RESULTS)
               if r["strategy"] == "solidcoder-routed")
    assert isinstance(row.notes, Notes) and isinstance(row.notes.route, Route)
    assert isinstance(row.notes.oracle, OracleRounds) and all(isinstance(t, TierCost) for t in row.notes.route.tiers)
    assert row.notes.route.tier == row.notes.route.tiers[-1].tier


def test_an_old_row_keeps_its_stages_object_and_names_its_stages():
    """Rows from before 2026-12-03 wrote `notes.stages` as stage -> [calls, prompt, completion tokens]."""
    row = next(r for r in read_rows(RECORDED / "humaneval10_disagreements_qwen05b" / RESULTS)
               if isinstance(r["notes"].get("stages"), dict))
    notes = ResultRow.from_dict(row).notes
    assert notes.stages == tuple(row["notes"]["stages"]) and "oracle" in notes.stages
    assert notes.to_dict()["stages"] == row["notes"]["stages"]


def report(run_dir: Path) -> str:
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "solidcoder", "report", str(run_dir)], capture_output=True,
                          text=True, env=env, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())  # rich folds long lines at the width


# (what the README says, what `solidcoder report` prints): each pair is one figure, quoted from both
MBPP_REPORT = [
    ("45.0 % (18/40) [30.7, 60.2]", "direct (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 45.0 % [30.7, 60.2]"),
    ("55.0 % (22/40) [39.8, 69.3]", "solidcoder-routed (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 55.0 % "
                                    "[39.8, 69.3]"),
    ("+10.0 points [+0.6, +19.4] (paired 95 %), won 4", "+10.0 points [+0.6, +19.4] (paired 95 %), won 4, lost 0 "
                                                        "of 40"),
    ("tier 0: 22 (19 pass); tier 1: 18 (3 pass)", "ended in tier 0: 22 (19 pass), tier 1: 18 (3 pass)"),
    ("Tokens per problem spent in tier 0: 196, in tier 1: 309", "tokens per problem spent in tier 0: 196, tier 1: 309"),
    ("| 1.45 | 142 + 363 = 505 |", "│ 1.45 │ 142 │ 363 │"),
    ("| 1.00 | 98 + 92 = 190 |", "│ 1.00 │ 98 │ 92 │"),
]
PEERS_REPORT = [
    ("Direct 30/40 (75.0 % [59.8, 85.8])", "direct (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 75.0 % "
                                           "[59.8, 85.8]"),
    ("routed v2 33/40** (82.5 % [68.1, 91.3]), 1.25 calls",
     "solidcoder-routed (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 82.5 % [68.1, 91.3]"),
    ("+7.5 points [-3.3, +18.3], won 4", "+7.5 points [-3.3, +18.3] (paired 95 %), won 4, lost 1 of 40, sign test p = "
                                         "0.38"),
    ("Tier 0 accepted 30, all passing; tier 1 ran on 10 and solved 3", "ended in tier 0: 30 (30 pass), tier 1: 10 "
                                                                       "(3 pass)"),
    ("LDB on all 40: 31/40**, 4.40 calls", "ldb (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 77.5 %"),
    ("+2.5 points [-8.6, +13.6], won 3", "+2.5 points [-8.6, +13.6] (paired 95 %), won 3, lost 2 of 40"),
    ("AlphaCodium on all 40: 30/40**", "alphacodium (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): pass@1 75.0 %"),
    ("+0.0 points [-15.7, +15.7], p = 1), at 10.22 calls", "+0.0 points [-15.7, +15.7] (paired 95 %), won 5, lost 5"),
    ("routed v2 33/40** (82.5 % [68.1, 91.3]), 1.25 calls, 639 tokens", "│ 1.25 │ 204 │ 435 │"),  # 204 + 435 = 639
    ("4.40 calls, 4,686 tokens", "│ 4.40 │ 3495 │ 1191 │"),  # 3495 + 1191 = 4,686
    ("10.22 calls and 10,586 tokens", "│ 10.22 │ 7209 │ 3377 │"),  # 7209 + 3377 = 10,586
]


STDIO_REPORT = [
    ("| 20 | 0.0 % [0.0, 16.1] | 8.3% | fail 10, compile_error 7, error 3 |",
     "codecontests direct [cpp] (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): answers passed 8.3% of their hidden tests "
     "on average; answers by ending: fail 10, compile_error 7, error 3"),
    ("| 49 | 0.0 % [0.0, 7.3] | 10.0% | fail 29, compile_error 17, error 3 |",
     "apps direct [cpp] (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): answers passed 10.0% of their hidden tests on "
     "average; answers by ending: fail 29, compile_error 17, error 3"),
    ("| 49 | 0.0 % [0.0, 7.3] | 9.2% | fail 32, error 17 |",
     "apps direct [python] (qwen2.5-coder-0.5b-instruct-q4_k_m.gguf): answers passed 9.2% of their hidden tests on "
     "average; answers by ending: fail 32, error 17"),
]


@pytest.mark.parametrize(("run", "figures"), [("mbpp_report40_qwen05b", MBPP_REPORT),
                                              ("humaneval_dev40_qwen05b_peers", PEERS_REPORT),
                                              ("stdio_qwen05b", STDIO_REPORT)])
def test_the_report_of_a_committed_run_states_the_figures_its_readme_quotes(run, figures):
    readme = " ".join((RECORDED / run / "README.md").read_text(encoding="utf-8").split())
    printed = report(RECORDED / run)
    for quoted, shown in figures:
        assert quoted in readme, quoted
        assert shown in printed, shown
