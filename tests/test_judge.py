"""The judge on real data: HumanEval canonical solutions and mutants, stdio problems, and forged passes."""

from __future__ import annotations

import ast
import json

import pytest

from solidcoder.datasets.humaneval import docstring_asserts, prompt_header
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase, argument_lines_test


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def humaneval_problem(row: dict) -> Problem:
    """The official test as published, with the prompt's header before the program and the test (the official
    harness runs prompt + completion + test)."""
    test = TestCase(kind="call", script=row["test"], style="check")
    return Problem(id=row["task_id"], kind="call", statement=row["prompt"], entry_point=row["entry_point"],
                   hidden_tests=[test], time_limit_s=10.0, header=prompt_header(row["prompt"], row["entry_point"]))


def call_problem(tests: list[TestCase], entry_point: str = "add") -> Problem:
    return Problem(id="p", kind="call", statement="", entry_point=entry_point, public_tests=tests, time_limit_s=2.0)


@pytest.fixture(scope="module")
def humaneval(humaneval_file):
    return read_jsonl(humaneval_file)


@pytest.fixture(scope="module")
def judge(sandbox_pool):
    return Judge(sandbox_pool)


def test_all_164_humaneval_canonical_solutions_pass(judge, humaneval):
    assert len(humaneval) == 164
    failed = []
    for row in humaneval:
        problem = humaneval_problem(row)
        report = judge.judge(problem, row["prompt"] + row["canonical_solution"], problem.hidden_tests)
        if not report.passed:
            failed.append((row["task_id"], [v.detail for v in report.verdicts]))
    assert failed == []


class _FlipFirstOperator(ast.NodeTransformer):
    """A classic mutation: the first arithmetic or comparison operator becomes its opposite."""

    ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv}
    COMPARISON = {ast.Lt: ast.GtE, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.GtE: ast.Lt, ast.Eq: ast.NotEq,
                  ast.NotEq: ast.Eq}

    def __init__(self) -> None:
        self.done = False

    def visit_BinOp(self, node):
        if not self.done and type(node.op) in self.ARITHMETIC:
            node.op, self.done = self.ARITHMETIC[type(node.op)](), True
        return self.generic_visit(node)

    def visit_Compare(self, node):
        if not self.done and type(node.ops[0]) in self.COMPARISON:
            node.ops[0], self.done = self.COMPARISON[type(node.ops[0])](), True
        return self.generic_visit(node)


def mutate(body: str) -> str | None:
    """Mutate an indented function body (HumanEval's canonical_solution); None when nothing could be flipped."""
    flipper = _FlipFirstOperator()
    tree = flipper.visit(ast.parse("if True:\n" + body))
    return ast.unparse(tree).split("\n", 1)[1] + "\n" if flipper.done else None


def test_mutated_humaneval_solutions_fail(judge, humaneval):
    mutants = [(row, m) for row in humaneval if (m := mutate(row["canonical_solution"]))]
    caught = 0
    for row, mutant in mutants:
        problem = humaneval_problem(row)
        caught += not judge.judge(problem, row["prompt"] + mutant, problem.hidden_tests).passed
    assert len(mutants) > 100
    assert caught / len(mutants) > 0.85  # a few mutants are equivalent to the original


def test_sample_asserts_run_one_verdict_each(judge, humaneval):
    row = next(r for r in humaneval if r["task_id"] == "HumanEval/0")
    tests = [TestCase(kind="call", script=line) for line in docstring_asserts(row["prompt"])]  # the loader's
    code = row["prompt"] + "    return False\n"
    report = judge.judge(humaneval_problem(row), code, tests)
    assert len(report.verdicts) == len(tests) == 2
    assert [v.status for v in report.verdicts] == ["pass", "fail"]
    assert "AssertionError" in report.verdicts[1].detail


def test_call_expected_reports_actual_value(judge):
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3), TestCase(kind="call", call="add(2, 2)", expected=5)]
    report = judge.judge(call_problem(tests), "def add(a, b):\n    return a + b")
    assert [v.status for v in report.verdicts] == ["pass", "fail"]
    assert report.verdicts[1].actual == "4" and "expected 5" in report.verdicts[1].detail


