"""Evidence for the judge: a red-team test that is wrong on its face (the examples' argument types, an example's
own value, a structured property false of an example's result, a stdin property that rejects an example's expected
output) is rejected with a reason, before the judge
prompt is asked; anything the evidence cannot decide is left to the judge."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from stage_router import StageRouter
from test_bench_strategies import ADD, run

from solidcoder.problem import Problem, TestCase
from solidcoder.stages import evidence
from solidcoder.stages.evidence import checkable
from solidcoder.stages.live import GeneratedTest, LiveExecutor
from solidcoder.stages.oracle import parameters, parse_structured_test
from solidcoder.store import read_rows
from solidcoder.strategies import make_strategy

SUM = Problem(id="sum", kind="stdio", statement="Print a + b.", public_tests=[
    TestCase(kind="stdio", stdin="1 2\n", expected_stdout="3"), TestCase(kind="stdio", stdin="5 5\n",
                                                                         expected_stdout="10")])


def call_test(script: str) -> GeneratedTest:
    return GeneratedTest("call", script)


def contradiction(test: GeneratedTest, problem: Problem, live: LiveExecutor) -> str | None:
    """The evidence's verdict on `test`, run to its end here (the evidence awaits its sandbox runs)."""
    return asyncio.run(evidence.contradiction(test, problem, live))


@pytest.mark.parametrize(("script", "reason"), [
    ("assert add('a', 'b') == 'ab'",
     "the test calls add('a', 'b') with (str, str); the examples pass (number, number)"),
    ("assert add(1, 2) == 4", "the test expects 4 from an example whose expected value is 3"),
    ("assert 4 == add(1,  2)", "the test expects 4 from an example whose expected value is 3"),
])
def test_a_call_test_wrong_on_its_face_is_rejected_with_the_reason(script, reason, sandbox_pool):
    assert contradiction(call_test(script), ADD, LiveExecutor(sandbox_pool, ADD)) == reason


@pytest.mark.parametrize("script", [
    "assert add(0, 5) == 5",  # plausible: left to the judge
    "assert add(1.5, 2) == 3.5",  # a float is a number
    "x = 3\nassert add(x, 2) == 5",  # not a literal: no evidence either way
    "assert add(1, 2, 3) == 6",  # another argument count (a default parameter?): no evidence either way
    "assert add(1, 2) == 3",  # agrees with the example
])
def test_what_the_evidence_cannot_fault_goes_to_the_judge(script, sandbox_pool):
    assert contradiction(call_test(script), ADD, LiveExecutor(sandbox_pool, ADD)) is None


def test_a_crash_only_test_is_never_faulted(sandbox_pool):
    test = GeneratedTest("call", "assert add('a', 'b') == 'ab'", crash_only=True)
    assert contradiction(test, ADD, LiveExecutor(sandbox_pool, ADD)) is None


def test_a_stdin_property_must_accept_every_examples_expected_output(sandbox_pool):
    live = LiveExecutor(sandbox_pool, SUM)
    right = "def check(stdin, stdout):\n    assert int(stdout) == sum(map(int, stdin.split()))\n"
    wrong = "def check(stdin, stdout):\n    assert int(stdout) < 5, 'small'\n"
    assert contradiction(GeneratedTest("stdio", right, "0 0\n"), SUM, live) is None
    reason = contradiction(GeneratedTest("stdio", wrong, "0 0\n"), SUM, live)
    assert reason.startswith("the property check rejects example 2's expected output") and "small" in reason


