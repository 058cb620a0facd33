"""`--strategy solidcoder` is the paper's Algorithm 1: the order of its stages and its call count, per scenario,
and each ablation removing exactly its component. A scripted OpenAI-compatible server answers each stage from
its own queue (recognised by the template name the request carries); the sandbox runs every test for real."""

from __future__ import annotations

import sys

import pytest
from stage_router import BAD, GOOD, STAGE_OF_TEMPLATE, StageRouter, template_of
from test_bench_strategies import ADD, run

from solidcoder.stages.base import extract_code
from solidcoder.store import read_rows
from solidcoder.strategies import make_strategy

ZERO_BUG = "```python\ndef add(a, b):\n    return a + b if a else 0\n```"  # passes add(1, 2), fails add(0, 5)
ZERO_TEST = "Weak assumption: a zero argument.\n```python\nassert add(0, 5) == 5, 'zero'\n```"


def solved(server, sandbox_pool, tmp_path, name="solidcoder"):
    results, errors = run(server, make_strategy(name), sandbox_pool, tmp_path)
    assert errors == []
    return results[0]


def model_stages(notes: dict) -> list[str]:
    return [s for s in notes["stages"] if s not in ("execute", "passes_all")]


def test_right_at_once(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4, 'sum'\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "passes_all"]
    assert row["passed"] and row["notes"]["accepted"] and router.seen == model_stages(row["notes"])
    assert row["notes"]["verified"]  # the public test and the red-team test ran and passed


def test_a_failing_oracle_test_is_kept_and_the_fix_replaces_the_code(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "fix", "red_team", "judge", "execute", "passes_all"]
    assert row["passed"] and row["notes"]["kept_tests"] == 1


def test_a_passing_oracle_test_ends_the_rounds_then_debugging_fixes_the_public_test(scripted_server, sandbox_pool,
                                                                                    tmp_path):
    StageRouter(scripted_server, code=BAD, red_team="```python\nassert add(0, 0) == 0, 'zero'\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "judge", "execute",
                                      "passes_all", "debug", "passes_all"]
    assert row["passed"]


def test_always_wrong_spends_exactly_the_calls_algorithm_1_implies(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=BAD, fix=BAD, debug=BAD)
    row = solved(scripted_server, sandbox_pool, tmp_path)
    p, d, a = 5, 5, 3
    planning, code, simulation, per_round = 2, 1, 1, 3  # plan + plan_check; red_team + judge + fix
    assert row["calls"] == p * (planning + code + simulation + a * per_round + d) == 90
    assert not row["passed"] and row["code"] == extract_code(BAD)  # the last S


def test_a_plan_that_fails_its_hand_check_is_refined_once(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server).queue("plan_check", "Wrong on the sample.\nVERDICT: INCORRECT")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["stages"][:4] == ["plan", "plan_check", "plan_refine", "code"]


def test_a_rejected_oracle_test_is_not_executed_and_the_next_round_tries_again(scripted_server, sandbox_pool,
                                                                               tmp_path):
    StageRouter(scripted_server).queue("judge", "It asserts a wrong value.\nINVALID")
    stages = solved(scripted_server, sandbox_pool, tmp_path)["notes"]["stages"]
    assert stages[4:9] == ["red_team", "judge", "red_team", "judge", "execute"]


def test_every_call_is_greedy_with_the_papers_top_p(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server)
    solved(scripted_server, sandbox_pool, tmp_path)
    assert {(r.body.get("temperature"), r.body.get("top_p")) for r in scripted_server.chat_requests()} == {(0.0, 0.95)}


def test_the_paper_templates_are_used(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server)
    solved(scripted_server, sandbox_pool, tmp_path)
    first = scripted_server.chat_requests()[0].body["messages"][-1]["content"]
    assert "exactly three edge cases" in first and ADD.statement in first


# ---------------------------------------------------------------- ablations: each removes exactly its component