def test_a_failing_test_does_not_hide_the_others(judge):
    tests = [TestCase(kind="call", call=f"add({i}, 1)", expected=i + 1) for i in range(4)]
    code = "def add(a, b):\n    if a == 1:\n        raise ValueError('boom')\n    return a + b"
    report = judge.judge(call_problem(tests), code)
    assert [v.status for v in report.verdicts] == ["pass", "error", "pass", "pass"]


def test_stop_at_first_failure_stops(judge):
    tests = [TestCase(kind="call", call=f"add({i}, 1)", expected=0) for i in range(4)]
    report = judge.judge(call_problem(tests), "def add(a, b):\n    return a + b", stop_at_first_failure=True)
    assert len(report.verdicts) == 1 and not report.passed


def test_a_crash_mid_run_is_charged_to_one_test_and_the_rest_rerun(judge):
    tests = [TestCase(kind="call", call=f"add({i}, 1)", expected=i + 1) for i in range(4)]
    code = "import os\ndef add(a, b):\n    if a == 1:\n        os._exit(0)\n    return a + b"
    report = judge.judge(call_problem(tests), code)
    assert [v.status for v in report.verdicts] == ["pass", "error", "pass", "pass"]
    assert "process ended during the test" in report.verdicts[1].detail


def test_per_test_timeout_does_not_stop_later_tests(judge):
    tests = [TestCase(kind="call", call="add(0, 0)", expected=0), TestCase(kind="call", call="add(1, 0)", expected=1)]
    code = "def add(a, b):\n    while a == 0:\n        pass\n    return a + b"
    problem = Problem(id="t", kind="call", statement="", entry_point="add", public_tests=tests, time_limit_s=0.5)
    report = judge.judge(problem, code)
    assert [v.status for v in report.verdicts] == ["timeout", "pass"]


def test_syntax_error_fails_every_test(judge):
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3)] * 2
    report = judge.judge(call_problem(tests), "def add(a, b)\n    return a + b")
    assert [v.status for v in report.verdicts] == ["error", "error"]
    assert "SyntaxError" in report.verdicts[0].detail


def test_forged_pass_by_sys_exit_before_the_tests(judge):
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3)]
    report = judge.judge(call_problem(tests), "import sys\nsys.exit(0)\ndef add(a, b):\n    return a + b")
    assert not report.passed


def test_forged_pass_by_os_exit_before_the_tests(judge):
    tests = [TestCase(kind="call", script="assert add(1, 2) == 3")]
    report = judge.judge(call_problem(tests), "import os\nos._exit(0)\ndef add(a, b):\n    return 0")
    assert not report.passed and report.verdicts[0].status == "error"


def test_forged_pass_by_writing_a_fake_status(judge):
    fake = (
        "import os, json\n"
        "for fd in (1, 2, 3, 4):\n"
        "    try:\n"
        "        verdict = json.dumps({'event': 'test', 'index': 0, 'ok': True}).encode()\n"
        "        os.write(fd, b'0' * 32 + b' ' + verdict + b'\\n')\n"
        "        os.write(fd, b'0' * 32 + b' {\"event\": \"done\"}\\n')\n"
        "    except OSError:\n        pass\n"
        "os._exit(0)\n"
    )
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3)]
    assert not judge.judge(call_problem(tests), fake + "def add(a, b):\n    return 0").passed


ALWAYS_EQUAL = "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"


def test_forged_pass_by_always_equal_object_in_a_call_test(judge):
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3)]
    report = judge.judge(call_problem(tests), ALWAYS_EQUAL + "def add(a, b):\n    return Anything()")
    assert not report.passed


def test_forged_pass_by_always_equal_object_in_an_assert_script(judge):
    tests = [TestCase(kind="call", script="assert add(1, 2) == 3")]
    report = judge.judge(call_problem(tests), ALWAYS_EQUAL + "def add(a, b):\n    return Anything()")
    assert not report.passed and report.verdicts[0].status == "fail"  # equality decided in the judge, not by Anything


def test_forged_pass_by_int_subclass(judge):
    code = "class Sly(int):\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Sly(0)"
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3), TestCase(kind="call", script="assert add(1, 2) == 3")]
    report = judge.judge(call_problem(tests), code)
    assert [v.passed for v in report.verdicts] == [False, False]


