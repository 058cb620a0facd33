"""`solidcoder solve` (Algorithm 1's `solidcoder+` preset) end to end with a real local model (SmolLM2-135M through
llama.cpp in-process) on a call problem and a stdin problem. The model is far too small to be trusted, so this
asserts structure, not luck: the stages ran, every call recorded its tokens, and the exit code agrees with an
independent `solidcoder check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from solve_runs import trajectory_file

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
SMALL = ["--strategy", "solidcoder+", "--plans", "1", "--candidates", "1", "--debug-rounds", "1",
         "--oracle-rounds", "1", "--max-tokens", "96", "--max-calls", "8"]


def run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


@pytest.mark.parametrize("example", ["running_max.txt", "sum_pairs.txt"])
def test_solve_with_a_real_model_agrees_with_check(example, smollm_gguf, tmp_path):
    out, run_dir = tmp_path / "solution.py", tmp_path / "run"
    done = run("solve", str(REPO / "examples" / example), "--gguf", str(smollm_gguf), "--out", str(out),
               "--run-dir", str(run_dir), *SMALL)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    trajectory = json.loads(trajectory_file(run_dir).read_text())
    calls = [s for s in trajectory["steps"] if s["type"] == "call"]
    names = [c["template"] for c in calls]
    assert names[:2] == ["paper/shift_left", "paper/plan_check"] and names[2] in ("paper/plan_refine", "paper/code")
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls if "error" not in c)
    usage = trajectory["usage"]
    assert usage["calls"] == sum("error" not in c for c in calls) and usage["tokens"] > 0
    notes = trajectory["outcome"]["notes"]
    assert "passes_all" in notes["stages"] or "stopped" in notes  # the tests were executed, or the cap came first
    verified = trajectory["outcome"]["verified"]
    assert verified == (done.returncode == 0) == (not out.read_text().startswith("# UNVERIFIED"))
    assert_check_agrees(trajectory, out, verified, tmp_path)


def assert_check_agrees(trajectory: dict, solution: Path, verified: bool, tmp_path: Path) -> None:
    """Re-judge the printed program with `solidcoder check` on the public tests (and accumulated call tests)."""
    problem = dict(trajectory["problem"])
    accumulated = trajectory["outcome"]["notes"]["kept"]
    if problem["kind"] == "call":
        problem["public_tests"] = problem["public_tests"] + [{"script": t["source"]} for t in accumulated]
    path = tmp_path / "problem.json"
    path.write_text(json.dumps(problem))
    checked = run("check", str(solution), "--problem-file", str(path), "--json", timeout=120)
    assert checked.returncode in (0, 1), checked.stderr
    if problem["kind"] == "call" or not accumulated:
        assert (checked.returncode == 0) == verified, checked.stdout
    elif verified:  # stdin property tests are not in the schema: check can only confirm the public part
        assert checked.returncode == 0, checked.stdout


def readme_command_1() -> list[str]:
    """The arguments of README command 1's `solidcoder solve ...`, as a new user pastes it."""
    line = next(line for line in (REPO / "README.md").read_text().splitlines() if line.startswith("bash scripts/"))
    return line.split("&& solidcoder ", 1)[1].split()


def test_readme_command_1_verifies_its_example_with_the_packaged_model_at_default_settings(smollm_gguf, tmp_path,
                                                                                           monkeypatch):
    monkeypatch.delenv("SOLIDCODER_GGUF", raising=False)  # the packaged model, as on a fresh machine
    monkeypatch.delenv("SOLIDCODER_THREADS", raising=False)
    args = readme_command_1()
    assert args[0] == "solve" and all(not arg.startswith("--") for arg in args)  # default settings: no flag
    done = run(*args, "--run-dir", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert not done.stdout.startswith("# UNVERIFIED") and f"def {Path(args[1]).stem}(" in done.stdout
