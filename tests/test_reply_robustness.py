"""No model reply stops or exhausts the host (issue 37), and parsing replies is safe while worker threads parse and
lint (issue 44): the replies go through the scripted server, the CLI runs as a real process, the sandbox is real."""

from __future__ import annotations

import sys
import threading
import time

from bench_support import asked, bench_command, canonical_responder, rows, run_cli
from scripted_server import Received, reply
from test_bench_strategies import run

from solidcoder.parsing import parse_python
from solidcoder.problem import Problem, TestCase
from solidcoder.strategies import make_strategy

# Degenerate small-model output: a function whose return is a few thousand `+` terms (compile() overflows on it).
FLAT = "```python\ndef add(a, b):\n    return " + " + ".join(["a"] * 4000) + "\n```"
# YAML aliases nested 14 levels: a few hundred bytes that yaml.safe_load would expand to billions of nodes.
ALIASES = "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{i}: &l{i} [{', '.join([f'*{p}'] * 8)}]\n" for i, p in enumerate(["a", *[f"l{j}" for j in range(13)]]))
ADD_TXT = "Return the sum of a and b.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n>>> add(-1, 1)\n0\n"


def _flat_for(entry_points: set[str], otherwise):
    def respond(received: Received):
        text = asked(received)
        return reply(FLAT) if any(f"`{ep}`" in text or f"def {ep}(" in text for ep in entry_points) \
            else otherwise(received)

    return respond


def test_solve_answers_a_flat_expression_reply_unverified_in_one_line_not_a_traceback(scripted_server, tmp_path):
    scripted_server.default = reply(FLAT)
    problem = tmp_path / "add.txt"
    problem.write_text(ADD_TXT)
    command = [sys.executable, "-m", "solidcoder", "solve", str(problem), "--run-dir", str(tmp_path / "run"),
               "--model", "openai/scripted-model", "--api-base", scripted_server.url]
    done = run_cli(command, timeout=180)
    assert done.returncode == 1, done.stderr  # unverified: a program was read and failed, nothing crashed
    assert "solidcoder/" not in done.stderr  # no host traceback: the overflow is the program's verdict (plain
    assert "RecursionError" in done.stderr  # Python cannot compile it either), given as the first failure
    assert done.stdout.startswith("# UNVERIFIED") and "\ndef add(a, b):" in done.stdout


def test_a_bench_with_a_flat_expression_reply_finishes_and_a_resumed_run_finishes_too(scripted_server, tmp_path):
    scripted_server.responder = _flat_for({"has_close_elements"}, canonical_responder())
    command = bench_command(scripted_server.url, tmp_path / "run", "--strategy", "solidcoder-routed", limit=3)
    first = run_cli(command)
    assert first.returncode == 0, first.stderr
    done = rows(tmp_path / "run" / "results.jsonl")
    assert len(done) == 3 and not rows(tmp_path / "run" / "errors.jsonl")
    assert [r["passed"] for r in sorted(done, key=lambda r: r["id"])] == [False, True, True]
    again = run_cli(command)  # every reply replayed: nothing left to run, nothing stops it
    assert again.returncode == 0 and len(rows(tmp_path / "run" / "results.jsonl")) == 3


def test_alphacodium_reads_an_alias_bomb_as_an_unreadable_reply_in_well_under_a_second_each(scripted_server,
                                                                                           tmp_path):
    scripted_server.default = reply(ALIASES)
    command = bench_command(scripted_server.url, tmp_path / "run", "--strategy", "alphacodium", "--max-calls", "40",
                            limit=1)
    start = time.monotonic()
    done = run_cli(command)
    assert done.returncode == 0, done.stderr
    unit = rows(tmp_path / "run" / "results.jsonl") + rows(tmp_path / "run" / "errors.jsonl")
    assert len(unit) == 1 and not unit[0].get("passed") and unit[0].get("error_kind") != "internal"
    assert unit[0]["calls"] >= 15  # every stage's three tries read an unreadable reply, and asked again
    assert time.monotonic() - start < 60  # a safe_load of one reply alone would not finish


class _Finalized:
    def __del__(self):
        sum(range(50))


def _churn(stop: threading.Event, errors: list[str]) -> None:
    """A worker thread as the bench's are (they parse and lint), making cyclic garbage with finalizers all the time,
    so the collector runs Python code at arbitrary points, in whichever thread allocates."""
    source = _long_program(True).removeprefix("```python\n").removesuffix("\n```")
    while not stop.is_set():
        junk = [_Finalized() for _ in range(50)]
        for item in junk:
            item.self = item
        del junk
        try:
            parse_python(source)
        except SystemError as exc:
            errors.append(str(exc))


def _problem(i: int) -> Problem:
    return Problem(id=f"add{i}", kind="call", statement=f"Write add(a, b) returning a + b (variant {i}).",
                   entry_point="add", public_tests=[TestCase(kind="call", script="assert add(1, 2) == 3")],
                   hidden_tests=[TestCase(kind="call", call="add(-1, 10)", expected=9)])


def _long_program(correct: bool) -> str:
    helpers = "".join(f"def helper_{k}(xs):\n    return sorted([x * {k} for x in xs if x % 2 == 0])\n\n"
                      for k in range(40))
    body = "a + b" if correct else "a - b"
    return f"```python\n{helpers}def add(a, b):\n    return {body}\n\nassert add(1, 2) == 3\n```"


def test_eight_routed_units_in_flight_with_tier_1_sampling_are_all_judged_while_threads_churn(scripted_server,
                                                                                             sandbox_pool, tmp_path):
    scripted_server.responder = lambda received: reply(_long_program(received.body.get("temperature") != 0.0))
    stop, churn_errors = threading.Event(), []
    churners = [threading.Thread(target=_churn, args=(stop, churn_errors), daemon=True) for _ in range(3)]
    for thread in churners:
        thread.start()
    try:
        results, errors = run(scripted_server, make_strategy("solidcoder-routed"), sandbox_pool, tmp_path,
                              [_problem(i) for i in range(8)], concurrency=8)
    finally:
        stop.set()
    assert errors == [] and len(results) == 8 and churn_errors == []
    assert all(r["passed"] and r["notes"]["tier"] == 1 for r in results)  # tier 0 failed, tier 1 sampled and ranked