def test_forged_pass_by_patching_the_harness_module(judge):
    code = (
        "import solidcoder.execution.inside.harness as h, solidcoder.execution.inside.compare as c\n"
        "h.strict_equal = c.strict_equal = lambda *a, **k: True\n"
        "h.is_plain_value = c.is_plain_value = lambda *a: True\n"
        "def add(a, b):\n    return 0\n"
    )
    tests = [TestCase(kind="call", call="add(1, 2)", expected=3)]
    assert not judge.judge(call_problem(tests), code).passed


def test_leetcode_style_method_entry_point(judge):
    code = "class Solution:\n    def twoSum(self, a, b):\n        return a + b\n"
    tests = [TestCase(kind="call", script="assert Solution().twoSum(1, 2) == 3"),
             TestCase(kind="call", call="Solution().twoSum(2, 2)", expected=4)]
    problem = Problem(id="lc", kind="call", statement="", entry_point="Solution.twoSum", public_tests=tests)
    assert judge.judge(problem, code).passed
    assert judge.judge(problem, code.replace("a + b", "a - b")).pass_count == 0


def test_apps_call_tests_from_argument_lines(judge, fixture_data):
    rows = [r for r in read_jsonl(fixture_data / "apps.jsonl") if r["starter_code"]]
    row = next(r for r in rows if "def count_change(money, coins)" in r["starter_code"])
    tests = [argument_lines_test("count_change", t["input"], t["output"]) for t in row["test_list"]]
    solution = (
        "def count_change(money, coins):\n"
        "    ways = [1] + [0] * money\n"
        "    for c in coins:\n"
        "        for m in range(c, money + 1):\n"
        "            ways[m] += ways[m - c]\n"
        "    return ways[money]\n"
    )
    report = judge.judge(call_problem(tests, "count_change"), solution)
    assert report.passed and report.total == len(row["test_list"]) > 3
    wrong = solution.replace("return ways[money]", "return ways[money] + 1")
    assert judge.judge(call_problem(tests, "count_change"), wrong).pass_count == 0


def lookup_program(cases: list[tuple[str, str]]) -> str:
    """A stdio program that answers each known input with a given output: exercises the real test data."""
    table = {stdin: out for stdin, out in cases}
    return f"import sys\nprint({table!r}[sys.stdin.read()], end='')\n"


def stdio_tests(rows: list[dict], field_in: str, field_out: str) -> list[TestCase]:
    return [TestCase(kind="stdio", stdin=r[field_in], expected_stdout=r[field_out]) for r in rows]


def test_stdio_judging_on_codecontests_tests(judge, fixture_data):
    rows = read_jsonl(fixture_data / "codecontests.jsonl")
    checked = 0
    for row in rows[:6]:
        cases = [(t["input"]["stdin"], t["output"]["stdout"]) for t in json.loads(row["test"])][:20]
        tests = [TestCase(kind="stdio", stdin=i, expected_stdout=o) for i, o in cases]
        problem = Problem(id=str(row["id"]), kind="stdio", statement=row["content"], public_tests=tests)
        assert judge.judge(problem, lookup_program(cases)).passed
        if len({o for _, o in cases}) > 1:  # answering with another test's output must fail somewhere
            shifted = [(i, cases[(k + 1) % len(cases)][1]) for k, (i, _) in enumerate(cases)]
            assert not judge.judge(problem, lookup_program(shifted)).passed
            checked += 1
    assert checked >= 3


def test_stdio_judging_on_apps_tests(judge, fixture_data):
    rows = [r for r in read_jsonl(fixture_data / "apps.jsonl") if not r["starter_code"]][:8]
    for row in rows:
        # A few upstream outputs are one-element lists of the expected stdout.
        cases = [(t["input"], t["output"] if isinstance(t["output"], str) else "\n".join(t["output"]))
                 for t in row["test_list"]][:20]
        tests = [TestCase(kind="stdio", stdin=i, expected_stdout=o) for i, o in cases]
        problem = Problem(id=row["name"], kind="stdio", statement=row["description"], public_tests=tests)
        report = judge.judge(problem, lookup_program(cases))
        assert report.passed, (row["name"], [v.detail for v in report.failures()])


