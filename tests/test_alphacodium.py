"""`alphacodium` on the scripted server: the anchor's stage order and call counts, the cycling regeneration with the
closest-candidate fallback, and the test-anchor rule (a fix that breaks a previously passed test is reverted)."""

from __future__ import annotations

import json
import math

from stage_router import StageRouter, template_of
from test_bench_strategies import run

from solidcoder.problem import Problem, TestCase
from solidcoder.stages.live import Evaluation, Outcome
from solidcoder.strategies import make_strategy
from solidcoder.strategies.alphacodium import AlphaCodium, AlphaCodiumSettings, _closest
from solidcoder.strategies.alphacodium_io import distance, load_reply

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


def reflection(count: int) -> str:
    """A JSON reply (what a backend enforcing the schema sends), one explanation per public test."""
    explanations = [{"input": "add(1, 2)", "output": "3", "explanation": "the sum"}] * count
    return json.dumps({"self_reflection": ["add two integers"], "tests_explanations": explanations})


def fixed(code: str) -> str:
    body = code.removeprefix("```python\n").removesuffix("```").replace("\n", "\n  ")
    return f"failed_tests: add\nwhat_went_wrong: wrong sum\nfixed_flow: add them\nfixed_code: |\n  {body}"


def adder(*calls: tuple[str, int]) -> Problem:
    return Problem(id="add", kind="call", statement="Write add(a, b) returning a + b.", entry_point="add",
                   public_tests=[TestCase(kind="call", call=c, expected=e) for c, e in calls],
                   hidden_tests=[TestCase(kind="call", call="add(-1, 10)", expected=9)])


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
    formats = [r.body.get("response_format", {}).get("type") for r in scripted_server.chat_requests()]
    assert formats == ["json_schema"] * 4 + [None]  # YAML stages carry the schema, the code stage does not


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


def test_yaml_replies_are_read_as_the_anchor_reads_them():
    assert load_reply("```yaml\nname: a\n```") == {"name": "a"}
    assert load_reply("Sure:\n```yaml\nname: a\n```\nDone.") == {"name": "a"}
    broken = "tests:\n- explanation: ok\n  input: 1: 2\n  output: x"  # a colon in a plain scalar: block scalars fix it
    assert load_reply(broken) is None
    read = {"tests": [{"explanation": "ok", "input": "1: 2", "output": "x"}]}
    assert load_reply(broken, ("input:", "output:")) == read


def test_distance_is_the_anchors_numeric_or_line_difference_and_infinite_for_a_crash():
    def evaluation(*outcomes: tuple[str, str, str]) -> Evaluation:
        return Evaluation("", [Outcome(f"t{i}", False, status, expected=e, actual=a)
                               for i, (status, e, a) in enumerate(outcomes)])

    assert distance(evaluation(("fail", "3\n5", "4\n1"))) == 5.0
    assert distance(evaluation(("fail", "a b\nc", "a b\nd"), ("fail", "1", "2"))) == 2.0
    assert distance(evaluation(("fail", "3", "4"), ("error", "3", "Traceback"))) == math.inf
    assert _closest([(math.inf, "a"), (2.0, "b"), (2.0, "c")]) == "b"
    assert _closest([(math.inf, "a"), (math.inf, "b")]) == "b"  # all infinite: the last one, as the anchor


SUM_GOOD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
SUM_BAD = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
SUM_AI_TESTS = "```yaml\ntests:\n- input: |\n    5 5\n  output: |\n    10\n  explanation: |\n    5 + 5\n```"


def test_a_stdin_problem_runs_the_whole_flow_on_standard_input_and_output(scripted_server, sandbox_pool, tmp_path):
    stdin_reflection = json.dumps({"self_reflection": ["sum two integers"], "tests_explanations": [
        {"input": "1 2", "output": "3", "explanation": "the sum"}]})
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
