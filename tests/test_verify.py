"""Weak verifiers on known-good and known-bad programs, and the prune-then-rank path (real sandbox, real ruff). The
verifiers, scorers and the path are async; each check here runs one to its end (`asyncio.run`)."""

from __future__ import annotations

import asyncio

import pytest

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase
from solidcoder.verify.rank import MajorityScorer, dedupe, prune_then_rank
from solidcoder.verify.weak import LintVerifier, StrongVerifier, SyntaxVerifier, TestsVerifier, make_verifier

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
SLOW = "def add(a, b):\n    while True:\n        pass\n"
BAD_SYNTAX = "def add(a, b)\n    return a + b\n"
UNDEFINED_NAME = "def add(a, b):\n    return a + c\n"
STYLE_ONLY = "import os\ndef add(a,b):\n    return a+b\n"


@pytest.fixture
def problem() -> Problem:
    public = [TestCase(kind="call", call=f"add({i}, 2)", expected=i + 2) for i in range(3)]
    hidden = public + [TestCase(kind="call", call="add(-5, 5)", expected=0)]
    return Problem(id="add", kind="call", statement="", entry_point="add", public_tests=public,
                   hidden_tests=hidden, time_limit_s=2.0)


def test_syntax_verifier(problem):
    assert asyncio.run(SyntaxVerifier().survivors(problem, [GOOD, BAD_SYNTAX, UNDEFINED_NAME])) == [True, False, True]


def test_ruff_lint_verifier_prunes_errors_not_style(problem):
    programs = [GOOD, BAD_SYNTAX, UNDEFINED_NAME, STYLE_ONLY]
    assert asyncio.run(LintVerifier("ruff").survivors(problem, programs)) == [True, False, False, True]


def test_unknown_linter_is_bad_input():
    with pytest.raises(BadInput):
        LintVerifier("flake9")


def test_tests_verifier_keeps_timeouts(problem, sandbox_pool):
    verifier = TestsVerifier(Judge(sandbox_pool), first_n=2, time_limit_s=0.3)
    assert asyncio.run(verifier.survivors(problem, [GOOD, WRONG, SLOW, BAD_SYNTAX])) == [True, False, True, False]


def test_strong_verifier_uses_hidden_tests(problem, sandbox_pool):
    only_public = "def add(a, b):\n    return a + b if a >= 0 else 1\n"
    assert asyncio.run(StrongVerifier(Judge(sandbox_pool)).survivors(problem, [GOOD, only_public])) == [True, False]


def test_make_verifier_specs(sandbox_pool):
    judge = Judge(sandbox_pool)
    assert [make_verifier(s, judge).name for s in ("syntax", "lint", "lint:pylint", "tests:5")] == [
        "syntax", "lint:ruff", "lint:pylint", "tests:5"]
    with pytest.raises(BadInput):
        make_verifier("tests:x", judge)


def test_dedupe_counts_whitespace_variants_once():
    candidates = dedupe([GOOD, GOOD + "\n\n", GOOD.replace("b\n", "b   \n"), WRONG])
    assert sorted(c.count for c in candidates) == [1, 3]


def test_prune_then_rank_majority_picks_the_common_behaviour(problem, sandbox_pool):
    judge = Judge(sandbox_pool)
    samples = [GOOD, GOOD, "def add(a, b):\n    return b + a\n", WRONG, WRONG, WRONG, BAD_SYNTAX, SLOW]
    result = asyncio.run(prune_then_rank(problem, samples, [SyntaxVerifier(), TestsVerifier(judge, 1, 0.3)],
                                         MajorityScorer(judge)))
    assert result.pruned == {"syntax": 1, "tests:1": 3}
    assert result.best.code.strip() == GOOD.strip()  # 3 votes for the right behaviour beat the single timeout
    assert result.samples == 8 and result.seconds > 0


def test_rank_table_rows_and_values(problem, sandbox_pool):
    from solidcoder.verify.rank import DuplicateScorer
    from solidcoder.verify.table import format_table, rank_table

    samples = {"add": [GOOD, GOOD, WRONG, BAD_SYNTAX]}
    chain = [SyntaxVerifier(), LintVerifier()]
    for k, expected in ((1, 0.5), (4, 1.0)):
        rows = asyncio.run(rank_table([problem], samples, Judge(sandbox_pool), chain, [DuplicateScorer()], k))
        assert [r.filters for r in rows] == ["none", "syntax", "syntax + lint:ruff"]
        assert [r.survivors for r in rows] == [1.0, 0.75, 0.75]
        assert [r.best_of_k["duplicates"] for r in rows] == [pytest.approx(expected)] * 3
    assert "duplicates Best-of-4" in format_table(rows, 4).splitlines()[0]