def test_stdio_tolerates_trailing_whitespace_and_float_noise(judge):
    tests = [TestCase(kind="stdio", stdin="", expected_stdout="0.333333\n1 2\n")]
    problem = Problem(id="f", kind="stdio", statement="", public_tests=tests)
    assert judge.judge(problem, "print(1/3)\nprint('1 2   ')\nprint()").passed
    assert not judge.judge(problem, "print(0.3334)\nprint('1 2')").passed


def test_stdio_several_acceptable_outputs(judge):
    tests = [TestCase(kind="stdio", stdin="", expected_stdout="YES\n", accepted_outputs=["yes\n"])]
    problem = Problem(id="y", kind="stdio", statement="", public_tests=tests)
    assert judge.judge(problem, "print('yes')").passed
    assert not judge.judge(problem, "print('no')").passed


def test_stdio_wrong_answer_detail_names_the_difference(judge):
    tests = [TestCase(kind="stdio", stdin="2 3", expected_stdout="5\n")]
    problem = Problem(id="s", kind="stdio", statement="", public_tests=tests)
    report = judge.judge(problem, "a, b = map(int, input().split())\nprint(a * b)")
    assert report.verdicts[0].status == "fail" and "'5'" in report.verdicts[0].detail
    assert report.verdicts[0].actual == "6\n"


def test_stdio_runtime_error_and_timeout_verdicts(judge):
    tests = [TestCase(kind="stdio", stdin="", expected_stdout="1\n")]
    problem = Problem(id="e", kind="stdio", statement="", public_tests=tests, time_limit_s=0.5)
    assert judge.judge(problem, "raise SystemExit(3)").verdicts[0].status == "error"
    assert judge.judge(problem, "while True: pass").verdicts[0].status == "timeout"


def test_a_worker_killed_mid_run_raises_sandbox_failure_never_a_verdict():
    import asyncio
    import threading

    from solidcoder.errors import SandboxFailure
    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool

    tests = [TestCase(kind="stdio", stdin="", expected_stdout="1\n")]
    problem = Problem(id="i", kind="stdio", statement="", public_tests=tests, time_limit_s=3.0)
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        threading.Timer(0.3, pool._workers[0].proc.kill).start()
        with pytest.raises(SandboxFailure, match="worker died"):
            asyncio.run(Judge(pool).ajudge(problem, "import time\ntime.sleep(2)\nprint(1)"))
        assert Judge(pool).judge(problem, "print(1)").passed  # the worker is started again for the next run
        assert Judge(pool).judge(problem, "print(2)").verdicts[0].status == "fail"


@pytest.mark.parametrize("stop", [False, True])
def test_a_worker_that_will_not_start_raises_sandbox_failure_from_both_entry_points(unstartable_pool, stop):
    import asyncio

    from solidcoder.errors import SandboxFailure

    stdio = Problem(id="s", kind="stdio", statement="", time_limit_s=2.0,
                    public_tests=[TestCase(kind="stdio", stdin="", expected_stdout="1\n")] * 2)
    calls = call_problem([TestCase(kind="call", call="add(1, 2)", expected=3)])
    judge = Judge(unstartable_pool)
    for problem, code in ((stdio, "print(1)"), (calls, "def add(a, b):\n    return a + b\n")):
        with pytest.raises(SandboxFailure, match="worker unavailable"):
            asyncio.run(judge.ajudge(problem, code, stop_at_first_failure=stop))
        with pytest.raises(SandboxFailure, match="worker unavailable"):
            judge.judge(problem, code, stop_at_first_failure=stop)


def test_a_program_that_fakes_a_sandbox_failure_or_crashes_gets_a_verdict(judge):
    tests = [TestCase(kind="stdio", stdin="", expected_stdout="1\n")]
    problem = Problem(id="f", kind="stdio", statement="", public_tests=tests, time_limit_s=2.0)
    faker = "import os\nos.write(2, b'sandbox setup failed: fake')\nos._exit(121)"
    crash = "import os\nos.abort()"
    assert [judge.judge(problem, code).verdicts[0].status for code in (faker, crash)] == ["error", "error"]
    calls = call_problem([TestCase(kind="call", call="add(1, 2)", expected=3)])
    assert judge.judge(calls, "import os\ndef add(a, b):\n    os.abort()\n").verdicts[0].status == "error"
