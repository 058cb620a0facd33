"""`alphacodium` on the scripted server: the anchor's stage order and call counts, the cycling regeneration with the
closest-candidate fallback, and the test-anchor rule (a fix that breaks a previously passed test is reverted); issue
37's fidelity: free YAML read per stage, 2,000 tokens a call, the `min_calls` note, assert scripts shown by the
values expected and returned, finite crash distances, AI tests that call the entry point, stages and fixes counted
only when they happened."""

from __future__ import annotations

import asyncio
import math

from stage_router import StageRouter, template_of
from test_bench_strategies import run

from solidcoder.bench.runner import BenchRunner, RunSpec
from solidcoder.bench.tasks import CodeTask
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.models.retry import RetryPolicy
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.live import Evaluation, Outcome
from solidcoder.store import ResultStore, read_rows
from solidcoder.strategies import make_strategy
from solidcoder.strategies.alphacodium import AlphaCodium, AlphaCodiumSettings, _closest
from solidcoder.strategies.alphacodium_io import (
    READERS,
    Asserted,
    Example,
    distance,
    example_test,
    failing_assert,
    read_reply,
)

S = "strategies/alphacodium_"


def program(body: str) -> str:
    return f"```python\ndef add(a, b):\n    {body}\n```"


GOOD, FAR, NEAR = program("return a + b"), program("return a - b"), program("return a + b + 1")
CRASH, INIT, BREAK = program("raise ValueError('no')"), program("return 3"), program("return 4")
SOLUTIONS = "possible_solutions:\n" + "".join(
    f"- name: Plan {n}\n  content: use plan {n}\n  why_it_works: it adds\n  labels:\n  - math\n  complexity: O(1)\n"
    for n in ("alpha", "beta", "gamma"))
CHOSEN = ("name: Plan beta\ncontent: CHOSEN flow\nwhy: simple\nflow:\n- add\nproblem_tests: []\n"
          "input_output_examples_flow: []")
AI_TESTS = "```yaml\ntests:\n- input: add(5, 5)\n  output: '10'\n  explanation: |\n    5 + 5\n```"


def reflection(count: int, call: str = "add(1, 2)", output: str = "3") -> str:
    """A free-YAML reply, one explanation per public test."""
    explanation = f"- input: {call}\n  output: '{output}'\n  explanation: the sum\n"
    return "self_reflection:\n- add two integers\ntests_explanations:\n" + explanation * count


def fixed(code: str) -> str:
    body = code.removeprefix("```python\n").removesuffix("```").replace("\n", "\n  ")
    return f"failed_tests: add\nwhat_went_wrong: wrong sum\nfixed_flow: add them\nfixed_code: |\n  {body}"


def adder(*calls: tuple[str, int]) -> Problem:
    return Problem(id="add", kind="call", statement="Write add(a, b) returning a + b.", entry_point="add",
                   public_tests=[TestCase(kind="call", call=c, expected=e) for c, e in calls],
                   hidden_tests=[TestCase(kind="call", call="add(-1, 10)", expected=9)])


def asserting(*scripts: str) -> Problem:
    """The adder with assert-script public tests, as HumanEval and MBPP give theirs."""
    return Problem(id="add", kind="call", statement="Write add(a, b) returning a + b.", entry_point="add",
                   public_tests=[TestCase(kind="call", script=script) for script in scripts],
                   hidden_tests=[TestCase(kind="call", call="add(-1, 10)", expected=9)])


def run_with(server, strategy, sandbox_pool, tmp_path, problem: Problem, max_tokens: int | None = None,
             max_calls: int | None = None) -> tuple[list[dict], list[dict]]:
    """`run` with the run's --max-tokens and --max-calls."""
    model = make_model("openai/scripted-model", ModelOptions(api_base=server.url, policy=RetryPolicy(attempts=1)))
    store = ResultStore(tmp_path / "run")
    task = CodeTask([problem], strategy, PromptLibrary.from_env(), sandbox_pool, max_tokens=max_tokens)
    asyncio.run(BenchRunner(spec=RunSpec("t", strategy.name, "m", "h"), task=task, model=model, store=store,
                            concurrency=2, max_calls=max_calls).run())
    store.close()
    return read_rows(tmp_path / "run" / "results.jsonl"), read_rows(tmp_path / "run" / "errors.jsonl")


