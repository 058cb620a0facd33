"""`solidcoder show`: a committed bench run (recorded before executions were), a fresh bench run and a fresh `solve`
run (both against the scripted server, both recording every execution), in the terminal and as JSON."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from show_support import COMMITTED, REPO, fresh_bench_run
from solve_runs import trajectory_file
from stage_router import StageRouter
from terminal import run_in_terminal
from test_bench_strategies import ADD, BAD, GOOD, run
from test_ldb import DEBUG as LDB_DEBUG
from test_solve_strategy import add_problem, solve

from solidcoder.show.html import problems_html
from solidcoder.show.load import load_run
from solidcoder.strategies import make_strategy

PEERS = REPO / "benchmarks" / "results" / "humaneval_dev40_qwen05b_peers"  # recorded with its executions
ESCAPED_PROGRAM = "```python\ndef add(a, b):\n    s = '\x1b]0;pwned\x07 [bold red]markup[/]'\n    return a + b\n```"


def show(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "solidcoder", "show", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=REPO, env=env)


def shown(*args: str) -> list[dict]:
    done = show(*args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory) -> Path:
    return fresh_bench_run(tmp_path_factory.mktemp("show") / "run")


def test_the_committed_routed_run_lists_all_40_problems_under_both_configurations():
    lines = shown(COMMITTED)
    assert len({line["problem"] for line in lines}) == 40 and len(lines) == 80
    assert {line["config"] for line in lines} == {"solidcoder-routed", "solidcoder-routed:oracle=shared"}
    assert all(line["ended"].startswith("tier ") and line["calls"] > 0 and line["tokens"] > 0 for line in lines)
    table = show(COMMITTED)
    assert table.returncode == 0 and "40 problems, 80 runs" in table.stdout and "HumanEval/39" in table.stdout


def test_an_old_run_shows_its_tiers_calls_and_hidden_verdict_and_says_executions_were_not_recorded():
    view = shown(COMMITTED, "--problem", "HumanEval/0")[0]
    assert [phase["name"] for phase in view["phases"]] == ["tier 0"]
    calls = view["phases"][0]["steps"]
    assert [c["type"] for c in calls] == ["call", "call"] and all(c["completion_tokens"] > 0 for c in calls)
    assert view["scored"] == {"passed": 1, "total": 1, "first_failure": ""} and not view["executions_recorded"]
    assert view["strategy_stages"] == ["red_team", "execute"] and "has_close_elements" in view["program"]
    tree = show(COMMITTED, "--problem", "HumanEval/0").stdout
    assert "tier 0" in tree and "scored: 1 of 1 hidden tests pass" in tree and "none recorded" in tree


def test_replies_are_shortened_unless_full():
    short = shown(COMMITTED, "--problem", "HumanEval/0")[0]["phases"][0]["steps"][0]["reply"]
    whole = shown(COMMITTED, "--problem", "HumanEval/0", "--full")[0]["phases"][0]["steps"][0]["reply"]
    assert "--full shows them" in short and "--full" not in whole and whole.rstrip().endswith("```")
    assert len(whole) > len(short) - len("--full shows them")


def test_a_bad_path_or_an_unknown_problem_is_one_line_on_stderr_and_exit_2(tmp_path):
    for args in ([tmp_path / "missing"], [tmp_path], [COMMITTED, "--problem", "HumanEval/999"]):
        done = show(*args)
        assert done.returncode == 2 and done.stdout == "", args
        assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_fresh_bench_run_records_its_executions_and_show_puts_them_in_their_tiers(bench_run):
    assert (bench_run / "executions.jsonl").stat().st_size > 0
    view = shown(bench_run, "--problem", "HumanEval/0")[0]
    names = [phase["name"] for phase in view["phases"]]
    assert names[:2] == ["tier 0", "tier 1"] and names[-1] == "scoring on the hidden tests"
    assert view["line"]["passed"] is False
    tier0 = view["phases"][0]["steps"]
    assert [s["type"] for s in tier0] == ["call", "execution"] and tier0[0]["template"] == "strategies/direct_qwen"
    execution = tier0[1]
    assert execution["purpose"] == "strategy" and execution["passed"] == 0 and execution["total"] == 2
    assert {t["kind"] for t in execution["tests"]} == {"public"} and "return None" in execution["program"]
    failure = execution["first_failure"]
    assert failure["status"] == "fail" and "has_close_elements([1.0, 2.0, 3.0], 0.5)" in failure["input"]
    [hidden] = view["phases"][-1]["steps"]
    assert hidden["purpose"] == "hidden" and hidden["tests"][0]["kind"] == "hidden" and hidden["first_failure"]


def test_a_passing_problem_of_a_fresh_run_shows_its_tests_passing_in_the_terminal(bench_run):
    tree = show(bench_run, "--problem", "HumanEval/1").stdout
    assert "PASS" in tree and "execution (strategy): 1 of 1 tests pass" in tree
    assert "execution (hidden): 1 of 1 tests pass" in tree and "tier 0 accepted it" in tree


def test_show_works_the_same_on_a_solve_run_directory(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", ESCAPED_PROGRAM)
    run = tmp_path / "run"
    done = solve(scripted_server, add_problem(tmp_path), "--run-dir", str(run))
    assert done.returncode == 0, done.stderr
    run = trajectory_file(run).parent  # the run's own directory under --run-dir
    [line] = shown(run)
    assert line["passed"] and line["ended"] == "tier 0" and line["calls"] == 1 and line["config"] == "solidcoder-routed"
    view = shown(run, "--problem", line["problem"])[0]
    assert [phase["name"] for phase in view["phases"]] == ["tier 0", "final check on the public tests"]
    call, execution = view["phases"][0]["steps"]
    assert "[user]" in call["prompt"] and execution["purpose"] == "strategy" and execution["passed"] >= 1
    assert view["phases"][1]["steps"][0]["purpose"] == "final"


def test_program_text_is_escaped_in_the_terminal_never_sent_raw_or_read_as_markup(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", ESCAPED_PROGRAM)
    run = tmp_path / "run"
    assert solve(scripted_server, add_problem(tmp_path), "--run-dir", str(run)).returncode == 0
    problem = shown(run)[0]["problem"]
    tree = show(run, "--problem", problem).stdout
    assert "\x1b" not in tree and "\x07" not in tree
    assert "\\x1b]0;pwned\\x07 [bold red]markup[/]" in tree


def test_the_trace_fed_to_ldbs_debugger_is_shown_with_its_blocks(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD)
    router.queue("strategies/ldb_debug", LDB_DEBUG).queue("strategies/ldb_fix", GOOD)
    run(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path)
    [phase, scoring] = shown(tmp_path / "run", "--problem", ADD.id)[0]["phases"]
    steps = [(s["type"], s.get("template") or s.get("purpose")) for s in phase["steps"]]
    assert steps == [("call", "strategies/direct_qwen"), ("execution", "strategy"), ("execution", "trace"),
                     ("call", "strategies/ldb_debug"), ("call", "strategies/ldb_fix"), ("execution", "strategy")]
    traced = phase["steps"][2]
    assert traced["tests"][0]["input"] == "assert add(1, 2) == 3" and traced["tests"][0]["status"] == "blocks"
    assert "[BLOCK-0]\n    # a=1\tb=2\n    return a - b\n    # a=1\tb=2\t_ret=-1" in traced["trace"]
    tree = show(tmp_path / "run", "--problem", ADD.id).stdout
    assert "trace fed to the debugger: blocks on assert add(1, 2) == 3" in tree and "[BLOCK-0]" in tree
    page = problems_html([load_run(tmp_path / "run")])
    assert "<details class='trace'><summary>trace fed to the debugger: blocks on assert add(1, 2) == 3" in page
    assert "# a=1\tb=2\t_ret=-1" in page


# --- at 80 columns, on a real terminal ------------------------------------------------------------------------------


def at_80_columns(*args: str, cwd: Path = REPO) -> list[str]:
    """The command's lines on an 80-column terminal; none wider, none cut with an ellipsis."""
    code, out = run_in_terminal([sys.executable, "-m", "solidcoder", *map(str, args)], cwd=cwd)
    assert code == 0, out
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines()), out
    return out.splitlines()