def test_algorithm_1_with_evidence_rejects_before_asking_the_judge(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("red_team", "```python\nassert add(1, 2) == 4\n```",
                                               "```python\nassert add(2, 2) == 4\n```")
    results, errors = run(scripted_server, make_strategy("solidcoder:evidence"), sandbox_pool, tmp_path)
    notes = results[0]["notes"]
    assert not errors and notes["oracle_rounds"] == ["rejected", "executed, passed"]
    assert notes["judge_rejections"] == ["evidence: the test expects 4 from an example whose expected value is 3"]
    assert router.seen.count("judge") == 1  # only the second test reached the judge prompt


ADD_DEF = replace(ADD, statement="def add(a: int, b: int = 0) -> int:\n    \"\"\"Return a + b.\"\"\"\n")


def test_the_entry_points_parameters_are_read_from_its_signature():
    assert parameters(ADD_DEF.statement, "add") == ("a", "b")
    assert parameters("class Solution:\n    def add(self, *, x):", "Solution.add") == ("x",)
    assert parameters(ADD.statement, "add") == ()  # no signature in the statement


def test_a_structured_call_test_binds_the_arguments_to_the_parameter_names():
    reply = '{"assumption": "zero", "call": "add(0, b=5)", "property": "result == a + b"}'
    test = parse_structured_test(reply, "call", "add", parameters=("a", "b"))
    assert test.source == "a = 0\nb = 5\nresult = add(0, b=5)\nassert result == a + b, 'zero'\n"
    assert test.prop == "result == a + b"


@pytest.mark.parametrize(("prop", "reason"), [
    ("result == a + b", None),  # true of the example add(1, 2) == 3
    ("result == a * b", "the property 'result == a * b' is false of example 1's expected result (AssertionError)"),
    ("result == c", "the property 'result == c' is false of example 1's expected result (NameError: name 'c' is "
                    "not defined)"),  # a property copied from elsewhere names what this function does not have
])
def test_a_structured_property_must_hold_for_every_examples_expected_result(prop, reason, sandbox_pool):
    test = parse_structured_test(json.dumps({"assumption": "x", "call": "add(0, 5)", "property": prop}), "call",
                                 "add", parameters=("a", "b"))
    assert contradiction(test, ADD_DEF, LiveExecutor(sandbox_pool, ADD_DEF)) == reason
    assert checkable(test, ADD_DEF)


def test_crash_fallback_keeps_the_call_of_a_test_whose_property_the_evidence_rejects(scripted_server, sandbox_pool,
                                                                                      tmp_path):
    bad_property = '{"assumption": "zero", "call": "add(0, 5)", "property": "result == a * b"}'
    zero_crash = "```python\ndef add(a: int, b: int = 0) -> int:\n    return a + b if a else 1 // a\n```"
    StageRouter(scripted_server, code=zero_crash, fix=zero_crash).queue("red_team", bad_property)
    results, errors = run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence,crash_fallback"),
                          sandbox_pool, tmp_path, (ADD_DEF,))
    notes = results[0]["notes"]
    assert notes["oracle_rounds"][0] == "executed, failed" and notes["kept"][0]["crash_only"]
    assert notes["kept"][0]["source"] == "a = 0\nb = 5\nresult = add(0, 5)\n"  # the property is gone
    assert notes["judge_rejections"][0].endswith("; its call is kept, crash-only")


def test_crash_fallback_keeps_nothing_of_a_test_whose_arguments_have_the_wrong_types(scripted_server, sandbox_pool,
                                                                                     tmp_path):
    strings = '{"assumption": "text", "call": "add(\'a\', \'b\')", "property": "result == a + b"}'
    StageRouter(scripted_server).queue("red_team", strings)
    results, errors = run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence,crash_fallback"),
                          sandbox_pool, tmp_path, (ADD_DEF,))
    notes = results[0]["notes"]
    assert notes["oracle_rounds"][0] == "rejected" and notes["judge_rejections"][0].startswith(
        "evidence: the test calls add('a', 'b') with (str, str)")


ZERO_CRASH = "```python\ndef add(a: int, b: int = 0) -> int:\n    return a + b if a else 1 // a\n```"


def test_crash_fallback_keeps_the_call_of_a_test_whose_property_is_words(scripted_server, sandbox_pool, tmp_path):
    words = '{"assumption": "zero", "call": "add(0, 5)", "property": "the sum is 5"}'
    router = StageRouter(scripted_server, code=ZERO_CRASH, fix=ZERO_CRASH).queue("red_team", words)
    results, errors = run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence,crash_fallback"),
                          sandbox_pool, tmp_path, (ADD_DEF,))
    notes = results[0]["notes"]
    assert notes["oracle_rounds"][0] == "executed, failed" and notes["kept"][0]["crash_only"]
    assert notes["kept"][0]["source"] == "a = 0\nb = 5\nresult = add(0, 5)\n"
    assert notes["judge_rejections"][0] == ("evidence: the property is not a Python boolean expression; its call is "
                                            "kept, crash-only")
    assert router.seen[router.seen.index("red_team") + 1] != "judge"  # a crash-only call is not judged