def router(server, publics: int, **queues: list[str]) -> StageRouter:
    defaults = {"reflect": reflection(publics), "possible_solutions": SOLUTIONS, "choose_best": CHOSEN,
                "ai_tests": AI_TESTS, "solve": GOOD, "analyze_failure": "what_went_wrong: sum\nfixed_flow: add",
                "fix_solution": GOOD, "analyze_and_fix": fixed(GOOD)}
    scripted = StageRouter(server, **{S + stage: text for stage, text in defaults.items()})
    for stage, texts in queues.items():
        scripted.queue(S + stage, *texts)
    return scripted


def prompts(server, stage: str) -> list[str]:
    return [r.body["messages"][-1]["content"] for r in server.chat_requests() if template_of(r) == S + stage]


def test_a_right_first_program_runs_the_planning_stages_once_each_then_every_test_without_a_fix(
        scripted_server, sandbox_pool, tmp_path):
    scripted = router(scripted_server, 1)
    results, errors = run(scripted_server, make_strategy("alphacodium"), sandbox_pool, tmp_path,
                          (adder(("add(1, 2)", 3)),))
    row = results[0]
    assert not errors and row["passed"] and row["notes"]["verified"] and row["calls"] == 5
    assert scripted.seen == [S + s for s in ("reflect", "possible_solutions", "choose_best", "ai_tests", "solve")]
    assert row["notes"]["ai_tests"] == 1 and row["notes"]["final_passed"] == 2  # the public and the AI test


def test_a_reply_that_does_not_parse_is_asked_again_up_to_three_times(scripted_server, sandbox_pool, tmp_path):
    scripted = router(scripted_server, 1, reflect=["not: [closed", reflection(2)])  # garbage, wrong test count
    results, _ = run(scripted_server, AlphaCodium(), sandbox_pool, tmp_path, (adder(("add(1, 2)", 3)),))
    assert scripted.seen[:4] == [S + "reflect"] * 3 + [S + "possible_solutions"]
    assert results[0]["calls"] == 7 and results[0]["passed"]


def test_initial_code_cycles_through_the_solutions_and_keeps_the_closest_candidate(scripted_server, sandbox_pool,
                                                                                  tmp_path):
    router(scripted_server, 1, solve=[FAR, NEAR, *[CRASH] * 7], fix_solution=[CRASH])
    strategy = AlphaCodium(AlphaCodiumSettings(public_calls=1, ai_calls=0))
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (adder(("add(1, 2)", 3)),))
    marks = [next(m for m in ("CHOSEN", "alpha", "beta", "gamma") if m in p) for p in prompts(scripted_server, "solve")]
    assert marks == ["CHOSEN", "CHOSEN", "gamma", "alpha", "beta", "gamma", "alpha", "beta", "gamma"]
    assert "return a + b + 1" in prompts(scripted_server, "analyze_failure")[0]  # distance 1 beats 4 and crashes
    assert not errors and results[0]["notes"]["initial_attempts"] == 9


def test_a_fix_that_breaks_a_passed_test_is_reverted_and_one_that_keeps_them_is_accepted(scripted_server,
                                                                                        sandbox_pool, tmp_path):
    scripted = router(scripted_server, 2, solve=[INIT], fix_solution=[BREAK] * 3,
                      analyze_and_fix=[fixed(BREAK), fixed(GOOD)])
    strategy = AlphaCodium(AlphaCodiumSettings(initial_attempts=0))
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path,
                          (adder(("add(1, 2)", 3), ("add(2, 2)", 4)),))
    fixes = [S + "analyze_failure", S + "fix_solution"] * 3  # three tries on the 2nd public test, each reverted
    assert scripted.seen[4:] == [S + "solve", *fixes, S + "analyze_and_fix", S + "analyze_and_fix"]
    assert all("return 3" in p and "return 4" not in p for p in prompts(scripted_server, "analyze_failure"))
    assert "expected output:\n4\ncode output:\n3" in prompts(scripted_server, "fix_solution")[0]
    row = results[0]
    assert not errors and row["passed"] and row["notes"]["verified"] and row["calls"] == 4 + 1 + 6 + 2
    assert row["notes"]["reverted"] == 4 and "return a + b" in row["code"]  # 3 public fixes, the AI stage's BREAK


