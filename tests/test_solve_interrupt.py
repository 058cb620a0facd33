"""Ctrl-C in `solidcoder solve` (issue 39), with real processes against the scripted server: the first SIGINT says
"stopping", cancels the calls in flight, keeps the trajectory (the cancelled call marked) and exits 130 within 2 s,
also when what is running cannot be cancelled (a program sleeping in the sandbox); a second SIGINT quits at once;
a cancelled llama.cpp generation ends at its next token.

Each child starts in a session of its own with SIGINT at its default (`interruptible`), whatever the shell gave
pytest; the first test signals the child's whole process group, as a terminal's Ctrl-C does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from processes import interruptible
from scripted_server import hang, reply
from solve_runs import run_directories, trajectory_file
from stage_router import StageRouter

REPO = Path(__file__).resolve().parents[1]
SQUARE_TXT = "Return the square of x.\n\ndef square(x):\n\n>>> square(1)\n1\n>>> square(2)\n4\n>>> square(3)\n9\n"
TWO_OF_THREE = "def square(x):\n    return 0 if x == 3 else x * x"  # as a server continues the prefilled fence
SLEEPS = "```python\ndef square(x):\n    import time\n    time.sleep(60)\n    return x * x\n```"


class Child:
    """`solidcoder solve` in a process of its own; its stderr is read line by line as it comes."""

    def __init__(self, server, tmp_path: Path, *args: str):
        problem = tmp_path / "square.txt"
        problem.write_text(SQUARE_TXT)
        self.run_dir = tmp_path / "runs"
        command = [sys.executable, "-m", "solidcoder", "solve", str(problem), "--run-dir", str(self.run_dir), *args,
                   "--model", "openai/scripted-model", "--api-base", server.url]
        self.proc = interruptible(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.err: list[str] = []
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()

    def wait_for(self, ready, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.proc.poll() is None and time.monotonic() < deadline, f"never {what}: {''.join(self.err)}"
            time.sleep(0.02)

    def exit_after(self, signal_sent: float) -> tuple[int, float]:
        """The exit code and the seconds from `signal_sent` to the exit."""
        code = self.proc.wait(30)
        return code, time.monotonic() - signal_sent

    def recorded_calls(self) -> int:
        runs = run_directories(self.run_dir)
        return len([s for s in json.loads(trajectory_file(self.run_dir).read_text())["steps"]
                    if s["type"] == "call"]) if runs else 0

    def trajectory(self) -> dict:
        return json.loads(trajectory_file(self.run_dir).read_text())


def test_ctrl_c_cancels_the_call_in_flight_keeps_the_trajectory_and_exits_130_within_2_s(scripted_server, tmp_path):
    router = StageRouter(scripted_server)
    router.queue("strategies/direct", TWO_OF_THREE, hang(60))  # tier 0 answers; tier 1's samples never come
    child = Child(scripted_server, tmp_path)
    child.wait_for(lambda: len(scripted_server.chat_requests()) == 2, "asked for tier 1's samples")
    sent = time.monotonic()
    os.killpg(child.proc.pid, signal.SIGINT)  # the whole process group, as Ctrl-C in a terminal
    code, seconds = child.exit_after(sent)
    err = "".join(child.err)
    assert code == 130 and seconds < 2.0, (seconds, err)
    assert "stopping" in err and "interrupted: the trajectory so far is in" in err
    assert child.proc.stdout.read() == ""
    trajectory = child.trajectory()
    calls = [s for s in trajectory["steps"] if s["type"] == "call"]
    assert trajectory["outcome"]["status"] == "interrupted" and len(calls) == 2
    assert calls[0]["reply"] == "```python\n" + TWO_OF_THREE and not calls[0].get("cancelled")
    assert calls[1]["cancelled"] is True and calls[1]["error"].startswith("cancelled") and "reply" not in calls[1]
    assert any(s["type"] == "execution" for s in trajectory["steps"])  # tier 0's program was judged and kept


def test_ctrl_c_while_a_program_runs_in_the_sandbox_still_exits_within_2_s(scripted_server, tmp_path):
    scripted_server.script(reply(SLEEPS))
    child = Child(scripted_server, tmp_path, "--strategy", "direct")
    child.wait_for(lambda: child.recorded_calls() == 1, "recorded the call")
    time.sleep(0.5)  # the program is asleep in the sandbox now; nothing can cancel it
    sent = time.monotonic()
    child.proc.send_signal(signal.SIGINT)
    code, seconds = child.exit_after(sent)
    err = "".join(child.err)
    assert code == 130 and seconds < 2.0, (seconds, err)
    assert "stopping" in err and "interrupted: the trajectory so far is in" in err
    assert child.trajectory()["outcome"]["status"] == "interrupted"


def test_a_second_ctrl_c_quits_at_once(scripted_server, tmp_path):
    scripted_server.script(reply(SLEEPS))
    child = Child(scripted_server, tmp_path, "--strategy", "direct")
    child.wait_for(lambda: child.recorded_calls() == 1, "recorded the call")
    time.sleep(0.5)
    child.proc.send_signal(signal.SIGINT)
    child.wait_for(lambda: any("stopping" in line for line in child.err), "said stopping", timeout=5)
    sent = time.monotonic()
    child.proc.send_signal(signal.SIGINT)
    code, seconds = child.exit_after(sent)
    err = "".join(child.err)
    assert code == 130 and seconds < 0.5, (seconds, err)
    assert "interrupted again: quitting now" in err  # the second Ctrl-C ended it, not the first one's grace period
    assert child.trajectory()["outcome"]["status"] == "interrupted"  # written at the first Ctrl-C


def test_a_cancelled_llama_cpp_generation_can_only_end_at_its_next_token():
    np = pytest.importorskip("numpy")
    from solidcoder.models.llamacpp import _Stopper

    stop, eos = threading.Event(), 2
    stopper = _Stopper(stop, eos)
    scores = np.array([0.5, 3.0, -1.0, 2.0])
    assert list(stopper(None, scores.copy())) == list(scores)  # not cancelled: the scores are the model's
    stop.set()
    ended = stopper(None, scores.copy())
    assert int(np.argmax(ended)) == eos and np.isinf(np.delete(ended, eos)).all()
