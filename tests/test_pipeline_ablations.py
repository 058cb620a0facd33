"""Each ablation flag changes exactly the stage it names; model errors are retried, and fatal ones end the run as an
infrastructure error with the trajectory so far on disk (scripted server, real client, real sandbox)."""

from __future__ import annotations

import json

from scripted_server import status
from test_pipeline import ADD, CAPPED_ADD, SUM, SUM_CAPPED, SUM_OK, SUM_ORACLE, config

from solidcoder.pipeline import solve

BREAKING = "```python\nassert add(100, 1) == 101, 'cap'\n```"



def steps(tmp_path) -> list[dict]:
    return json.loads((tmp_path / "run" / "trajectory.json").read_text())["steps"]


def test_no_shift_left_uses_the_plain_planning_prompt(router, model, sandbox_pool, tmp_path):
    result = solve(ADD, model, sandbox_pool, config(tmp_path, shift_left=False))
    assert result.verified and router.stages()[0] == "plan" and "shift_left_plan" not in router.stages()


def test_no_sim_makes_no_simulation_calls(router, model, sandbox_pool, tmp_path):
    result = solve(ADD, model, sandbox_pool, config(tmp_path, simulation=False, candidates=2))
    assert result.verified and "simulate" not in router.stages()
    assert len(router.requests("code")) == 1  # a green candidate is enough without a simulation verdict


def test_no_oracle_ignores_failed_assertions(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", BREAKING)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, oracle=False))
    assert result.verified and "a < 100" in result.code  # the wrong value went unnoticed: only crashes count
    assert result.accumulated_tests == [] and "debug" not in router.stages()


def test_no_oracle_still_catches_crashes(router, model, sandbox_pool, tmp_path):
    router.queue("oracle", "```python\nassert add([1], 2) == 3\n```")
    router.queue("debug", "```python\ndef add(a, b):\n    return sum(a) + b if isinstance(a, list) else a + b\n```")
    result = solve(ADD, model, sandbox_pool, config(tmp_path, oracle=False))
    assert result.verified and result.debug_rounds == 1
    [kept] = result.accumulated_tests
    assert kept["crash_only"] is True


def test_no_oracle_on_stdin_runs_no_property_check(router, model, sandbox_pool, tmp_path):
    router.queue("code", SUM_CAPPED).queue("oracle", SUM_ORACLE)
    result = solve(SUM, model, sandbox_pool, config(tmp_path, oracle=False))
    assert result.verified and result.accumulated_tests == []


def test_no_live_judges_generated_tests_by_mental_tracing(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", BREAKING)
    router.queue("oracle_simulate", "With a = 100 the code returns 0, so the assert fails.\nFAILED")
    result = solve(ADD, model, sandbox_pool, config(tmp_path, live=False))
    assert result.verified and result.debug_rounds == 1 and result.accumulated_tests == []
    assert "With a = 100 the code returns 0" in router.prompt("debug")  # the mental trace stands in
    recorded = steps(tmp_path)
    assert not any(s["stage"] in ("live", "trace") for s in recorded)


def test_no_live_passed_trace_means_no_debug(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", BREAKING)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, live=False))
    assert result.verified and "debug" not in router.stages() and "oracle_simulate" in router.stages()


def test_no_defensive_fixes_but_does_not_keep_the_test(router, model, sandbox_pool, tmp_path):
    router.queue("code", CAPPED_ADD).queue("oracle", BREAKING)
    result = solve(ADD, model, sandbox_pool, config(tmp_path, defensive=False))
    assert result.verified and result.debug_rounds == 1 and result.accumulated_tests == []
    [decision] = [s for s in steps(tmp_path) if s["stage"] == "accumulate"]
    assert decision["kept"] is False and decision["suite_size"] == 2


def test_no_defensive_stdin(router, model, sandbox_pool, tmp_path):
    router.queue("code", SUM_CAPPED).queue("oracle", SUM_ORACLE).queue("debug", SUM_OK)
    result = solve(SUM, model, sandbox_pool, config(tmp_path, defensive=False))
    assert result.verified and result.accumulated_tests == [] and result.debug_rounds == 1


def test_zero_oracle_rounds_skip_the_oracle(router, model, sandbox_pool, tmp_path):
    result = solve(ADD, model, sandbox_pool, config(tmp_path, oracle_rounds=0))
    assert result.verified and "oracle" not in router.stages()


def test_transient_server_error_is_retried(router, model, sandbox_pool, tmp_path):
    router.queue("code", status(500, "overloaded"))
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and len(router.requests("code")) == 2


def test_empty_reply_is_asked_again_not_scored(router, model, sandbox_pool, tmp_path):
    router.queue("code", "")
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.verified and len(router.requests("code")) == 2
    assert "empty reply" in [s for s in steps(tmp_path) if s["type"] == "call"][2]["error"]


def test_fatal_model_error_stops_with_the_trajectory_on_disk(router, model, sandbox_pool, tmp_path):
    router.queue("code", status(401, "bad key"))
    result = solve(ADD, model, sandbox_pool, config(tmp_path))
    assert result.status == "infrastructure_error" and not result.verified and result.cause == "model"
    assert "authentication failed" in result.reason and result.code == ""
    saved = json.loads((tmp_path / "run" / "trajectory.json").read_text())
    assert saved["outcome"]["status"] == "infrastructure_error"
    assert [s["stage"] for s in saved["steps"] if s["type"] == "call"] == ["plan", "plan_simulate", "code"]
    assert "authentication" in saved["steps"][-1]["error"] and len(router.requests("code")) == 1