def test_yaml_replies_are_read_per_stage_as_the_anchor_reads_them():
    assert read_reply("```yaml\nname: a\n```", READERS["choose_best"]) == {"name": "a"}
    chatty = "Sure:\n```yaml\nname: a\n```\nDone."  # prose around a fenced block (YAML scalars: `Sure:` is not)
    assert read_reply("Sure: [\n```yaml\nname: a\n```\nDone.", READERS["reflect"]) == {"name": "a"}  # its fallback
    assert read_reply(chatty, READERS["possible_solutions"]) is None  # `load_yaml` without keys: no second try
    broken = "tests:\n- explanation: ok\n  input: 1: 2\n  output: x"  # a colon in a plain scalar: block scalars fix it
    assert read_reply(broken, READERS["analyze_and_fix"]) is None
    read = {"tests": [{"explanation": "ok", "input": "1: 2", "output": "x"}]}
    assert read_reply(broken, READERS["ai_tests"]) == read
    assert read_reply("just prose, no YAML mapping", READERS["ai_tests"]) is None


def test_distance_is_the_anchors_numeric_or_line_difference_and_finite_for_a_crash_or_a_timeout():
    def evaluation(*outcomes: tuple[str, str, str, str]) -> Evaluation:
        return Evaluation("", [Outcome(f"t{i}", False, status, detail, expected=e, actual=a)
                               for i, (status, detail, e, a) in enumerate(outcomes)])

    assert distance(evaluation(("fail", "", "3\n5", "4\n1"))) == 5.0
    assert distance(evaluation(("fail", "", "a b\nc", "a b\nd"), ("fail", "", "1", "2"))) == 2.0
    raised = ("error", "ValueError: no", "3", "ValueError: no")  # a call that raised returned nothing: '' against 3
    assert distance(evaluation(("fail", "", "3", "4"), raised)) == 2.0
    timed_out = ("timeout", "time limit exceeded", "1\n2", "1\n")  # printed 1 before it ran out: broadcast
    assert distance(evaluation(timed_out)) == 1.0
    assert distance(evaluation(("fail", "", "3", ""))) == math.inf  # finished and printed nothing
    assert distance(evaluation(("fail", "", "1\n2\n3", "1\n2"))) == math.inf  # numpy cannot broadcast 2 against 3
    assert _closest([(math.inf, "a"), (2.0, "b"), (2.0, "c")]) == "b"
    assert _closest([(math.inf, "a"), (math.inf, "b")]) == "b"  # all infinite: the last one, as the anchor


def test_a_crashing_candidate_has_a_finite_distance_and_can_be_the_closest(scripted_server, sandbox_pool, tmp_path):
    router(scripted_server, 1, solve=[FAR, CRASH], fix_solution=[GOOD])
    strategy = AlphaCodium(AlphaCodiumSettings(initial_attempts=1, public_calls=1))
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (adder(("add(1, 2)", 3)),))
    assert "raise ValueError" in prompts(scripted_server, "analyze_failure")[0]  # the crash (1) beats -1 for 3 (4)
    assert "code output:\nValueError: no" in prompts(scripted_server, "analyze_failure")[0]
    assert not errors and results[0]["passed"]


def test_requests_carry_no_schema_and_each_stage_reads_free_yaml(scripted_server, sandbox_pool, tmp_path):
    chatty = f"Here is my reflection:\n```yaml\n{reflection(1)}```\nI hope it helps: it does."
    scripted = router(scripted_server, 1, reflect=[chatty], possible_solutions=["Sure: " + SOLUTIONS, SOLUTIONS])
    results, errors = run(scripted_server, AlphaCodium(), sandbox_pool, tmp_path, (adder(("add(1, 2)", 3)),))
    assert scripted.seen[:4] == [S + s for s in ("reflect", "possible_solutions", "possible_solutions", "choose_best")]
    assert all("response_format" not in r.body for r in scripted_server.chat_requests())
    assert "add two integers" in prompts(scripted_server, "solve")[0]  # the reflection read from the fenced block
    assert not errors and results[0]["passed"] and results[0]["notes"]["solutions"] == 3


