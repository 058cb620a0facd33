"""`solidcoder-routed`: tier 0 (a direct program, public tests, one oracle round), tier 1 (ranked samples, the same
check), tier 2 (the full loop, seeded with the failing tests found so far), in order, on the scripted server."""

from __future__ import annotations

import pytest
from scripted_server import status
from stage_router import BAD, GOOD, StageRouter
from test_algorithm1 import ZERO_BUG, ZERO_TEST
from test_bench_strategies import ADD, run

from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase
from solidcoder.strategies import make_strategy

SUM_TEST = "```python\nassert add(2, 2) == 4, 'sum'\n```"


def routed(server, sandbox_pool, tmp_path, problems=(ADD,), strategy="solidcoder-routed:oracle=program,max_tier=2"):
    """One routed run; by default routed v1 with a red-team round on each program checked (`oracle=program`)."""
    results, errors = run(server, make_strategy(strategy), sandbox_pool, tmp_path, problems)
    assert errors == []
    return results[0]


def test_tier_0_accepts_a_direct_program_that_passes_the_public_tests_and_an_oracle_round(scripted_server,
                                                                                          sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path)
    assert row["passed"] and row["notes"]["tier"] == 0 and row["notes"]["verified"]
    assert router.seen == ["strategies/direct", "red_team", "judge"]
    assert [t["tier"] for t in row["notes"]["tiers"]] == [0] and row["notes"]["tiers"][0]["calls"] == 3
    assert {r.body.get("temperature") for r in scripted_server.chat_requests()} == {0.0}  # greedy, as the paper


def test_routing_takes_each_tier_in_order_and_seeds_the_full_loop_with_the_failing_tests(scripted_server,
                                                                                         sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, code=GOOD).queue("strategies/direct", ZERO_BUG, *[BAD] * 5)
    router.queue("red_team", ZERO_TEST)  # breaks the tier-0 program; the samples all fail the public test
    row = routed(scripted_server, sandbox_pool, tmp_path)
    notes = row["notes"]
    assert row["passed"] and notes["tier"] == 2 and [t["tier"] for t in notes["tiers"]] == [0, 1, 2]
    assert router.seen[:8] == ["strategies/direct", "red_team", "judge", *["strategies/direct"] * 5]
    assert router.seen[8] == "plan" and notes["kept"][0]["source"].startswith("assert add(0, 5) == 5")
    assert sum(t["calls"] for t in notes["tiers"]) == row["calls"] == len(scripted_server.chat_requests())
    sampled = scripted_server.chat_requests()[3].body
    assert (sampled.get("temperature"), sampled.get("n")) == (0.8, 5)  # tier 1 samples on purpose, in one request
    assert notes["tiers"][1]["tokens"] == 11 + 5 * 13  # the prompt billed once, every sample's completion


def test_a_resumed_run_replays_all_of_tier_1s_samples_from_their_one_request(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", ZERO_BUG, BAD, GOOD, GOOD,
                                                                   BAD, BAD)
    router.queue("red_team", ZERO_TEST, status(500, "outage during tier 1's oracle round"))
    strategy = make_strategy("solidcoder-routed:oracle=program,max_tier=2")
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path)
    assert not results and errors[0]["calls"] == 4  # direct, red team, judge, the samples
    asked = len(scripted_server.chat_requests())
    results, _ = run(scripted_server, strategy, sandbox_pool, tmp_path)
    assert results[0]["passed"] and results[0]["notes"]["tier"] == 1  # the replayed choices held the GOOD samples
    assert results[0]["replayed_calls"] == 4
    assert results[0]["notes"]["tiers"][1]["tokens"] == 11 + 5 * 13 + 2 * (11 + 13)  # samples, red team, judge
    assert len(scripted_server.chat_requests()) - asked == results[0]["calls"] - 4


def test_the_report_counts_the_problems_that_ended_in_each_tier(scripted_server, sandbox_pool, tmp_path):
    from solidcoder.bench.metrics import summarize
    from solidcoder.bench.report import tier_lines
    from solidcoder.store import ResultRow

    StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path)
    tokens = sum(t["tokens"] for t in row["notes"]["tiers"])
    assert tier_lines(summarize([ResultRow.from_dict(row)], [])) == [
        f"t solidcoder-routed (m): ended in tier 0: 1 (1 pass); tokens per problem spent in tier 0: {tokens}"]


