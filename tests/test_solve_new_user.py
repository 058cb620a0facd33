"""What a new user met in `solidcoder solve` (issue 27), each as the user meets it: the real CLI in a process,
against the scripted server. The answer is the best program seen; "unverified" says what ran and what failed; an
--api-base without --model, a mistyped --model and an unreachable server are one line each; Ctrl-C leaves the
trajectory marked interrupted; the tools a strategy runs are checked before any call."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import interruptible
from scripted_server import hang, reply
from solve_runs import trajectory_file
from stage_router import StageRouter

REPO = Path(__file__).resolve().parents[1]
SQUARE_TXT = "Return the square of x.\n\ndef square(x):\n\n>>> square(1)\n1\n>>> square(2)\n4\n>>> square(3)\n9\n"
TWO_OF_THREE = "```python\ndef square(x):\n    return 0 if x == 3 else x * x\n```"
STUB = "```python\ndef square(x):\n    pass\n```"


def solidcoder(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def square_problem(tmp_path: Path) -> Path:
    path = tmp_path / "square.txt"
    path.write_text(SQUARE_TXT)
    return path


def served(server) -> list[str]:
    return ["--model", "openai/scripted-model", "--api-base", server.url]


def test_the_answer_is_the_best_program_seen_and_the_reason_names_the_first_failure(scripted_server, tmp_path):
    # Tier 0 passes 2 of 3; tier 1's samples and tier 2's programs are stubs passing none; tier 2 stops at its budget.
    router = StageRouter(scripted_server, code=STUB, fix=STUB, debug=STUB, simulate="NO CHANGE")
    router.queue("strategies/direct", TWO_OF_THREE, *[STUB] * 5)
    done = solidcoder("solve", str(square_problem(tmp_path)), "--strategy", "solidcoder-routed:full_calls=3",
                      "--run-dir", str(tmp_path / "run"), *served(scripted_server))
    assert done.returncode == 1, done.stderr
    assert "return 0 if x == 3 else x * x" in done.stdout and "pass\n" not in done.stdout
    first_line = done.stdout.splitlines()[0]
    assert first_line.startswith("# UNVERIFIED: 2 of 3 public tests passed; first failure: test 3 ")
    assert "square(3)" in first_line and "9" in first_line
    outcome = json.loads(trajectory_file(tmp_path / "run").read_text())["outcome"]
    assert outcome["code"].startswith("def square(x):\n    return 0 if x == 3")


def test_an_unverified_baseline_says_how_many_public_tests_passed(scripted_server, tmp_path):
    scripted_server.script(reply("```python\ndef square(x):\n    return x\n```"))
    done = solidcoder("solve", str(square_problem(tmp_path)), "--strategy", "direct", "--run-dir",
                      str(tmp_path / "run"), *served(scripted_server))
    assert done.returncode == 1 and "no tests ran" not in done.stdout + done.stderr
    assert done.stdout.startswith("# UNVERIFIED: 1 of 3 public tests passed; first failure: test 2 ")


def test_api_base_without_model_is_bad_input_before_anything_runs(tmp_path):
    done = solidcoder("solve", str(square_problem(tmp_path)), "--api-base", "http://127.0.0.1:9/v1", "--run-dir",
                      str(tmp_path / "run"))
    assert done.returncode == 2 and "--api-base http://127.0.0.1:9/v1 needs --model" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


@pytest.mark.parametrize("spec, message", [
    ("gpt4o-mini", "--model gpt4o-mini: no file or directory of that name, and no API provider litellm knows"),
    ("./models/qwen.gguf", "--model ./models/qwen.gguf: no such GGUF file"),
    ("./checkpoints/final", "--model ./checkpoints/final: no such file or directory"),
    ("README.md", "--model README.md: a file, but not a GGUF model"),
])
def test_a_mistyped_model_says_what_was_not_found(spec, message, tmp_path):
    if spec == "gpt4o-mini":
        pytest.importorskip("litellm", reason="API models are the api extra: pip install 'solidcoder[api]'")
    done = solidcoder("solve", str(square_problem(tmp_path)), "--model", spec, "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {message}") and len(done.stderr.strip().splitlines()) == 1
    assert "need litellm" not in done.stderr and not (tmp_path / "run").exists()


def test_an_unreachable_server_is_one_line_on_stderr_exit_3_and_nothing_on_stdout(tmp_path):
    done = solidcoder("solve", str(square_problem(tmp_path)), "--strategy", "direct", "--model", "openai/m",
                      "--api-base", "http://127.0.0.1:9/v1", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 3 and done.stdout == ""
    errors = [line for line in done.stderr.splitlines() if "127.0.0.1:9" in line or "onnect" in line]
    assert len(errors) == 1 and errors[0].startswith("error: "), done.stderr
    outcome = json.loads(trajectory_file(tmp_path / "run").read_text())["outcome"]
    assert outcome["status"] == "infrastructure_error"


def test_ctrl_c_leaves_the_trajectory_marked_interrupted(scripted_server, tmp_path):
    scripted_server.script(hang(60))
    run = tmp_path / "run"
    command = [sys.executable, "-m", "solidcoder", "solve", str(square_problem(tmp_path)), "--strategy", "direct",
               "--run-dir", str(run), *served(scripted_server)]
    proc = interruptible(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not scripted_server.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and out == "" and "interrupted" in err
    assert json.loads(trajectory_file(run).read_text())["outcome"]["status"] == "interrupted"
