"""What `solve` says, in a person's words (issue 39): progress one line per call, with the call and the sample a
generation belongs to; the reason whole and left-aligned, never in a box; a summary of what applies to the run; a
missing class or function named as such, in the verdict and in the repair prompt; examples that could not be read,
and a problem with no test, said before the first call. The CLI runs in real processes, at 80 columns on a
terminal where the layout is asserted."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from scripted_server import reply
from solve_runs import trajectory_file
from terminal import run_in_terminal

from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge, missing_entry
from solidcoder.models.llamacpp import Generating, _Heartbeat
from solidcoder.problem import Problem, TestCase
from solidcoder.solve.progress import CallProgress
from solidcoder.solve.textproblem import parse_problem_text
from solidcoder.wording import counted

REPO = Path(__file__).resolve().parents[1]
SQUARE_TXT = "Return the square of x.\n\ndef square(x):\n\n>>> square(1)\n1\n>>> square(2)\n4\n>>> square(3)\n9\n"
MAX_SUBARRAY = """Given an integer array nums, return the largest sum of a non-empty contiguous subarray.

class Solution:
    def maxSubArray(self, nums: list[int]) -> int:

Example 1:
Input: nums = [-2,1,-3,4,-1,2,1,-5,4]
Output: 6
Example 2:
Input: nums = [1]
Output: 1
"""
BARE = "```python\ndef maxSubArray(nums):\n    return max(nums)\n```"
UNREADABLE = """Return the sum of a and b.

def add(a, b):