def test_rank_command_end_to_end(tmp_path, humaneval_file):
    import json
    import subprocess
    import sys

    rows = [json.loads(line) for line in humaneval_file.read_text().splitlines()]
    candidates = tmp_path / "candidates.jsonl"
    with candidates.open("w") as out:
        for row in rows[:2]:
            good = row["prompt"] + row["canonical_solution"]
            for code in (good, good, row["prompt"] + "    return None\n", row["prompt"] + "    return (\n"):
                out.write(json.dumps({"problem_id": row["task_id"], "code": code}) + "\n")
    done = subprocess.run([sys.executable, "-m", "solidcoder", "rank", str(candidates), "--dataset", "humaneval",
                           "--data-file", str(humaneval_file), "--k", "4",
                           "--prune", "syntax", "--prune", "tests:2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("filters | kept | majority Best-of-4") and len(lines) == 5
    assert lines[2].split(" | ")[:3] == ["none", "100%", "100.0"]
    assert lines[3].split(" | ")[1] == "75%"


def test_rank_with_generated_tests_adds_codets_agreement_beside_the_majority(tmp_path, humaneval_file):
    import json
    import subprocess
    import sys

    row = json.loads(humaneval_file.read_text().splitlines()[0])  # HumanEval/0, has_close_elements
    good, wrong = row["prompt"] + row["canonical_solution"], row["prompt"] + "    return None\n"
    candidates, generated = tmp_path / "candidates.jsonl", tmp_path / "generated.jsonl"
    candidates.write_text("".join(json.dumps({"problem_id": row["task_id"], "code": code}) + "\n"
                                  for code in (wrong, wrong + "\n", good)))  # the wrong behaviour has two votes
    tests = [{"call": "has_close_elements([1.0, 2.5], 1.0)", "expected": False},
             {"call": "has_close_elements([1.0, 1.2], 0.5)", "expected": True}]
    generated.write_text(json.dumps({"problem_id": row["task_id"], "tests": tests}) + "\n")
    done = subprocess.run([sys.executable, "-m", "solidcoder", "rank", str(candidates), "--data-file",
                           str(humaneval_file), "--k", "3", "--prune", "syntax", "--generated-tests", str(generated)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("filters | kept | majority Best-of-3 | agreement Best-of-3")
    assert lines[2].split(" | ")[2:4] == ["0.0", "100.0"]  # majority picks the two wrong samples, agreement the good


def test_rank_names_the_line_of_a_generated_tests_file_that_is_not_tests(tmp_path, humaneval_file):
    import subprocess
    import sys

    candidates, generated = tmp_path / "candidates.jsonl", tmp_path / "generated.jsonl"
    candidates.write_text('{"problem_id": "HumanEval/0", "code": "x = 1"}\n')
    generated.write_text('{"problem_id": "HumanEval/0", "tests": [{"call": "f(1)"}]}\n')
    done = subprocess.run([sys.executable, "-m", "solidcoder", "rank", str(candidates), "--data-file",
                           str(humaneval_file), "--generated-tests", str(generated)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.startswith(f"error: {generated}:1: expected"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_suite_filter_runs_the_first_n_tests_of_the_whole_suite(problem, sandbox_pool):
    off_by_negative = "def add(a, b):\n    return a + b if a >= 0 else 1\n"  # passes every public test
    public, suite = TestsVerifier(Judge(sandbox_pool), 4), make_verifier("suite:4", Judge(sandbox_pool))
    assert suite.name == "suite:4" and asyncio.run(public.survivors(problem, [off_by_negative])) == [True]
    assert asyncio.run(suite.survivors(problem, [GOOD, off_by_negative])) == [True, False]  # the 4th is hidden


def test_the_papers_baseline_ranks_by_suite_tests_passed_with_duplicates_breaking_ties(problem, sandbox_pool):
    from solidcoder.verify.rank import TestsPassedScorer

    half = "def add(a, b):\n    return a + b if a < 1 else 0\n"  # passes 2 of the 4 suite tests
    scorer = TestsPassedScorer(Judge(sandbox_pool), 4)
    scores = asyncio.run(scorer.scores(problem, dedupe([WRONG, WRONG, half, GOOD])))
    assert scores[2] > scores[1] > scores[0]  # 4 passed > 2 passed > 0 passed
    tied = asyncio.run(scorer.scores(problem, dedupe([GOOD, GOOD + " ", GOOD + "\n# x\n"])))
    assert tied[0] > tied[1]  # both pass all four; the one sampled twice ranks first


def test_the_paper_preset_reads_back_and_makes_one_row_per_filter_and_v_all(problem, sandbox_pool):
    from solidcoder.verify.table import RankSettings, baseline_ranker, rank_preset, rank_table

    paper = rank_preset("paper")
    assert paper == RankSettings(("syntax", "lint", "suite:10"), "each", "tests-passed", 5, 4)
    assert rank_preset("paper", ["syntax"]).prune == ("syntax",) and rank_preset("default").rows == "cumulative"
    with pytest.raises(BadInput, match="preset 'papr'"):
        rank_preset("papr")
    judge = Judge(sandbox_pool)
    chain = [make_verifier(spec, judge) for spec in paper.prune]
    rows = asyncio.run(rank_table([problem], {"add": [GOOD, WRONG, BAD_SYNTAX]}, judge, chain,
                                  [baseline_ranker(paper, judge)], 3, paper))
    assert [r.filters for r in rows] == ["none", "syntax", "lint:ruff", "suite:10", "V_all"]
    assert [r.survivors for r in rows] == pytest.approx([1.0, 2 / 3, 2 / 3, 1 / 3, 1 / 3])
    assert all(r.best_of_k["tests-passed"] == 1.0 for r in rows) and all(r.pps["tests-passed"] > 0 for r in rows)


def test_a_sandbox_failure_while_pruning_or_ranking_raises_instead_of_keeping_or_scoring(problem, unstartable_pool):
    from solidcoder.errors import SandboxFailure

    judge = Judge(unstartable_pool)
    with pytest.raises(SandboxFailure):  # once kept as if it had timed out
        asyncio.run(TestsVerifier(judge, first_n=1).survivors(problem, [GOOD]))
    with pytest.raises(SandboxFailure):
        asyncio.run(prune_then_rank(problem, [GOOD, WRONG], [SyntaxVerifier()], MajorityScorer(judge)))