def test_without_shift_left_the_plan_names_no_edge_cases(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_shift_left")
    first = scripted_server.chat_requests()[0].body["messages"][-1]["content"]
    assert "edge case" not in first and "Write a step-by-step plan" in first
    assert row["notes"]["stages"][:3] == ["plan", "plan_check", "code"]


def test_without_simulation_the_program_is_not_traced(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_simulation")
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "red_team", "judge", "execute", "passes_all"]


def test_without_oracle_tests_are_unjudged_and_only_a_crash_fails_them(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG)  # the zero test's assertion fails, but nothing crashes
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_oracle")
    assert row["notes"]["stages"] == ["plan", "plan_check", "code", "simulate", "red_team", "execute", "passes_all"]
    assert row["notes"]["kept_tests"] == 0


def test_without_live_the_models_trace_decides_instead_of_an_execution(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server).queue("mental_execute", "It fails.\nFAILED")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_live")
    assert row["notes"]["stages"][4:9] == ["red_team", "judge", "mental_execute", "fix", "red_team"]
    assert "execute" not in row["notes"]["stages"]


def test_without_defensive_a_failing_test_is_fixed_but_not_kept(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder_no_defensive")
    assert "fix" in row["notes"]["stages"] and row["notes"]["kept_tests"] == 0


def test_an_unknown_ablation_is_bad_input():
    from solidcoder.errors import BadInput

    with pytest.raises(BadInput, match="solidcoder_no_oracle"):
        make_strategy("solidcoder_no_brain")


# ---------------------------------------------------------------- refinements: named options, each off in the paper


def calls_by_stage(server) -> list[tuple[str, float]]:
    return [(STAGE_OF_TEMPLATE.get(template_of(r), "?"), r.body.get("temperature")) for r in server.chat_requests()]


def test_candidates_k_writes_k_programs_per_plan_and_keeps_the_one_passing_most(scripted_server, sandbox_pool,
                                                                                tmp_path):
    StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```").queue("code", BAD, GOOD, BAD)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:candidates=3")
    assert [t for s, t in calls_by_stage(scripted_server) if s == "code"] == [0.0, 0.8, 0.8]
    assert row["passed"] and row["notes"]["accepted"] and row["calls"] == 2 + 3 + 1 + 2  # plan, K codes, [I], O


def test_monotonic_fixes_keep_the_program_when_a_fix_loses_a_passed_test(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG, fix=BAD, debug=BAD)
    paper = solved(scripted_server, sandbox_pool, tmp_path / "paper")
    monotonic = solved(scripted_server, sandbox_pool, tmp_path / "monotonic", "solidcoder:monotonic")
    assert paper["code"] == extract_code(BAD)  # the paper replaces S unconditionally
    assert monotonic["code"] == extract_code(ZERO_BUG) and "compare" in monotonic["notes"]["stages"]
    assert monotonic["calls"] == paper["calls"] == 90  # the same model calls; the comparisons are executions


def test_best_answers_with_the_program_that_passes_most_not_the_last(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG, fix=BAD, debug=BAD)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:best")
    assert row["code"] == extract_code(ZERO_BUG) and row["notes"]["stages"][-1] == "choose_best"
    assert not row["notes"]["accepted"] and row["calls"] == 90


def test_oracle_gating_breaks_assumptions_only_once_the_public_tests_pass(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=BAD, fix=BAD, debug=BAD)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:oracle_gating")
    assert "red_team" not in row["notes"]["stages"]
    assert row["calls"] == 5 * (2 + 1 + 1 + 5) == 45  # p x (planning + code + [I] + d): no assumption breaking


def test_trace_feedback_shows_the_real_variable_values_in_the_debug_prompt(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, code=BAD, fix=BAD).queue("debug", GOOD)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:trace_feedback")
    debug = next(r for r in scripted_server.chat_requests() if template_of(r) == "paper/debug")
    prompt = debug.body["messages"][-1]["content"]
    assert "a real trace" in prompt and "a = 1" in prompt and "b = 2" in prompt
    assert row["passed"] and "trace" in row["notes"]["stages"] and router.seen.count("debug") == 1


def test_the_paper_setting_shows_no_trace(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=BAD, fix=BAD).queue("debug", GOOD)
    solved(scripted_server, sandbox_pool, tmp_path)
    debug = next(r for r in scripted_server.chat_requests() if template_of(r) == "paper/debug")
    assert "a real trace" not in debug.body["messages"][-1]["content"]


@pytest.mark.parametrize("name", ["solidcoder:brain", "solidcoder:candidates", "solidcoder:monotonic=1",
                                  "solidcoder:candidates=0"])
def test_an_unknown_or_malformed_refinement_is_bad_input(name):
    from solidcoder.errors import BadInput

    with pytest.raises(BadInput, match="refinement"):
        make_strategy(name)


def test_refinements_combine_with_an_ablation():
    strategy = make_strategy("solidcoder_no_oracle:candidates=2,best")
    assert (strategy.config.oracle, strategy.config.candidates, strategy.config.best) == (False, 2, True)


def test_pipeline_roles_get_their_own_models_on_algorithm_1(scripted_server, tmp_path):
    """`--model M --model judge=J`: the judge's prompts go to J, every other stage's to M."""
    from bench_support import run_cli
    from test_bench_strategies import dump_problems

    StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4\n```")
    dump_problems([ADD], tmp_path / "add.jsonl")
    done = run_cli([sys.executable, "-m", "solidcoder", "bench", "--dataset", "humaneval", "--data-file",
                    str(tmp_path / "add.jsonl"), "--strategy", "solidcoder", "--model", "openai/coder-model",
                    "--model", "judge=openai/judge-model", "--api-base", scripted_server.url,
                    "--run-dir", str(tmp_path / "run")])
    assert done.returncode == 0, done.stderr
    by_model = {(template_of(r), r.body["model"]) for r in scripted_server.chat_requests()}
    assert {model for template, model in by_model if template == "paper/judge"} == {"judge-model"}
    assert {model for template, model in by_model if template != "paper/judge"} == {"coder-model"}


ZERO_JSON = '{"assumption": "a zero\nargument", "call": "add(0, 5)", "property": "result == 5"}'  # a raw newline
SUM_JSON = 'Here it is: {"assumption": "sums", "call": "add(3, 4)", "property": "result == 7"}'


def test_structured_oracle_asks_for_json_fields_and_assembles_the_test(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_JSON, SUM_JSON)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:structured_oracle")
    red_team = [r for r in scripted_server.chat_requests() if template_of(r) == "paper/red_team_structured"]
    assert red_team and red_team[0].body["response_format"]["json_schema"]["schema"]["required"] == [
        "assumption", "call", "property"]
    assert row["notes"]["oracle_rounds"] == ["executed, failed", "executed, passed"]
    assert row["passed"] and row["notes"]["kept_tests"] == 1


@pytest.mark.parametrize("verdict", ["Wrong value.\nINVALID", "INVALID. Wrong value.", "INVALID: Wrong value."])
def test_every_oracle_rounds_outcome_is_recorded(verdict, scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, code=ZERO_BUG, fix=ZERO_BUG)
    router.queue("red_team", "no test here", ZERO_TEST, ZERO_TEST).queue("judge", verdict)
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["oracle_rounds"][:3] == ["malformed", "rejected", "executed, failed"]
    assert row["notes"]["judge_rejections"] == ["Wrong value."]


@pytest.mark.parametrize(("reply", "script"), [
    ('{"assumption": "x", "call": "add(0, 5)", "property": "result == 5"}',
     "result = add(0, 5)\nassert result == 5, 'x'\n"),
    ('{"assumption": "multi\nline", "call": "add(1, 1)", "property": "result > 1"}',
     "result = add(1, 1)\nassert result > 1, 'multi\\nline'\n"),
])
def test_a_structured_reply_becomes_a_call_test(reply, script):
    from solidcoder.stages.oracle import parse_structured_test

    assert parse_structured_test(reply, "call", "add").source == script


@pytest.mark.parametrize("reply", [
    '{"assumption": "x", "call": "add(0, 5", "property": "result == 5"}',  # not an expression
    '{"assumption": "x", "call": "len([1])", "property": "result == 1"}',  # does not call the entry point
    '{"assumption": "x", "call": "add(0, 5)", "property": "import os"}',  # not an expression
    "no JSON and no fenced test",
])
def test_a_malformed_structured_reply_gives_no_test(reply):
    from solidcoder.stages.oracle import parse_structured_test

    assert parse_structured_test(reply, "call", "add") is None


def test_a_free_text_test_is_still_read_when_the_json_is_missing():
    from solidcoder.stages.oracle import parse_structured_test

    assert parse_structured_test(ZERO_TEST, "call", "add").source == "assert add(0, 5) == 5, 'zero'\n"


def test_a_structured_stdin_reply_becomes_a_stdio_test():
    from solidcoder.stages.oracle import parse_structured_test

    test = parse_structured_test('{"assumption": "x", "stdin": "3 4", "property": "stdout.strip() == \'7\'"}',
                                 "stdio", "")
    assert (test.kind, test.stdin) == ("stdio", "3 4\n") and "def check(stdin, stdout):" in test.source


WRONG_TEST = "Weak assumption: zero.\n```python\nassert add(0, 5) == 6, 'zero'\n```"  # a wrong expectation


def test_a_kept_test_that_rejects_a_correct_answer_is_counted_as_a_false_alarm(scripted_server, sandbox_pool,
                                                                               tmp_path):
    from solidcoder.bench.metrics import summarize
    from solidcoder.bench.report import precision_lines
    from solidcoder.store import ResultRow

    StageRouter(scripted_server).queue("red_team", WRONG_TEST)
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["passed"] and not row["notes"]["accepted"]  # the hidden tests accept what the wrong test rejects
    assert (row["kept_tests"], row["false_alarms"]) == (1, 1)
    assert precision_lines(summarize([ResultRow.from_dict(row)], [])) == [
        "t solidcoder (m): 1 false alarms of 1 kept tests on answers the hidden tests accept (100%)"]


def test_a_kept_test_the_correct_answer_passes_is_no_false_alarm(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    row = solved(scripted_server, sandbox_pool, tmp_path)
    assert row["passed"] and (row["kept_tests"], row["false_alarms"]) == (1, 0)


def test_stage_caps_cap_the_replies_that_are_not_programs(scripted_server, sandbox_pool, tmp_path):
    from solidcoder.strategies.paper_settings import STAGE_TOKENS

    def caps(name: str, run_dir) -> dict:
        router = StageRouter(scripted_server, red_team="```python\nassert add(2, 2) == 4, 'sum'\n```")
        solved(scripted_server, sandbox_pool, run_dir, name)
        return {stage: router.requests(stage)[-1].body.get("max_tokens") for stage in ("plan", "judge", "code")}

    plain, capped = caps("solidcoder", tmp_path / "plain"), caps("solidcoder:stage_caps", tmp_path / "capped")
    assert capped == {"plan": STAGE_TOKENS["plan"], "judge": STAGE_TOKENS["judge"], "code": plain["code"]}
    assert plain["plan"] != STAGE_TOKENS["plan"]


def test_evidence_judge_skips_the_judge_prompt_only_when_the_evidence_could_check(scripted_server, sandbox_pool,
                                                                                   tmp_path):
    literal = "```python\nassert add(2, 2) == 4, 'sum'\n```"
    computed = "```python\nx = 2\nassert add(x, x) == 4, 'sum'\n```"  # no literal arguments: nothing to compare
    StageRouter(scripted_server, red_team=literal)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:evidence_judge")
    assert "judge" not in row["notes"]["stages"] and row["notes"]["oracle_rounds"] == ["executed, passed"]
    StageRouter(scripted_server, red_team=computed)
    row = solved(scripted_server, sandbox_pool, tmp_path / "2", "solidcoder:evidence_judge")
    assert "judge" in row["notes"]["stages"] and row["notes"]["oracle_rounds"] == ["executed, passed"]


SELF_TESTED = "```python\ndef add(a, b):\n    return a + b\n\nassert add(2, 2) == 5, 'the model was wrong'\n```"


def test_strip_self_tests_accepts_a_right_program_whose_own_assert_is_wrong(scripted_server, sandbox_pool, tmp_path):
    red_team = "```python\nassert add(2, 2) == 4, 'sum'\n```"
    StageRouter(scripted_server, code=SELF_TESTED, red_team=red_team)
    stripped = solved(scripted_server, sandbox_pool, tmp_path / "stripped", "solidcoder:strip_self_tests")
    assert stripped["passed"] and stripped["notes"]["accepted"] and "debug" not in stripped["notes"]["stages"]
    StageRouter(scripted_server, code=SELF_TESTED, red_team=red_team, debug=SELF_TESTED, fix=SELF_TESTED)
    paper = solved(scripted_server, sandbox_pool, tmp_path / "paper")  # the paper reads the program as written
    assert not paper["passed"] and not paper["notes"]["accepted"] and "debug" in paper["notes"]["stages"]


def test_a_refinement_added_later_leaves_the_configuration_key_of_runs_without_it_alone():
    assert "strip_self_tests" not in make_strategy("solidcoder").settings()
    assert make_strategy("solidcoder+").settings()["strip_self_tests"] is True


def test_compact_oracle_asks_its_own_template_and_leaves_the_papers_key_alone(scripted_server, sandbox_pool,
                                                                              tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_JSON, SUM_JSON)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:compact_oracle")
    templates = [template_of(r) for r in scripted_server.chat_requests()]
    assert "refinements/red_team_compact" in templates and "paper/red_team_structured" not in templates
    assert row["notes"]["oracle_rounds"] == ["executed, failed", "executed, passed"] and row["passed"]
    assert "refinements/red_team_compact" not in make_strategy("solidcoder").templates
    assert "compact_oracle" not in make_strategy("solidcoder").settings()
    assert "refinements/red_team_compact" in make_strategy("solidcoder+").templates


def test_trace_feedback_blocks_shows_ldbs_executed_blocks_in_the_debug_prompt(scripted_server, sandbox_pool,
                                                                             tmp_path):
    router = StageRouter(scripted_server, code=BAD, fix=BAD).queue("debug", GOOD)
    row = solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:trace_feedback=blocks")
    debug = next(r for r in scripted_server.chat_requests() if template_of(r) == "paper/debug")
    prompt = debug.body["messages"][-1]["content"]
    assert "[BLOCK-0]\n    # a=1\tb=2\n    return a - b\n    # a=1\tb=2\t_ret=-1" in prompt  # add(1, 2), exactly
    assert row["passed"] and "trace" in row["notes"]["stages"] and router.seen.count("debug") == 1
    assert make_strategy("solidcoder:trace_feedback=blocks").settings()["trace_feedback"] == "blocks"
    assert make_strategy("solidcoder:trace_feedback=values").settings()["trace_feedback"] is True


def executions(tmp_path) -> list[dict]:
    return [row for row in read_rows(tmp_path / "run" / "executions.jsonl") if row["purpose"] != "hidden"]


def test_an_accumulated_test_is_recorded_as_oracle_when_found_and_as_kept_on_its_later_runs(scripted_server,
                                                                                             sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=ZERO_BUG).queue("red_team", ZERO_TEST, "```python\nassert add(3, 4) == 7\n```")
    solved(scripted_server, sandbox_pool, tmp_path)
    kinds = [(row["purpose"], [(t["kind"], t["status"]) for t in row["tests"]]) for row in executions(tmp_path)]
    assert kinds == [("strategy", [("oracle", "fail")]), ("strategy", [("oracle", "pass")]),
                     ("strategy", [("public", "pass"), ("kept", "pass")]), ("kept", [("kept", "pass")])], kinds

def test_the_trace_shown_to_the_debugger_is_recorded_with_the_traced_input(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, code=BAD, fix=BAD).queue("debug", GOOD)
    solved(scripted_server, sandbox_pool, tmp_path, "solidcoder:trace_feedback")
    debug = next(r for r in scripted_server.chat_requests() if template_of(r) == "paper/debug")
    [traced] = [row for row in executions(tmp_path) if row["purpose"] == "trace"]
    assert traced["tests"][0]["status"] == "values" and traced["tests"][0]["input"] == "add(1, 2)"
    assert traced["trace"] and traced["trace"] in debug.body["messages"][-1]["content"]
    assert "a = 1" in traced["trace"] and "return a - b" in traced["program"]

