"""`solve` runs are kept and resumed (issue 39), as a user meets them: the real CLI against the scripted server.
Two problems into one --run-dir keep a directory each; the same problem with the same settings run again replays
the recorded calls (the server sees no new request), an interrupted run resumes where it stopped, and `show` reads
the parent directory (every run under it) and a trajectory.json path."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from processes import interruptible
from scripted_server import hang
from solve_runs import run_directories, trajectory_file
from stage_router import StageRouter

REPO = Path(__file__).resolve().parents[1]
SQUARE_TXT = "Return the square of x.\n\ndef square(x):\n\n>>> square(1)\n1\n>>> square(2)\n4\n"
CUBE_TXT = "Return the cube of x.\n\ndef cube(x):\n\n>>> cube(1)\n1\n>>> cube(2)\n8\n"
# Replies as a server continues the maker's prefilled fence (solve's default format); recorded after that fence
FENCE = "```python\n"
SQUARE = "def square(x):\n    return x * x"
CUBE = "def cube(x):\n    return x ** 3"
WRONG_SQUARE = "def square(x):\n    return x + x"


def problem(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.txt"
    path.write_text(text)
    return path


def solve(server, path: Path, run_dir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "solidcoder", "solve", str(path), "--run-dir", str(run_dir), *args,
               "--model", "openai/scripted-model", "--api-base", server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)


def show(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solidcoder", "show", *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**__import__("os").environ, "COLUMNS": "80"})


def calls_of(trajectory: Path) -> list[dict]:
    return [s for s in json.loads(trajectory.read_text())["steps"] if s["type"] == "call"]


def test_two_problems_into_one_run_dir_keep_a_run_directory_each(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", SQUARE, CUBE)
    runs = tmp_path / "runs"
    for name, text in (("square", SQUARE_TXT), ("cube", CUBE_TXT)):
        done = solve(scripted_server, problem(tmp_path, name, text), runs, "--strategy", "direct")
        assert done.returncode == 0, done.stderr
    found = {json.loads((run / "trajectory.json").read_text())["problem"]["id"]: run for run in run_directories(runs)}
    assert sorted(found) == ["cube", "square"] and found["square"].name.startswith("square-")
    # the second did not overwrite the first
    assert calls_of(found["cube"] / "trajectory.json")[0]["reply"] == FENCE + CUBE
    assert calls_of(found["square"] / "trajectory.json")[0]["reply"] == FENCE + SQUARE


def test_the_same_problem_and_settings_again_replays_every_call_and_pays_for_none(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", WRONG_SQUARE, *[SQUARE] * 5)
    path, runs = problem(tmp_path, "square", SQUARE_TXT), tmp_path / "runs"
    first = solve(scripted_server, path, runs)
    asked = len(scripted_server.chat_requests())
    again = solve(scripted_server, path, runs)
    assert first.returncode == again.returncode == 0 and asked >= 2, first.stderr
    assert len(scripted_server.chat_requests()) == asked, again.stderr  # the server saw nothing new
    assert again.stdout == first.stdout and "replayed (not sent again)" in again.stderr
    calls = calls_of(trajectory_file(runs))
    assert len(calls) == asked and all(call["replayed"] for call in calls)


def test_other_settings_for_the_same_problem_are_a_run_of_their_own(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", SQUARE, SQUARE)
    path, runs = problem(tmp_path, "square", SQUARE_TXT), tmp_path / "runs"
    assert solve(scripted_server, path, runs, "--strategy", "direct").returncode == 0
    assert solve(scripted_server, path, runs, "--strategy", "direct", "--max-tokens", "300").returncode == 0
    assert len(scripted_server.chat_requests()) == 2 and len(run_directories(runs)) == 2


def test_an_interrupted_run_resumes_from_its_recorded_calls(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", WRONG_SQUARE, hang(60), *[SQUARE] * 5)
    path, runs = problem(tmp_path, "square", SQUARE_TXT), tmp_path / "runs"
    command = [sys.executable, "-m", "solidcoder", "solve", str(path), "--run-dir", str(runs), "--model",
               "openai/scripted-model", "--api-base", scripted_server.url]
    proc = interruptible(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(scripted_server.chat_requests()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130
    done = solve(scripted_server, path, runs)
    assert done.returncode == 0, done.stderr
    assert len(scripted_server.chat_requests()) == 3  # tier 0's call replayed; tier 1's asked again, once
    calls = calls_of(trajectory_file(runs))
    assert calls[0]["replayed"] and not calls[1]["replayed"] and len(run_directories(runs)) == 1


def test_show_lists_every_run_under_a_parent_and_reads_a_trajectory_file(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", SQUARE, CUBE)
    runs = tmp_path / "runs"
    for name, text in (("square", SQUARE_TXT), ("cube", CUBE_TXT)):
        assert solve(scripted_server, problem(tmp_path, name, text), runs, "--strategy", "direct").returncode == 0
    listed = show(str(runs), "--json")
    assert listed.returncode == 0, listed.stderr
    lines = {line["problem"]: line for line in json.loads(listed.stdout)}
    assert sorted(lines) == ["cube", "square"] and all(line["passed"] for line in lines.values())
    square_run = next(run for run in run_directories(runs) if run.name.startswith("square-"))
    assert lines["square"]["config"] == f"direct ({square_run.name})"
    assert show(str(runs)).returncode == 0
    tree = show(str(runs), "--problem", "cube")
    assert tree.returncode == 0 and "x ** 3" in tree.stdout, tree.stderr
    one = show(str(square_run / "trajectory.json"), "--json")
    assert one.returncode == 0 and [line["problem"] for line in json.loads(one.stdout)] == ["square"], one.stderr
    assert show(str(square_run / "trajectory.json"), "--problem", "square").returncode == 0


def test_show_of_a_directory_with_no_run_under_it_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "missing"):
        done = show(str(path))
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no run directory under it" in show(str(tmp_path / "empty")).stderr