def test_every_call_may_write_2000_tokens_whatever_the_runs_max_tokens(scripted_server, sandbox_pool, tmp_path):
    router(scripted_server, 1)
    results, _ = run_with(scripted_server, AlphaCodium(), sandbox_pool, tmp_path / "a", adder(("add(1, 2)", 3)),
                          max_tokens=64)
    assert [r.body["max_tokens"] for r in scripted_server.chat_requests()] == [2000] * 5 and results[0]["passed"]
    assert AlphaCodium().settings()["max_tokens"] == 2000
    run_with(scripted_server, AlphaCodium(AlphaCodiumSettings(max_tokens=None)), sandbox_pool, tmp_path / "b",
             adder(("add(1, 2)", 3)), max_tokens=64)
    assert [r.body["max_tokens"] for r in scripted_server.chat_requests()][5:] == [64] * 5  # None: the run's


def test_a_max_calls_below_min_calls_is_kept_and_named_when_it_stops_the_flow(scripted_server, sandbox_pool,
                                                                               tmp_path):
    scripted = router(scripted_server, 1, solve=[FAR, NEAR])
    results, errors = run_with(scripted_server, AlphaCodium(), sandbox_pool, tmp_path / "a",
                               adder(("add(1, 2)", 3)), max_calls=6)
    row = results[0]
    assert not errors and row["calls"] == 6 and "return a + b + 1" in row["code"]  # the closest candidate so far
    assert "--max-calls 6 is below AlphaCodium's min_calls = 30" in row["notes"]["stopped"]
    scripted.queue(S + "solve", FAR, NEAR)
    results, _ = run_with(scripted_server, AlphaCodium(AlphaCodiumSettings(min_calls=6)), sandbox_pool,
                          tmp_path / "b", adder(("add(1, 2)", 3)), max_calls=6)
    assert "min_calls" not in results[0]["notes"]["stopped"] and "cap of 6" in results[0]["notes"]["stopped"]


def test_a_call_the_cap_refused_is_no_stage_and_a_fix_counts_only_with_code(scripted_server, sandbox_pool,
                                                                            tmp_path):
    unreadable = fixed(GOOD).replace("return a + b", "return a +")  # fixed_code that does not parse
    router(scripted_server, 1, solve=[FAR], fix_solution=["I cannot fix it."], analyze_and_fix=[unreadable] * 2)
    strategy = AlphaCodium(AlphaCodiumSettings(initial_attempts=0, public_calls=1, ai_calls=1))
    results, errors = run_with(scripted_server, strategy, sandbox_pool, tmp_path, adder(("add(1, 2)", 3)),
                               max_calls=8)
    notes = results[0]["notes"]
    assert not errors and results[0]["calls"] == 8 and "cap of 8" in notes["stopped"]
    assert notes["stages"] == ["reflect", "possible_solutions", "choose_best", "ai_tests", "solve", "analyze_failure",
                               "fix_solution", "analyze_and_fix"]  # the 9th call, refused, is not there
    assert notes["fixes"] == 0 and "return a - b" in results[0]["code"]  # neither reply held code


def test_an_assert_script_is_shown_by_its_call_the_expected_value_and_the_value_returned(scripted_server,
                                                                                         sandbox_pool, tmp_path):
    router(scripted_server, 2, solve=[FAR, NEAR], fix_solution=[GOOD])
    strategy = AlphaCodium(AlphaCodiumSettings(initial_attempts=1))
    problem = asserting("assert add(1, 2) == 3", "x = 0\nassert add(2, 2) == 4\nassert not add(0, 0)")
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (problem,))
    shown = prompts(scripted_server, "analyze_failure")[0]
    assert "test input:\nadd(1, 2)\nexpected output:\n3\ncode output:\n4\n" in shown  # not "every assertion holds"
    assert "return a + b + 1" in shown  # values compared: NEAR (1 + 1 off) beats FAR (4 + 4 off), both failing both
    assert not errors and results[0]["passed"] and results[0]["notes"]["fixes"] == 1


