"""The S.O.L.I.D. loop against the scripted OpenAI-compatible server (real client) and the real sandbox: every branch
of the loop, the judge, defensive accumulation with its monotonic rule, stdin property tests, and the rule for
`verified` (at least one test executed, every executed test passed)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from stage_router import CORRECT_ADD

from solidcoder.models.base import Budget
from solidcoder.pipeline import SolveConfig, asolve, solve
from solidcoder.problem import Problem, TestCase
from solidcoder.stages.live import Evaluation, Outcome

ADD = Problem("add", "call", "Write add(a, b) returning a + b for integers.", entry_point="add",
              public_tests=[TestCase(kind="call", call="add(1, 2)", expected=3),
                            TestCase(kind="call", script="assert add(-1, 1) == 0")])
SUM = Problem("sum", "stdio", "Read two integers a and b on one line; print a + b.",
              public_tests=[TestCase(kind="stdio", stdin="1 2\n", expected_stdout="3\n")])
WRONG_ADD = "```python\ndef add(a, b):\n    total = a - b\n    return total\n```"
CAPPED_ADD = "```python\ndef add(a, b):\n    return a + b if a < 100 else 0\n```"
CAPPED_B_ADD = "```python\ndef add(a, b):\n    return a + b if b < 100 else 0\n```"
SUM_CAPPED = "```python\na, b = map(int, input().split())\nprint(a + b if a < 100 else 0)\n```"
SUM_OK = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
SUM_ORACLE = ("Weak assumption: large a.\n```input\n100 1\n```\n```python\ndef check(stdin, stdout):\n"
              "    a, b = map(int, stdin.split())\n    assert int(stdout) == a + b, 'not the sum'\n```")



def config(tmp_path, **changes) -> SolveConfig:
    base = {"plans": 2, "debug_rounds": 2, "oracle_rounds": 1, "candidates": 1, "run_dir": tmp_path / "run"}
    return SolveConfig(**{**base, **changes})


def saved(tmp_path) -> dict:
    return json.loads((tmp_path / "run" / "trajectory.json").read_text())


def test_happy_path_runs_every_stage_and_records_usage(router, model, sandbox_pool, tmp_path):
    events = []
    result = solve(ADD, model, sandbox_pool, config(tmp_path), on_event=events.append)
    assert result.verified and result.status == "verified"
    assert "a + b" in result.code and result.plans_used == 1 and result.debug_rounds == 0
    assert router.stages() == ["shift_left_plan", "plan_simulate", "code", "simulate", "oracle", "oracle_judge"]
    assert (result.usage.calls, result.usage.prompt_tokens, result.usage.completion_tokens) == (6, 66, 78)
    trajectory = saved(tmp_path)
    assert trajectory["outcome"]["status"] == "verified" and trajectory["usage"]["calls"] == 6
    calls = [s for s in trajectory["steps"] if s["type"] == "call"]
    assert all(c["messages"] and c["reply"] and c["prompt_tokens"] == 11 for c in calls)
    assert any(s["stage"] == "live" and s["verdict"] == "passed" for s in trajectory["steps"])
    assert {e.stage for e in events} >= {"plan", "code", "oracle_judge", "live", "done"}


def test_failing_candidate_is_debugged_with_real_trace_values(router, model, sandbox_pool, tmp_path):
    router.queue("code", WRONG_ADD)
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.debug_rounds == 1
    prompt = router.prompt("debug")
    assert "add(1, 2)" in prompt and "3" in prompt and "-1" in prompt
    assert "total = -1" in prompt  # the tracer's real final value of the candidate's variable
    assert any(s["stage"] == "trace" for s in saved(tmp_path)["steps"])


def test_replan_gets_failed_plans_and_a_temperature_above_zero(router, model, sandbox_pool, tmp_path):
    router.queue("code", WRONG_ADD).queue("debug", WRONG_ADD)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, debug_rounds=1))
    assert result.verified and result.plans_used == 2
    plans = router.requests("shift_left_plan")
    assert len(plans) == 2 and plans[1].body["temperature"] == 0.8
    assert "earlier plans did not lead" in router.prompt("shift_left_plan") and "How it failed" in router.prompt(
        "shift_left_plan")
    assert "How it failed" not in router.prompt("shift_left_plan", 0)


def test_k_candidates_keep_the_one_that_passes(router, model, sandbox_pool, tmp_path):
    router.queue("code", WRONG_ADD, CORRECT_ADD)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, candidates=3))
    assert result.verified and result.debug_rounds == 0
    codes = router.requests("code")
    assert len(codes) == 2 and codes[1].body["temperature"] == 0.8


def test_simulation_failed_is_only_a_filter(router, model, sandbox_pool, tmp_path):
    router.queue("simulate", "Wrong.\nFAILED", "Wrong.\nFAILED")
    result = solve(ADD, model, sandbox_pool, config(tmp_path, candidates=2))
    assert result.verified  # live execution has the final word
    assert len(router.requests("code")) == 2  # FAILED made it draw another candidate


def test_budget_exhausted_returns_best_candidate_unverified(router, model, sandbox_pool, tmp_path):
    model.budget = Budget()
    model.budget.config.max_calls = 4
    router.defaults["code"] = WRONG_ADD
    router.defaults["debug"] = WRONG_ADD
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.status == "unverified" and not result.verified and result.cause == "budget"
    assert "a - b" in result.code and saved(tmp_path)["outcome"]["status"] == "unverified"


def test_loop_exhausted_is_unverified(router, model, sandbox_pool, tmp_path):
    router.defaults["code"] = WRONG_ADD
    router.defaults["debug"] = WRONG_ADD
    result = solve(ADD, model, sandbox_pool, config(tmp_path, plans=2, debug_rounds=1))
    assert result.status == "unverified" and "2 plan(s)" in result.reason and result.cause is None
    assert result.plans_used == 2 and result.debug_rounds == 2


def test_oracle_test_that_breaks_the_code_is_kept_and_fixed(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", "```python\nassert add(100, 1) == 101, 'cap'\n```")
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.debug_rounds == 1
    assert [t["source"] for t in result.accumulated_tests] == ["assert add(100, 1) == 101, 'cap'\n"]
    assert "add(100, 1)" in router.prompt("debug")


def test_judge_rejects_an_invalid_test(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", "```python\nassert add(100, 1) == 7\n```")
    router.queue("oracle_judge", "The expected value is wrong.\nINVALID")
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.accumulated_tests == [] and "debug" not in router.stages()
    assert not any(s["stage"] == "live" for s in saved(tmp_path)["steps"])


def test_malformed_oracle_reply_is_dropped_without_judging(router, model, sandbox_pool, tmp_path):
    router.queue("oracle", "I think it is fine.")
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and "oracle_judge" not in router.stages()


def test_fix_that_regresses_an_accumulated_test_is_rejected(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD)
    router.queue("oracle", "```python\nassert add(100, 1) == 101\n```", "```python\nassert add(1, 100) == 101\n```")
    router.queue("debug", CAPPED_B_ADD, CAPPED_ADD, CORRECT_ADD)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, oracle_rounds=2, debug_rounds=3))
    assert result.verified and result.debug_rounds == 3 and len(result.accumulated_tests) == 2
    decisions = [s for s in saved(tmp_path)["steps"] if s["stage"] == "debug" and s["type"] == "decision"]
    assert [d["accepted"] for d in decisions] == [True, False, True]
    assert decisions[1]["regressed"] == ["generated-1"] and "regression" in decisions[1]["reason"]


def test_stdin_problem_property_test_is_accumulated_and_fixed(router, model, sandbox_pool, tmp_path):
    router.queue("code", SUM_CAPPED).queue("oracle", SUM_ORACLE).queue("debug", "Fixed.\n" + SUM_OK)
    result = solve(SUM, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.code.strip().endswith("print(a + b)")
    [kept] = result.accumulated_tests
    assert kept["stdin"] == "100 1\n" and "def check(stdin, stdout)" in kept["source"]
    live = [s for s in saved(tmp_path)["steps"] if s["stage"] == "live"]
    assert live[0]["verdict"] == "failed" and "property check failed" in live[0]["outcomes"][0]["detail"]
    prompt = router.prompt("debug")
    assert "100 1" in prompt and "def check" in prompt and "a = 100" in prompt  # real trace on the test's stdin
    assert "stdin" in router.prompt("oracle")


def test_stdin_property_test_passing_program_is_not_kept(router, model, sandbox_pool, tmp_path):
    router.queue("code", SUM_OK).queue("oracle", SUM_ORACLE)
    result = solve(SUM, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.accumulated_tests == [] and "debug" not in router.stages()


def test_starter_code_missing_from_the_statement_is_shown(router, model, sandbox_pool, tmp_path):
    problem = replace(ADD, statement="Add two integers.", starter_code="def add(a: int, b: int) -> int:\n")
    assert solve(problem, model, sandbox_pool, config(tmp_path)).verified
    assert "def add(a: int, b: int) -> int:" in router.prompt("code")


def test_asolve_runs_problems_concurrently(router, model, sandbox_pool, tmp_path):
    async def both():
        return await asyncio.gather(asolve(ADD, model, sandbox_pool, config(tmp_path / "a")),
                                    asolve(SUM, model, sandbox_pool, config(tmp_path / "b", oracle_rounds=0)))

    first, second = asyncio.run(both())
    assert first.verified and not second.verified  # the default code reply is a function, not a stdin program
    assert first.usage.calls + second.usage.calls == len(router.stages())


def test_a_reply_without_code_is_never_green_even_without_tests(router, model, sandbox_pool, tmp_path):
    router.queue("code", "I cannot write this.", "```python\ndef add(a, b:\n```")
    no_tests = replace(ADD, public_tests=[])
    result = solve(no_tests, model, sandbox_pool, config(tmp_path, candidates=2, oracle_rounds=0))
    assert result.debug_rounds == 1 and "a + b" in result.code
    assert "SyntaxError" in json.dumps(saved(tmp_path)["steps"])
    assert "the reply held no code" in router.prompt("debug")


def test_revised_plan_from_simulation_replaces_the_plan(router, model, sandbox_pool, tmp_path):
    router.queue("shift_left_plan", "1. Return a - b.")
    router.queue("plan_simulate", "On 1 2 it gives -1.\nCorrected plan: 1. Return a + b.\nVERDICT: REVISED")
    assert solve(ADD, model, sandbox_pool, config(tmp_path)).verified
    assert "Corrected plan: 1. Return a + b." in router.prompt("code") and "Return a - b." not in router.prompt("code")


def test_a_generated_test_cannot_shadow_the_candidate(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD)
    router.queue("oracle", "```python\ndef add(a, b):\n    return a + b\n\nassert add(100, 1) == 101\n```")
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and result.debug_rounds == 1  # the test ran against the capped candidate, not its copy
    assert [t["source"] for t in result.accumulated_tests] == ["assert add(100, 1) == 101\n"]


def test_after_a_rejected_fix_the_next_round_shows_the_next_failing_test(router, model, sandbox_pool, tmp_path):
    router.queue("code", WRONG_ADD).queue("debug", WRONG_ADD)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, debug_rounds=2))
    assert result.verified and result.debug_rounds == 2
    assert "add(1, 2)" in router.prompt("debug", 0) and "add(-1, 1) == 0" in router.prompt("debug", 1)


@pytest.mark.parametrize("passes, verified", [([], False), ([True], True), ([True, True], True), ([True, False], False),
                                              ([False], False)])
def test_verified_means_some_test_ran_and_every_one_passed(passes, verified):
    outcomes = [Outcome(f"public-{i}", passed, "pass" if passed else "fail") for i, passed in enumerate(passes)]
    assert Evaluation("print(1)", outcomes).verified is verified


def test_no_executed_test_is_unverified_saying_no_tests_ran(router, model, sandbox_pool, tmp_path):
    router.defaults["code"] = SUM_OK
    result = solve(replace(SUM, public_tests=[]), model, sandbox_pool, config(tmp_path))
    assert (result.status, result.verified, result.reason.split(":")[0]) == ("unverified", False, "no tests ran")


def test_no_executed_test_ends_the_run_without_replanning(router, model, sandbox_pool, tmp_path):
    router.defaults["code"] = SUM_OK
    assert solve(replace(SUM, public_tests=[]), model, sandbox_pool, config(tmp_path)).plans_used == 1


def test_a_passed_generated_check_is_evidence(router, model, sandbox_pool, tmp_path):
    router.queue("code", SUM_OK).queue("oracle", SUM_ORACLE)
    result = solve(replace(SUM, public_tests=[]), model, sandbox_pool, config(tmp_path))
    assert result.verified and result.reason == "passes all 1 executed tests (1 generated)"


def test_a_crash_only_test_is_no_evidence(router, model, sandbox_pool, tmp_path):
    result = solve(replace(ADD, public_tests=[]), model, sandbox_pool, config(tmp_path, oracle=False))
    assert not result.verified and result.reason.startswith("no tests ran")