def test_the_report_says_where_the_tokens_went_by_template(scripted_server, sandbox_pool, tmp_path):
    from solidcoder.bench.metrics import summarize
    from solidcoder.bench.report import template_lines
    from solidcoder.store import ResultRow

    StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path)
    assert row["template_usage"] == {"strategies/direct_qwen": [1, 11, 13],
                                     "refinements/red_team_compact": [1, 11, 13], "paper/judge": [1, 11, 13]}
    assert template_lines(summarize([ResultRow.from_dict(row)], [])) == [
        "t solidcoder-routed (m): tokens per problem by template: strategies/direct_qwen 24 (33%), "
        "refinements/red_team_compact 24 (33%), paper/judge 24 (33%)"]
    older = {**row, "stage_usage": {"direct": [1, 11, 13]}}  # a row recorded before 2026-12-03
    del older["template_usage"]
    assert template_lines(summarize([ResultRow.from_dict(older)], [])) == [
        "t solidcoder-routed (m): tokens per problem by template: direct 24 (33%)"]


def test_tier_0_accepts_nothing_when_no_test_ran(scripted_server, sandbox_pool, tmp_path):
    untested = Problem(id="add", kind="call", statement=ADD.statement, entry_point="add", public_tests=[],
                       hidden_tests=ADD.hidden_tests)
    router = StageRouter(scripted_server, red_team="no test in this reply").queue("strategies/direct", GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path, (untested,))
    assert row["notes"]["tier"] == 2 and not row["notes"]["verified"]  # nothing ran, so no tier could accept
    assert router.seen[:3] == ["strategies/direct", "red_team", "strategies/direct"]


def test_an_oracle_test_that_every_surviving_sample_fails_is_rejected_as_suspect(scripted_server, sandbox_pool,
                                                                                 tmp_path):
    other = "```python\ndef add(a, b):\n    return b + a if a else 0\n```"  # another program with the same bug
    router = StageRouter(scripted_server, red_team=ZERO_TEST).queue("strategies/direct", ZERO_BUG, ZERO_BUG, other)
    row = routed(scripted_server, sandbox_pool, tmp_path)
    assert row["notes"]["tier"] == 1 and row["notes"]["oracle_rounds"] == ["executed, failed", "rejected"]
    assert row["notes"]["judge_rejections"][-1] == "evidence: all 2 sampled programs that pass the public tests fail it"
    assert router.seen.count("strategies/direct") == 6


def test_max_tier_1_stops_after_the_samples_and_answers_unverified(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, code=GOOD).queue("strategies/direct", ZERO_BUG, *[BAD] * 3)
    router.queue("red_team", ZERO_TEST)
    strategy = make_strategy("solidcoder-routed:samples=3,max_tier=1,oracle=program")
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (ADD,))
    notes = results[0]["notes"]
    assert errors == [] and notes["tier"] == 1 and not notes["verified"]
    assert results[0]["code"] in ZERO_BUG  # no sample survived: the answer is tier 0's program
    assert router.seen == ["strategies/direct", "red_team", "judge", *["strategies/direct"] * 3]  # no tier 2


SHARED = "refinements/red_team_shared"
V1 = "solidcoder-routed:oracle=shared,max_tier=2"  # routed v1: a shared oracle test, tier 2 on