def test_crash_fallback_keeps_nothing_of_a_test_the_judge_rejects(scripted_server, sandbox_pool, tmp_path):
    fits = '{"assumption": "zero", "call": "add(0, 5)", "property": "result == a + b"}'  # the evidence admits it
    StageRouter(scripted_server, code=ZERO_CRASH, fix=ZERO_CRASH, judge="Zero is no valid input.\nINVALID").queue(
        "red_team", fits)
    results, errors = run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence,crash_fallback"),
                          sandbox_pool, tmp_path, (ADD_DEF,))
    notes = results[0]["notes"]
    assert notes["oracle_rounds"][0] == "rejected" and notes["judge_rejections"][0] == "Zero is no valid input."


def test_without_crash_fallback_a_property_in_words_is_a_malformed_round(scripted_server, sandbox_pool, tmp_path):
    words = '{"assumption": "zero", "call": "add(0, 5)", "property": "the sum is 5"}'
    StageRouter(scripted_server, code=ZERO_CRASH, fix=ZERO_CRASH).queue("red_team", words)
    results, errors = run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence"), sandbox_pool,
                          tmp_path, (ADD_DEF,))
    assert results[0]["notes"]["oracle_rounds"][0] == "malformed"


@pytest.mark.parametrize(("reply", "script"), [
    ('{"call": "add(0, 5)", "property": "it is 5"}', "a = 0\nb = 5\nresult = add(0, 5)\n"),
    ('{"call": "add(*[1, 2])"}', "result = add(*[1, 2])\n"),  # arguments that bind to no name: the call alone
    ('{"call": "len([1])", "property": "result == 1"}', None),  # does not call the entry point
    ('{"call": "add(0,", "property": "result == 1"}', None),  # no expression
    ('{"stdin": "1 2"}', None),
])
def test_a_structured_replys_call_alone_is_a_crash_only_test(reply, script):
    from solidcoder.stages.oracle import structured_call

    test = structured_call(reply, "add", "oracle-1", ("a", "b"))
    assert (test.source, test.crash_only) == (script, True) if script else test is None


def test_the_evidence_checks_run_outside_the_judge_are_recorded(scripted_server, sandbox_pool, tmp_path):
    bad_property = '{"assumption": "zero", "call": "add(0, 5)", "property": "result == a * b"}'
    StageRouter(scripted_server).queue("red_team", bad_property)
    run(scripted_server, make_strategy("solidcoder:structured_oracle,evidence"), sandbox_pool, tmp_path, (ADD_DEF,))
    [ran] = [row for row in read_rows(tmp_path / "run" / "executions.jsonl") if row["purpose"] == "run"]
    [check] = ran["tests"]
    assert (check["kind"], check["status"], ran["passed"], ran["total"]) == ("evidence", "runtime_error", 0, 1)
    assert check["input"] == "the property 'result == a * b' of example 1" and check["detail"] == "AssertionError"
    assert ran["program"].endswith("assert result == a * b\n") and ran["first_failure"] == check


class Rows:
    """An execution log in memory (the bench writes executions.jsonl through the same `append`)."""

    def __init__(self):
        self.rows: list[dict] = []

    def append(self, row: dict) -> None:
        self.rows.append(row)


def test_a_kept_stdin_test_run_outside_the_judge_is_recorded_under_the_callers_purpose(sandbox_pool):
    from solidcoder.core.executions import UnitExecutions
    from solidcoder.stages.live import SuiteTest, kept_test

    log = Rows()
    executions = UnitExecutions("unit", lambda: 3, log=log)
    check = "def check(stdin, stdout):\n    assert stdout.split() == ['7']\n"
    test = kept_test(SuiteTest("generated-1", GeneratedTest("stdio", check, "3 4\n", origin="oracle-1")))
    live = LiveExecutor(sandbox_pool, SUM, executions.judge(sandbox_pool, "kept"), executions, "kept")
    program = "a, b = map(int, input().split())\nprint(a - b)\n"
    evaluation = asyncio.run(live.evaluate(program, [test]))
    assert not evaluation.green
    [row] = log.rows
    assert (row["purpose"], row["after_call"], row["passed"], row["total"]) == ("kept", 3, 0, 1)
    assert (row["tests"][0]["kind"], row["tests"][0]["input"], row["tests"][0]["actual"]) == ("kept", "3 4\n", "-1\n")