def test_the_failing_assert_of_a_script_gives_the_call_and_the_value_expected():
    script = "x = 0\nassert add(1, 2) == 3\nassert 5 == add(2, 3)\nassert not add(0, 0)\nassert add(1, 1)"
    assert failing_assert(script, "AssertionError at test.py:2: ...", "add") == Asserted("add(1, 2)", "3")
    assert failing_assert(script, "AssertionError at test.py:3: ...", "add") == Asserted("add(2, 3)", "5")
    assert failing_assert(script, "AssertionError at test.py:4: ...", "add") == Asserted("add(0, 0)", "False")
    assert failing_assert(script, "AssertionError at test.py:5: ...", "add") == Asserted("add(1, 1)", "True")
    assert failing_assert(script, "no line", "add") == Asserted("add(1, 2)", "3")  # the first assert that calls it
    close = failing_assert("assert abs(add(0.1, 0.2) - 0.3) < 1e-9", "", "add")
    assert close == Asserted("add(0.1, 0.2)", "abs(add(0.1, 0.2) - 0.3) < 1e-9")  # no value to show: the condition
    assert failing_assert("assert [1,2] == sorted(add(1, 2))", "", "add") == Asserted("sorted(add(1, 2))", "[1, 2]")
    assert failing_assert("assert True", "", "add") is None


def test_ai_tests_that_never_call_the_entry_point_are_dropped_and_keyword_inputs_kept(scripted_server,
                                                                                      sandbox_pool, tmp_path):
    inputs = ("max(5, 5)", "add(a=5, b=5)", "a=5, b=5", "5, 5", "Solution().add(5, 5)", "print(10)")
    tests = "tests:\n" + "".join(f"- input: '{i}'\n  output: '10'\n  explanation: sum\n" for i in inputs)
    router(scripted_server, 1, ai_tests=[tests])
    results, errors = run(scripted_server, AlphaCodium(), sandbox_pool, tmp_path, (adder(("add(1, 2)", 3)),))
    assert not errors and results[0]["notes"]["ai_tests"] == 4  # keywords, bare arguments (both ways), a method
    calls = [example_test(Example(i, "10"), adder()) for i in inputs]
    assert [c.call if c else None for c in calls] == [None, "add(a=5, b=5)", "add(a=5, b=5)", "add(5, 5)",
                                                      "Solution().add(5, 5)", None]


SUM_GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
SUM_BAD = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
SUM_AI_TESTS = "```yaml\ntests:\n- input: |\n    5 5\n  output: |\n    10\n  explanation: |\n    5 + 5\n```"


def test_a_stdin_problem_runs_the_whole_flow_on_standard_input_and_output(scripted_server, sandbox_pool, tmp_path):
    stdin_reflection = reflection(1, "1 2")
    scripted = router(scripted_server, 1, reflect=[stdin_reflection], ai_tests=[SUM_AI_TESTS], solve=[SUM_BAD],
                      fix_solution=[SUM_GOOD])
    problem = Problem(id="sum", kind="stdio", statement="Read a and b; print a + b.",
                      public_tests=[TestCase(kind="stdio", stdin="1 2\n", expected_stdout="3\n")],
                      hidden_tests=[TestCase(kind="stdio", stdin="-1 10\n", expected_stdout="9\n")])
    strategy = AlphaCodium(AlphaCodiumSettings(initial_attempts=0))
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path, (problem,))
    row = results[0]
    assert not errors and row["passed"] and row["notes"]["verified"] and row["notes"]["ai_tests"] == 1
    assert scripted.seen == [S + s for s in ("reflect", "possible_solutions", "choose_best", "ai_tests", "solve",
                                             "analyze_failure", "fix_solution")]
    error = "test input:\n1 2\n\nexpected output:\n3\n\ncode output:\n-1\n"  # the real run's stdout, not a call's
    assert error in prompts(scripted_server, "fix_solution")[0]
    assert row["notes"]["final_passed"] == 2 and "print(a + b)" in row["code"]