def test_a_shared_oracle_test_is_written_from_the_problem_once_and_runs_on_each_tiers_program(scripted_server,
                                                                                             sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", ZERO_BUG, ZERO_BUG, GOOD, GOOD, BAD, BAD)
    router.queue(SHARED, ZERO_TEST)
    results, errors = run(scripted_server, make_strategy(V1), sandbox_pool, tmp_path)
    row, notes = results[0], results[0]["notes"]
    assert errors == [] and row["passed"] and notes["tier"] == 1 and notes["verified"]
    assert notes["oracle_rounds"] == ["executed, failed"]  # one round, asked for tier 0; tier 1's winner reran it
    assert router.seen == ["strategies/direct", SHARED, "judge", *["strategies/direct"] * 5]
    (asked,) = router.requests(SHARED)
    assert "if a else 0" not in str(asked.body["messages"])  # the program is not in the prompt


def test_a_shared_test_that_every_surviving_sample_fails_leaves_the_tests_tier_2_is_seeded_with(scripted_server,
                                                                                                 sandbox_pool,
                                                                                                 tmp_path):
    untested = Problem(id="add", kind="call", statement=ADD.statement, entry_point="add", public_tests=[],
                       hidden_tests=ADD.hidden_tests)
    router = StageRouter(scripted_server).queue("strategies/direct", GOOD, GOOD, GOOD, GOOD, BAD, BAD)
    router.queue(SHARED, "```python\nassert add(1, 1) == 3, 'a wrong test'\n```")
    results, _ = run(scripted_server, make_strategy(V1), sandbox_pool, tmp_path, (untested,))
    notes = results[0]["notes"]
    assert notes["tier"] == 2 and notes["oracle_rounds"][0] == "executed, failed"  # it failed tier 0's program
    assert notes["judge_rejections"][0].startswith("evidence: all ") and router.seen.count(SHARED) == 1
    assert notes["kept"] == []  # tier 2 started without it


def test_routed_options_are_parsed_and_a_default_one_leaves_the_configuration_key_alone():
    strategy = make_strategy("solidcoder-routed:samples=3,temperature=0.6,full=solidcoder,max_tier=1")
    settings = strategy.settings()
    assert (settings["samples"], settings["temperature"], settings["max_tier"]) == (3, 0.6, 1)
    assert settings["full"] == make_strategy("solidcoder").settings()
    assert "max_tier" not in make_strategy("solidcoder-routed:max_tier=2").settings()
    assert (make_strategy("solidcoder-routed").settings()["oracle"], settings["max_tier"]) == ("none", 1)  # v2
    assert "oracle" not in make_strategy("solidcoder-routed:oracle=program").settings()  # as before
    assert make_strategy(V1).settings()["oracle"] == "shared"


@pytest.mark.parametrize("options", ["sample=3", "samples=0", "max_tier=3", "temperature=hot", "full=direct",
                                     "full=solidcoder_no_typo", "full_calls=0", "full_calls=many",
                                     "oracle=blind", "selector=vote", "trace_feedback=final"])
def test_a_bad_routed_option_is_bad_input(options):
    with pytest.raises(BadInput, match="solidcoder|samples|ablation"):
        make_strategy(f"solidcoder-routed:{options}")


SELF_TESTED = "```python\ndef add(a, b):\n    return a + b\n\nassert add(2, 2) == 5, 'the model was wrong'\n```"


def test_a_correct_program_whose_own_self_test_is_wrong_is_accepted_once_the_self_test_is_stripped(
        scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", SELF_TESTED)
    row = routed(scripted_server, sandbox_pool, tmp_path)  # full=solidcoder+, which strips self-tests
    assert row["passed"] and row["notes"]["tier"] == 0 and "assert add(2, 2) == 5" not in row["code"]


def test_without_strip_self_tests_the_same_program_fails_its_public_test_and_routing_goes_on(
        scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, red_team=SUM_TEST).queue("strategies/direct", SELF_TESTED, *[BAD] * 5)
    # the plain prompt: the maker's format drops a self-test too (its sanitizer)
    strategy = make_strategy("solidcoder-routed:full=solidcoder,max_tier=1,prompt=plain")
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (ADD,))
    assert errors == [] and results[0]["notes"]["tier"] == 1 and not results[0]["passed"]
    assert router.seen == ["strategies/direct"] * 6  # tier 0 failed its public test: no oracle round


@pytest.mark.parametrize(("options", "budget"), [(":max_tier=2", 7), (":max_tier=2,full_calls=3", 3)])
def test_tier_2_stops_at_its_own_call_budget_and_answers_with_its_best_program(options, budget, scripted_server,
                                                                              sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, code=BAD, fix=BAD, debug=BAD).queue("strategies/direct", *[BAD] * 6)
    results, errors = run(scripted_server, make_strategy(f"solidcoder-routed{options}"), sandbox_pool, tmp_path,
                          (ADD,))
    notes = results[0]["notes"]
    assert errors == [] and notes["tier"] == 2 and notes["tiers"][-1]["calls"] == budget
    assert notes["stopped"] == f"tier 2's budget of {budget} calls reached" and len(router.seen) == 6 + budget


def test_tier_2_without_a_budget_runs_to_the_runs_cap():
    assert make_strategy("solidcoder-routed").settings()["full_calls"] == 7
    assert "full_calls" not in make_strategy("solidcoder-routed:full_calls=none").settings()


def test_routed_v2_accepts_tier_0_on_the_public_tests_alone_without_an_oracle_call(scripted_server, sandbox_pool,
                                                                                   tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path, strategy="solidcoder-routed")
    assert row["passed"] and row["notes"]["tier"] == 0 and row["notes"]["verified"] and row["calls"] == 1
    assert router.seen == ["strategies/direct"] and row["notes"].get("oracle_rounds", []) == []


def test_routed_v2_ends_at_tier_1_and_answers_the_best_sample_without_the_full_loop(scripted_server, sandbox_pool,
                                                                                   tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, BAD, GOOD, GOOD, BAD, BAD)
    row = routed(scripted_server, sandbox_pool, tmp_path, strategy="solidcoder-routed")
    assert row["passed"] and row["notes"]["tier"] == 1 and row["calls"] == 2  # the greedy program, the samples
    assert router.seen == ["strategies/direct"] * 6 and [t["tier"] for t in row["notes"]["tiers"]] == [0, 1]


def test_routed_v2_never_reaches_tier_2_unless_asked_and_a_loop_flag_of_solve_asks():
    assert make_strategy("solidcoder-routed").config.max_tier == 1
    assert make_strategy("solidcoder-routed").with_loop({"p": 2}).config.max_tier == 2


GENERATED = "refinements/generated_tests"
ADD0 = Problem(id="add0", kind="call", statement=ADD.statement, entry_point="add", public_tests=ADD.public_tests,
               hidden_tests=[TestCase(kind="call", call="add(0, 5)", expected=5)])
TESTS_REPLY = ('{"tests": [{"input": "add(0, 5)", "output": "5"}, {"input": "add(0, 7)", "output": "7"}, '
               '{"input": "add(2, 3)", "output": "5"}]}')


def test_agreement_picks_the_samples_that_pass_the_generated_tests_over_the_larger_cluster(scripted_server,
                                                                                           sandbox_pool, tmp_path):
    # tier 0 fails; of the five samples, three ZERO_BUG (the majority) and two GOOD pass the public test
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, ZERO_BUG, ZERO_BUG, GOOD, ZERO_BUG, GOOD)
    router.queue(GENERATED, TESTS_REPLY)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy="solidcoder-routed:selector=agreement")
    assert row["passed"] and row["notes"]["tier"] == 1 and "if a else 0" not in row["code"]
    assert router.seen == ["strategies/direct"] * 6 + [GENERATED] and row["calls"] == 3
    (asked,) = router.requests(GENERATED)
    assert "return a" not in str(asked.body["messages"])  # written from the problem alone


