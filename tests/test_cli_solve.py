"""`solidcoder solve` as a user runs it (the default `solidcoder+` preset of Algorithm 1), against the scripted
server: program on stdout or --out, trajectory on disk, exit codes 0 / 1 / 2 / 3 (1 also when no test ran), and
nothing written on bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_server import status
from solve_runs import trajectory_file
from stage_router import BAD, template_of
from terminal import run_in_terminal

REPO = Path(__file__).resolve().parents[1]
ADD_TXT = "Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n>>> add(-1, 1)\n0\n"
FAST = ["--plans", "1", "--debug-rounds", "1", "--oracle-rounds", "1", "--candidates", "1"]
SUM_OK = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"


@pytest.fixture
def add_txt(tmp_path) -> Path:
    path = tmp_path / "add.txt"
    path.write_text(ADD_TXT)
    return path


def solve(server, *args: str) -> subprocess.CompletedProcess:
    default = [] if "--strategy" in args else ["--strategy", "solidcoder+"]  # routing has tests of its own
    command = [sys.executable, "-m", "solidcoder", "solve", *args, *FAST, *default]
    if server is not None:
        command += ["--model", "openai/scripted-model", "--api-base", server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def test_verified_program_on_stdout_with_summary_and_trajectory(router, scripted_server, add_txt, tmp_path):
    done = solve(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def add(a, b):") and "UNVERIFIED" not in done.stdout
    assert "verified" in done.stderr and "model calls" in done.stderr and "EDGE CASES" not in done.stdout
    trajectory = json.loads(trajectory_file(tmp_path / "run").read_text())
    assert trajectory["outcome"]["verified"] and trajectory["problem"]["entry_point"] == "add"
    assert trajectory["strategy"] == "solidcoder+" and trajectory["settings"]["monotonic"]
    assert trajectory["usage"]["calls"] == len(scripted_server.chat_requests())
    sent = [template_of(r) for r in scripted_server.chat_requests()]
    assert [s["template"] for s in trajectory["steps"] if s["type"] == "call"] == sent  # one step per call, in order


def test_out_file_and_extra_tests(router, scripted_server, add_txt, tmp_path):
    extra = tmp_path / "tests.json"
    extra.write_text(json.dumps([{"call": "add(2, 2)", "expected": 4}]))
    out = tmp_path / "add.py"
    done = solve(scripted_server, str(add_txt), "--out", str(out), "--tests", str(extra), "--run-dir",
                 str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and out.read_text().startswith("def add")
    trajectory = json.loads(trajectory_file(tmp_path / "run").read_text())
    assert len(trajectory["problem"]["public_tests"]) == 3


def test_unverified_exit_1_prints_the_program_marked(router, scripted_server, add_txt, tmp_path):
    router.defaults.update(code=BAD, fix=BAD, debug=BAD)
    done = solve(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"), "--max-calls", "3")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("# UNVERIFIED") and "per-problem cap of 3" in done.stdout and "a - b" in done.stdout


def test_a_spent_token_budget_answers_with_the_program_so_far(router, scripted_server, add_txt, tmp_path):
    router.defaults.update(code=BAD, fix=BAD, debug=BAD)
    done = solve(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"), "--max-total-tokens", "60")
    assert done.returncode == 1, done.stderr
    assert "run budget exhausted" in done.stdout and "a - b" in done.stdout
    assert len(scripted_server.chat_requests()) == 3  # 24 tokens a call: the fourth would pass the cap


def test_no_recognised_tests_exit_1_says_no_tests_ran(router, scripted_server, tmp_path):
    router.defaults["code"] = SUM_OK
    (tmp_path / "sum.txt").write_text("Read a and b; print a + b.\n\nExample\n1 2 gives 3.\n")
    done = solve(scripted_server, str(tmp_path / "sum.txt"), "--stdio", "--run-dir", str(tmp_path / "run"))
    assert (done.returncode, "no tests ran" in done.stderr, done.stdout.startswith("# UNVERIFIED")) == (1, True, True)


def test_fatal_model_error_exit_3_says_why(router, scripted_server, add_txt, tmp_path):
    router.queue("plan", status(401, "bad key"))
    done = solve(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 3
    assert "authentication failed" in done.stderr
    assert json.loads(trajectory_file(tmp_path / "run").read_text())["outcome"]["status"] == \
        "infrastructure_error"


@pytest.mark.parametrize("args, message", [
    (["missing.txt"], "cannot read problem file"),
    (["{prose}"], "cannot tell how the solution is run"),
    (["{add}", "--stdio", "--function", "add"], "either --stdio or --function"),
    (["{add}", "--tests", "{bad_tests}"], "--tests"),
    (["{add}", "--out", "{tmp}/no/such/dir/out.py"], "does not exist"),
    (["{add}", "--prompts", "{tmp}/prompts"], "unknown variable"),
])
def test_bad_input_exit_2_one_line_nothing_written(args, message, add_txt, tmp_path):
    (tmp_path / "prose.txt").write_text("Only prose here.")
    (tmp_path / "bad.json").write_text('[{"stdin": "1"}]')
    (tmp_path / "prompts" / "paper").mkdir(parents=True)
    (tmp_path / "prompts" / "paper" / "debug.j2").write_text("Fix {{ cod }}")
    names = {"prose": str(tmp_path / "prose.txt"), "add": str(add_txt), "bad_tests": str(tmp_path / "bad.json"),
             "tmp": str(tmp_path)}
    done = solve(None, *[a.format(**names) for a in args], "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists() and done.stdout == ""


def test_loop_flags_set_algorithm_1_and_each_ablation_removes_its_stage(router, scripted_server, add_txt, tmp_path):
    flags = ["--no-shift-left", "--no-sim", "--no-oracle", "--no-live", "--no-defensive"]
    done = solve(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"), *flags)
    assert done.returncode == 0, done.stderr
    settings = json.loads(trajectory_file(tmp_path / "run").read_text())["settings"]
    assert [settings[k] for k in ("shift_left", "simulation", "oracle", "live", "defensive")] == [False] * 5
    assert (settings["p"], settings["d"], settings["a"], settings["candidates"]) == (1, 1, 1, 1)
    # no edge cases, no simulation, no judge (a crash-only test), no execution (the model traces the test)
    assert router.seen == ["plan", "plan_check", "code", "red_team", "mental_execute"]
    assert "EDGE CASES" not in router.prompt("plan") and "edge case" not in router.prompt("plan").lower()


def solve_direct(server, *args: str) -> subprocess.CompletedProcess:
    """`solve --strategy direct` (one model call, no loop flags) against the scripted server."""
    command = [sys.executable, "-m", "solidcoder", "solve", *args, "--strategy", "direct", "--model",
               "openai/scripted-model", "--api-base", server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def test_an_unfenced_reply_is_the_program(router, scripted_server, add_txt, tmp_path):
    router.defaults["strategies/direct"] = "Here is the function:\n\ndef add(a, b):\n    return a + b\n\nIt adds."
    done = solve_direct(scripted_server, str(add_txt), "--run-dir", str(tmp_path / "run"))
    assert (done.returncode, done.stdout) == (0, "def add(a, b):\n    return a + b\n"), done.stderr
    assert router.seen == ["strategies/direct"]


def test_a_template_without_its_user_header_is_bad_input_before_any_call(router, scripted_server, add_txt, tmp_path):
    (tmp_path / "mine" / "strategies").mkdir(parents=True)
    direct = (REPO / "prompts" / "strategies" / "direct.j2").read_text().replace("=== user ===\n", "")
    (tmp_path / "mine" / "strategies" / "direct.j2").write_text(direct)
    done = solve_direct(scripted_server, str(add_txt), "--prompts", str(tmp_path / "mine"), "--run-dir",
                        str(tmp_path / "run"))
    assert (done.returncode, done.stdout, scripted_server.chat_requests()) == (2, "", [])
    assert "direct.j2: no '=== user ===' message" in done.stderr and not (tmp_path / "run").exists()


def test_at_80_columns_each_call_says_what_it_cost_and_the_trajectory_path_prints_whole(router, scripted_server,
                                                                                         add_txt, tmp_path):
    run_dir = tmp_path / "a-run-directory-whose-path-is-longer-than-the-eighty-columns-of-the-terminal"
    command = [sys.executable, "-m", "solidcoder", "solve", str(add_txt), "--run-dir", str(run_dir), *FAST,
               "--strategy", "solidcoder+", "--model", "openai/scripted-model", "--api-base", scripted_server.url]
    code, out = run_in_terminal(command, cwd=REPO)
    assert code == 0, out
    assert f"trajectory: {trajectory_file(run_dir)}" in out.splitlines() and "…" not in out, out
    assert len(re.findall(r"^model call \d+: ", out, re.MULTILINE)) == len(scripted_server.chat_requests())
    first = template_of(scripted_server.chat_requests()[0])
    assert re.search(rf"model call 1: {re.escape(first)}\s+\d+ prompt \+ \d+ completion tokens, \d+\.\d s", out), out
