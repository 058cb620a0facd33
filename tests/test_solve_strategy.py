"""`solidcoder solve --strategy NAME`: one problem through the bench's strategy machinery, against the scripted
server; the trajectory records every call with its template, and verified means tests ran and passed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_server import reply
from solve_runs import trajectory_file
from stage_router import BAD, GOOD, StageRouter, template_of
from test_cli_solve import ADD_TXT

REPO = Path(__file__).resolve().parents[1]


def solve(server, problem: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "solidcoder", "solve", str(problem), *args, "--model", "openai/scripted-model",
               "--api-base", server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=REPO)


def add_problem(tmp_path: Path) -> Path:
    path = tmp_path / "add.txt"
    path.write_text(ADD_TXT)
    return path


def trajectory(tmp_path: Path) -> dict:
    return json.loads(trajectory_file(tmp_path / "run").read_text())


def test_direct_writes_the_program_and_records_its_one_call(scripted_server, tmp_path):
    scripted_server.script(reply(GOOD))
    done = solve(scripted_server, add_problem(tmp_path), "--strategy", "direct", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def add(a, b):") and "UNVERIFIED" not in done.stdout
    record = trajectory(tmp_path)
    assert [s["template"] for s in record["steps"] if s["type"] == "call"] == ["strategies/direct_qwen"]
    assert record["outcome"]["verified"] and record["usage"]["calls"] == 1


def test_a_wrong_program_is_printed_marked_unverified_with_exit_1(scripted_server, tmp_path):
    scripted_server.script(reply(BAD))
    done = solve(scripted_server, add_problem(tmp_path), "--strategy", "direct", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("# UNVERIFIED") and "a - b" in done.stdout


def test_algorithm_1_runs_in_its_order_and_the_trajectory_says_so(scripted_server, tmp_path):
    StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4, 'sum'\n```")
    done = solve(scripted_server, add_problem(tmp_path), "--strategy", "solidcoder", "--run-dir",
                 str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    templates = [s["template"] for s in trajectory(tmp_path)["steps"] if s["type"] == "call"]
    assert templates == ["paper/shift_left", "paper/plan_check", "paper/code", "paper/simulate", "paper/red_team",
                         "paper/judge"]
    assert templates == [template_of(r) for r in scripted_server.chat_requests()]


def test_max_calls_ends_a_strategy_with_its_code_so_far(scripted_server, tmp_path):
    StageRouter(scripted_server, code=BAD, fix=BAD, debug=BAD)
    done = solve(scripted_server, add_problem(tmp_path), "--strategy", "solidcoder", "--max-calls", "4",
                 "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 1, done.stderr
    assert len(scripted_server.chat_requests()) == 4 and "a - b" in done.stdout


def test_pipeline_flags_with_another_strategy_are_bad_input(scripted_server, tmp_path):
    done = solve(scripted_server, add_problem(tmp_path), "--strategy", "direct", "--plans", "2", "--run-dir",
                 str(tmp_path / "run"))
    assert done.returncode == 2 and done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists() and scripted_server.chat_requests() == []


def test_solve_routes_by_default_and_stops_at_the_first_tier_that_accepts(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", GOOD)
    done = solve(scripted_server, add_problem(tmp_path), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    record = trajectory(tmp_path)
    assert record["strategy"] == "solidcoder-routed" and record["outcome"]["notes"]["tier"] == 0
    calls = [s["template"] for s in record["steps"] if s["type"] == "call"]
    assert calls == ["strategies/direct_qwen"]  # tier 0 asks no oracle by default
    executions = [s for s in record["steps"] if s["type"] == "execution"]
    assert [e["purpose"] for e in executions] == ["strategy", "final"]  # tier 0's public tests, then solve's own
    assert all(t["kind"] == "public" and t["status"] == "pass" for e in executions for t in e["tests"])


@pytest.mark.parametrize(("loop", "budget"), [({}, 7), ({"candidates": 2}, 7), ({"shift_left": False}, 7),
                                              ({"p": 2}, None), ({"d": 1, "a": 1}, None)])
def test_solves_loop_sizes_lift_tier_2s_call_budget_so_they_are_run(loop, budget):
    from solidcoder.solve.command import SolveOptions, make_solve_strategy

    strategy = make_solve_strategy(SolveOptions(strategy="solidcoder-routed", loop=loop))
    assert strategy.config.full_calls == budget and all(getattr(strategy.full.config, k) == v for k, v in loop.items())