Example 1:
Input: a = 1, b =
Output: 3
Example 2:
Input: a = [1, 2, b = 3
Output: 4
"""
BOXES = set("│┃╭╮╰╯─━┏┓┗┛")


def solve_command(server, problem: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "solidcoder", "solve", str(problem), *args, "--model", "openai/scripted-model",
            "--api-base", server.url]


def run(command: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env={**os.environ, **env})


def test_at_80_columns_the_reason_is_one_whole_line_and_the_summary_only_what_applies(scripted_server, tmp_path):
    scripted_server.script(reply("```python\ndef square(x):\n    return x\n```"))
    (tmp_path / "square.txt").write_text(SQUARE_TXT)
    run_dir = tmp_path / "run"
    code, out = run_in_terminal(solve_command(scripted_server, tmp_path / "square.txt", "--strategy", "direct",
                                              "--run-dir", str(run_dir)), cwd=REPO)
    assert code == 1, out
    reason = json.loads(trajectory_file(run_dir).read_text())["outcome"]["reason"]
    assert len(reason) > 80 and f"unverified: {reason}" in out.splitlines(), out  # whole, at column 0, unboxed
    assert f"# UNVERIFIED: {reason}" in out.splitlines() and "UNVERIFIED (" not in out
    assert not BOXES & set(out), out
    for absent in ("plans used", "debug rounds", "accumulated tests", "cost", "replayed"):
        assert absent not in out, out  # a direct run never entered the loop; the scripted model is free
    summary = [" ".join(line.split()) for line in out.splitlines()]
    assert "model calls 1" in summary and "tokens (prompt / completion) 7 / 5" in summary


def test_a_loop_run_shows_its_counts_and_a_paid_run_its_cost(router, scripted_server, tmp_path):
    (tmp_path / "square.txt").write_text(SQUARE_TXT)
    router.defaults.update(code="```python\ndef square(x):\n    return x * x\n```")
    (tmp_path / "models.yaml").write_text("models:\n  scripted-model:\n    cost_per_output_token: 0.001\n")
    done = run(solve_command(scripted_server, tmp_path / "square.txt", "--strategy", "solidcoder+", "--plans", "1",
                             "--debug-rounds", "1", "--oracle-rounds", "1", "--run-dir", str(tmp_path / "run")),
               SOLIDCODER_MODELS=str(tmp_path / "models.yaml"))
    assert done.returncode == 0, done.stderr
    summary = [" ".join(line.split()) for line in done.stderr.splitlines()]
    assert "plans used 1" in summary and "debug rounds 0" in summary and "accumulated tests 0" in summary, summary
    calls = len(scripted_server.chat_requests())
    assert f"cost ${calls * 13 * 0.001:.4f}" in summary, done.stderr  # 13 completion tokens a call (StageRouter)


def test_a_missing_class_is_named_in_the_verdict_and_in_the_repair_prompt(router, scripted_server, tmp_path):
    (tmp_path / "max_subarray.txt").write_text(MAX_SUBARRAY)
    router.defaults.update(code=BARE, fix=BARE, debug=BARE)
    done = run(solve_command(scripted_server, tmp_path / "max_subarray.txt", "--strategy", "solidcoder+", "--plans",
                             "1", "--debug-rounds", "1", "--oracle-rounds", "1", "--run-dir", str(tmp_path / "run")))
    assert done.returncode == 1, done.stderr
    said = "the program defines no class Solution (it defines maxSubArray)"
    assert said in router.prompt("debug") and "KeyError" not in router.prompt("debug")
    assert said in done.stdout.splitlines()[0]  # the reason, on the # UNVERIFIED line
    steps = json.loads(trajectory_file(tmp_path / "run").read_text())["steps"]
    details = [v.get("detail") for s in steps if s["type"] == "execution" for v in s.get("verdicts", [])]
    assert said in json.dumps(steps) and not any("KeyError" in str(d) for d in details)


def test_unreadable_examples_and_no_tests_are_said_before_the_first_call(scripted_server, tmp_path):
    scripted_server.script(reply("```python\ndef add(a, b):\n    return a + b\n```"))
    (tmp_path / "add.txt").write_text(UNREADABLE)
    done = run(solve_command(scripted_server, tmp_path / "add.txt", "--function", "add", "--strategy", "direct",
                             "--run-dir", str(tmp_path / "run")))
    assert done.returncode == 1 and "no tests ran" in done.stdout, done.stderr
    lines = done.stderr.splitlines()
    unread = next(i for i, line in enumerate(lines) if line.startswith("warning: 2 examples could not be read"))
    untested = next(i for i, line in enumerate(lines) if line.startswith("warning: no tests"))
    first_call = next(i for i, line in enumerate(lines) if line.startswith("model call 1: "))
    assert unread < untested < first_call and "--tests FILE" in lines[untested], done.stderr
    problem = json.loads(trajectory_file(tmp_path / "run").read_text())["problem"]
    assert problem["meta"] == {"unreadable_examples": 2} and problem["public_tests"] == []


def test_a_problem_with_tests_has_no_warning(scripted_server, tmp_path):
    scripted_server.script(reply("```python\ndef square(x):\n    return x * x\n```"))
    (tmp_path / "square.txt").write_text(SQUARE_TXT)
    done = run(solve_command(scripted_server, tmp_path / "square.txt", "--strategy", "direct", "--run-dir",
                             str(tmp_path / "run")))
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_examples_that_cannot_be_read_are_counted():
    problem = parse_problem_text(UNREADABLE.replace("Output: 4", "Output: 4\nExample 3:\nInput: a = 2, b = 2\n"
                                                    "Output: 4"), "p")
    assert (len(problem.public_tests), problem.meta) == (1, {"unreadable_examples": 2})
    described = "Add.\n\ndef add(a, b):\n\nInput: two numbers\nOutput: their sum\n>>> add(1, 2)\n3\n"
    assert parse_problem_text(described, "p").meta == {}  # a description, not an example
    with pytest.raises(BadInput, match=r"\(1 Input:/Output: example could not be read: no function to call\)"):
        parse_problem_text("Sum a list.\n\nInput: nums = [1, 2]\nOutput: 3\n", "p")


def test_progress_plain_lines_say_which_call_and_sample_and_are_not_redrawn():
    console = Console(file=io.StringIO(), force_terminal=False, width=80)
    progress = CallProgress(console)
    progress.generating(Generating("strategies/direct", 3, 5, 120, 14.2))
    progress.generating(Generating("strategies/direct", 3, 5, 130, 14.9))  # within 10 s: no new line
    progress.step({"template": "strategies/direct", "choices": ["a"] * 5, "prompt_tokens": 40,
                   "completion_tokens": 600, "latency_s": 20.0})
    progress.generating(Generating("paper/code", 1, 1, 1, 0.4))
    assert console.file.getvalue().splitlines() == [
        "model call 1: strategies/direct  sample 3 of 5, 120 tokens, 14 s",
        "model call 1: strategies/direct  5 samples, 40 prompt + 600 completion tokens, 20.0 s",
        "model call 2: paper/code  1 token, 0 s"]


def test_progress_on_a_terminal_is_one_live_line_redrawn_then_replaced():
    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    progress = CallProgress(console)
    progress.generating(Generating("strategies/direct", 1, 5, 10, 1.0))
    progress.generating(Generating("strategies/direct", 2, 5, 20, 2.0))
    progress.step({"template": "strategies/direct", "prompt_tokens": 4, "completion_tokens": 30, "latency_s": 2.5})
    written = console.file.getvalue()
    assert "sample 1 of 5, 10 tokens, 1 s\r\x1b[2Kmodel call 1: strategies/direct  sample 2 of 5" in written
    assert written.endswith("\x1b[2Kmodel call 1: strategies/direct  4 prompt + 30 completion tokens, 2.5 s\n")
    assert progress.live is None and written.count("\n") == 2  # the live frame, then the finished call


def test_the_heartbeat_reports_its_call_s_sample_and_tokens():
    heard: list[Generating] = []
    heartbeat = _Heartbeat(heard.append, 0.0, Generating("strategies/direct", 2, 5))
    for _ in range(3):
        assert heartbeat(None, "scores") == "scores"
    assert [(g.template, g.sample, g.samples, g.tokens) for g in heard] == [("strategies/direct", 2, 5, n)
                                                                          for n in (1, 2, 3)]
    assert str(heard[0]).startswith("sample 2 of 5, 1 token, ") and str(heard[0]).endswith(" s")


@pytest.mark.parametrize("code, entry, header, said", [
    ("def maxSubArray(nums):\n    return 0\n", "Solution.maxSubArray", "",
     "the program defines no class Solution (it defines maxSubArray)"),
    ("def plus(a, b):\n    return a + b\n", "add", "", "the program defines no function add (it defines plus)"),
    ("x = 1\n", "add", "", "the program defines no function add"),
    ("add = lambda a, b: a + b\n", "add", "", None),  # bound, if not by a def
    ("from helpers import *\n", "add", "", None),  # may be bound
    ("def plus(a, b):\n    return a + b\n", "add", "def add(a, b):\n    return plus(a, b)\n", None),  # the header's
    ("def f(:\n", "add", "", None),  # unreadable: the verdict says why it fails
])
def test_missing_entry_reads_the_program_s_top_level(code, entry, header, said):
    assert missing_entry(code, entry, header) == said


def test_the_judge_names_the_missing_function_in_every_verdict_it_broke(sandbox_pool):
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3), TestCase(kind="call", script="assert add(1, 2) == 3"),
             TestCase(kind="call", script="assert 1 + 1 == 3")]
    problem = Problem("p", "call", "Add.", entry_point="add", public_tests=tests)
    verdicts = Judge(sandbox_pool).judge(problem, "def plus(a, b):\n    return a + b\n").verdicts
    said = "the program defines no function add (it defines plus)"
    assert [v.detail for v in verdicts[:2]] == [said, said] and said not in verdicts[2].detail


def test_counts_are_said_in_the_singular_and_the_plural():
    assert [counted(n, "example") for n in (0, 1, 2)] == ["0 examples", "1 example", "2 examples"]
    assert counted(1, "match", "matches") == "1 match" and counted(3, "match", "matches") == "3 matches"
