"""`solve --prerank N` against the scripted server: N samples are pruned and ranked, the best seeds Algorithm 1."""

from __future__ import annotations

import json

from solve_runs import trajectory_file
from stage_router import GOOD, StageRouter
from test_cli_solve import solve

WRONG = "```python\ndef add(a, b):\n    return a - b\n```"
BROKEN = "```python\ndef add(a, b)\n    return a\n```"


def test_samples_are_pruned_ranked_and_the_best_seeds_the_loop(scripted_server, tmp_path):
    router = StageRouter(scripted_server)
    router.queue("strategies/direct", BROKEN, WRONG, GOOD, GOOD)  # the samples' template
    problem = tmp_path / "add.txt"
    problem.write_text("Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n>>> add(-1, 1)\n0\n")
    done = solve(scripted_server, str(problem), "--prerank", "4", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    progress = " ".join(done.stderr.split())  # rich wraps long lines
    assert "4 sampled" in progress and "syntax -1" in progress and "tests:3 -1" in progress
    assert router.seen.count("strategies/direct") == 4
    assert "code" not in router.seen  # the seed passed, so the loop wrote no program of its own
    trajectory = json.loads(trajectory_file(tmp_path / "run").read_text())
    assert trajectory["outcome"]["verified"] and "a + b" in done.stdout
    calls = len(scripted_server.chat_requests())  # the summary counts every call made, sampling included
    assert f"model calls {calls} (1 of them sampling)" in progress  # four choices of one request
    assert scripted_server.chat_requests()[0].body["n"] == 4


def test_a_server_that_ignores_n_is_asked_again_until_every_sample_is_drawn(scripted_server, tmp_path):
    scripted_server.max_choices = 1
    router = StageRouter(scripted_server)
    router.queue("strategies/direct", BROKEN, WRONG, GOOD)
    problem = tmp_path / "add.txt"
    problem.write_text("Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n")
    done = solve(scripted_server, str(problem), "--prerank", "3", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    sampling = [r.body for r in scripted_server.chat_requests() if r.body.get("temperature") == 0.8]
    assert [body.get("n") for body in sampling] == [3, 2, None]  # one choice came back each time
    assert "3 sampled" in " ".join(done.stderr.split())


def test_a_selector_other_than_the_majority_needs_prerank(scripted_server, tmp_path):
    problem = tmp_path / "add.txt"
    problem.write_text("Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n")
    done = solve(scripted_server, str(problem), "--selector", "agreement", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 2 and "--prerank" in done.stderr and scripted_server.chat_requests() == []


def test_prerank_by_agreement_seeds_the_loop_with_the_program_the_generated_tests_pass(scripted_server, tmp_path):
    zero_bug = "```python\ndef add(a, b):\n    return a + b if a else 0\n```"  # passes add(1, 2), fails add(0, 5)
    router = StageRouter(scripted_server)
    router.queue("strategies/direct", zero_bug, zero_bug, GOOD)  # the majority is wrong
    router.queue("refinements/generated_tests", '{"tests": [{"input": "add(0, 5)", "output": "5"}]}')
    problem = tmp_path / "add.txt"
    problem.write_text("Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n")
    done = solve(scripted_server, str(problem), "--prerank", "3", "--selector", "agreement", "--strategy",
                 "solidcoder+", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    trajectory = json.loads(trajectory_file(tmp_path / "run").read_text())
    assert trajectory["prerank"]["selector"] == "agreement"
    assert router.seen[:4] == ["strategies/direct"] * 3 + ["refinements/generated_tests"]  # three choices, one call
    assert "code" not in router.seen  # the seed passed, so the loop wrote no program of its own
    assert "if a else 0" not in trajectory["outcome"]["code"]