def test_at_80_columns_the_listing_numbers_its_configurations_and_names_each_whole_under_it():
    lines = at_80_columns("show", COMMITTED)
    assert lines[-2:] == ["config 1: solidcoder-routed", "config 2: solidcoder-routed:oracle=shared"]
    configs = Counter(line.split("│")[2].strip() for line in lines if line.startswith("│ HumanEval/"))
    assert configs == {"1": 40, "2": 40}


def test_at_80_columns_a_long_program_line_continues_after_a_mark_and_reads_back_whole():
    program = shown(PEERS, "--problem", "HumanEval/9")[0]["program"]
    lines = at_80_columns("show", PEERS, "--problem", "HumanEval/9")
    start = lines.index("├── final program") + 1
    block = [line[4:] for line in lines[start:next(i for i in range(start, len(lines)) if lines[i].startswith("└"))]]
    joined: list[str] = []
    for line in block:
        joined = [*joined[:-1], joined[-1] + line[2:]] if line.startswith("↪ ") else [*joined, line]
    assert any(line.startswith("↪ ") for line in block) and max(map(len, program.splitlines())) > 80
    assert [line.rstrip() for line in joined] == [line.rstrip() for line in program.split("\n")]


def test_the_readmes_first_show_examples_are_runs_recorded_with_executions():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"^solidcoder show (benchmarks/results/\S+)(?: --problem (\S+))?", readme, re.MULTILINE)
    assert len(examples) >= 2 and all((REPO / path / "executions.jsonl").stat().st_size > 0 for path, _ in examples)
    path, problem = next(example for example in examples if example[1])
    steps = [step["type"] for view in shown(REPO / path, "--problem", problem) if view["executions_recorded"]
             for phase in view["phases"] for step in phase["steps"]]
    assert steps.count("execution") >= 2 and "call" in steps


def test_report_writes_into_no_run_directory_unless_asked_and_names_configurations_whole(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(COMMITTED, run, ignore=shutil.ignore_patterns("report.html"))
    before = sorted(path.name for path in run.iterdir())
    lines = at_80_columns("report", run, cwd=tmp_path)
    assert sorted(path.name for path in run.iterdir()) == before and sorted(tmp_path.iterdir()) == [run]
    assert lines[-1] == "add --html FILE for the page with plots and each problem's view"
    assert any(line.startswith("│ solidcoder-routed:oracle=shared ") for line in lines)
    assert any(re.match(r"│ solidcoder-routed +│", line) for line in lines)
    assert at_80_columns("report", run, "--html", "page.html", cwd=tmp_path)[-1] == "wrote page.html"
    assert sorted(path.name for path in run.iterdir()) == before and (tmp_path / "page.html").is_file()