def test_majority_picks_the_larger_cluster_on_the_same_samples(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, ZERO_BUG, ZERO_BUG, GOOD, ZERO_BUG, GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy="solidcoder-routed")
    assert not row["passed"] and "if a else 0" in row["code"] and GENERATED not in router.seen


def test_agreement_asks_for_no_tests_when_one_program_survives(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, GOOD, GOOD, BAD, BAD, GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy="solidcoder-routed:selector=agreement")
    assert row["passed"] and GENERATED not in router.seen and row["calls"] == 2


def test_unreadable_generated_tests_leave_the_majoritys_pick(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, ZERO_BUG, ZERO_BUG, GOOD, ZERO_BUG, GOOD)
    router.queue(GENERATED, "I cannot write tests.")
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy="solidcoder-routed:selector=agreement")
    assert "if a else 0" in row["code"] and router.seen[-1] == GENERATED


def test_tier_2_takes_ldbs_block_trace_as_an_option():
    strategy = make_strategy("solidcoder-routed:max_tier=2,trace_feedback=blocks")
    assert strategy.full.config.trace_feedback == "blocks" and strategy.settings()["trace_feedback"] == "blocks"
    assert strategy.settings()["full"]["trace_feedback"] == "blocks"
    assert "trace_feedback" not in make_strategy("solidcoder-routed").settings()  # the default's key is unchanged


def test_the_guard_sends_a_tier_0_program_that_fails_the_generated_tests_to_tier_1(scripted_server, sandbox_pool,
                                                                                   tmp_path):
    # ZERO_BUG passes the public test add(1, 2) but fails two of the three generated tests: tier 1 runs, on the
    # same tests (no second call), and its agreement selector picks GOOD over the larger ZERO_BUG cluster
    router = StageRouter(scripted_server).queue("strategies/direct", ZERO_BUG, ZERO_BUG, ZERO_BUG, GOOD, ZERO_BUG,
                                                GOOD)
    router.queue(GENERATED, TESTS_REPLY)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,),
                 strategy="solidcoder-routed:guard=tests,selector=agreement")
    assert row["passed"] and row["notes"]["tier"] == 1 and "if a else 0" not in row["code"]
    assert router.seen == ["strategies/direct", GENERATED, *["strategies/direct"] * 5] and row["calls"] == 3
    assert row["notes"]["guard"] == "passed 1 of 3 generated tests"


def test_the_guard_accepts_a_tier_0_program_that_passes_half_the_generated_tests(scripted_server, sandbox_pool,
                                                                                  tmp_path):
    half = '{"tests": [{"input": "add(0, 5)", "output": "5"}, {"input": "add(2, 3)", "output": "6"}]}'
    router = StageRouter(scripted_server).queue("strategies/direct", GOOD).queue(GENERATED, half)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy="solidcoder-routed:guard=tests")
    assert row["passed"] and row["notes"]["tier"] == 0 and row["calls"] == 2
    assert router.seen == ["strategies/direct", GENERATED] and row["notes"]["guard"] == "passed 1 of 2 generated tests"
    assert "guard" not in make_strategy("solidcoder-routed").settings()  # the default's key is unchanged


def test_the_orm_selector_needs_a_trained_orm_and_only_it_takes_one(tmp_path):
    for options in ("selector=orm", f"orm={tmp_path}", f"selector=orm,orm={tmp_path / 'missing'}",
                    f"selector=agreement,orm={tmp_path}"):
        with pytest.raises(BadInput, match="ORM"):
            make_strategy(f"solidcoder-routed:{options}")
