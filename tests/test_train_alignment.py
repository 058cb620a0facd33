"""CodeRL+ parts without a model: the tracer-based task builder (real sandbox), both rewards, buffer and mixer."""

from __future__ import annotations

import pytest

from solidcoder.errors import SandboxFailure
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase
from solidcoder.prompting import PromptLibrary
from solidcoder.train.alignment import (
    AlignmentTask,
    AlignmentTaskBuilder,
    BufferFeeder,
    Rollout,
    TaskBuffer,
    TaskBufferConfig,
    TaskBuilderConfig,
)
from solidcoder.train.alignment_reward import AlignmentReward, AlignmentRewardConfig, AlignmentScorer
from solidcoder.train.code_reward import CodeReward, extract_program
from solidcoder.train.mixing import MixConfig, PromptMixer, PromptRenderer, code_row, split_groups


def stdio(pid: str, stdin: str, out: str) -> Problem:
    test = TestCase(kind="stdio", stdin=stdin, expected_stdout=out)
    return Problem(pid, "stdio", f"Solve {pid}.", public_tests=[test])


def call(pid: str, entry: str, expr: str, value) -> Problem:
    return Problem(pid, "call", "Solve it.", entry_point=entry, public_tests=[TestCase(kind="call", call=expr,
                                                                                     expected=value)])


def failed(problem: Problem, code: str, statuses=("fail",), actual="0") -> Rollout:
    return Rollout(problem, code, False, list(statuses), problem.public_tests[0], actual)


@pytest.fixture
def builder(sandbox_pool):
    return AlignmentTaskBuilder(sandbox_pool)


LOOP = "n = int(input())\ntotal = 0\nfor i in range(n):\n    total += i * i\nprint(total + 1)\n"


def test_loop_program_gives_final_values_of_module_variables(builder):
    task = builder.build(failed(stdio("sq", "4\n", "14\n"), LOOP))
    assert task.truth == {"n": 4, "total": 14, "i": 3}
    assert task.program_input == "4\n" and task.final_output == "15\n"


def test_nested_functions_are_named_by_qualified_scope(builder):
    code = ("def outer(k):\n    base = k + 1\n    def inner(v):\n        w = v * base\n        return w\n"
            "    return inner(2) + inner(3)\n")
    task = builder.build(failed(call("nest", "outer", "outer(1)", 0), code))
    assert task.truth == {"outer.k": 1, "outer.base": 2, "outer.inner.v": 3, "outer.inner.w": 6}
    assert task.program_input == "outer(1)"


def test_recursion_keeps_the_outermost_call(builder):
    code = "def fact(n):\n    if n <= 1:\n        return 0\n    rest = fact(n - 1)\n    return n * rest\n"
    task = builder.build(failed(call("fact", "fact", "fact(3)", 6), code))
    assert task.truth == {"fact.n": 3, "fact.rest": 0}


def test_shadowed_names_stay_apart(builder):
    code = "x = 10\ndef f(y):\n    x = y * 2\n    return x\nr = f(int(input()))\nprint(r)\n"
    task = builder.build(failed(stdio("sh", "4\n", "9\n"), code))
    assert task.truth == {"x": 10, "r": 8, "f.y": 4, "f.x": 8}


def test_runtime_errors_give_no_task(builder):
    crash = "def f(a):\n    b = [1][a]\n    return b\n"
    assert builder.build(failed(call("c", "f", "f(5)", 1), crash, statuses=["error"])) is None  # judge saw a crash
    assert builder.build(failed(call("c", "f", "f(5)", 1), crash)) is None  # the trace itself raises
    timeout = failed(call("c", "f", "f(0)", 2), "def f(a):\n    return a\n", statuses=["fail", "timeout"])
    assert builder.build(timeout) is None


def test_only_primitive_and_small_container_values_are_kept(builder):
    code = ("import sys\nclass Box:\n    pass\nbox = Box()\nsmall = [1, 'a', None]\nbig = list(range(50))\n"
            "nested = [[1]]\nflag = True\nratio = 0.5\nprint(len(small))\n")
    task = builder.build(failed(stdio("p", "", "4\n"), code))
    assert task.truth == {"small": [1, "a", None], "flag": True, "ratio": 0.5}


def test_the_paper_preset_keeps_primitive_variables_only_and_all_of_them(sandbox_pool):
    pytest.importorskip("trl", reason="the trainer is the train extra: pip install 'solidcoder[train]'")
    from solidcoder.train.config import load_config
    from solidcoder.train.trainer import build_components

    parts = build_components(load_config(preset="paper"), sandbox_pool, [])
    code = "small = [1, 2]\n" + "".join(f"v{i} = {i}\n" for i in range(10)) + "print(v0)\n"
    task = parts.feeder.builder.build(failed(stdio("p", "", "4\n"), code))
    assert task.truth == {f"v{i}": i for i in range(10)}  # no container, no cap of 8


def test_variable_cap_and_module_only_released_variant(sandbox_pool):
    code = "a = 1\nb = 2\nc = 3\nd = 4\ndef f():\n    z = 9\n    return z\nf()\nprint(a)\n"
    released = AlignmentTaskBuilder(sandbox_pool, TaskBuilderConfig(max_variables=3, module_only=True))
    assert released.build(failed(stdio("cap", "", "2\n"), code)).truth == {"a": 1, "b": 2, "c": 3}


def test_script_tests_give_their_first_call_as_input(builder):
    def problem(script):
        return Problem("s", "call", "x", entry_point="f", public_tests=[TestCase(kind="call", script=script)])

    code = "def f(n):\n    half = n // 3\n    return half\n"
    task = builder.build(failed(problem("def check(candidate):\n    assert candidate(9) == 4.5\n"), code))
    assert task.program_input == "f(9)" and task.truth == {"f.n": 9, "f.half": 3}
    assert builder.build(failed(problem("assert f(7) == 3.5\nassert f(1) == 0.5"), code)).program_input == "f(7)"
    assert builder.build(failed(problem("assert True"), code)) is None  # no call to take an input from


def test_buffer_keeps_recent_distinct_tasks():
    buffer = TaskBuffer(TaskBufferConfig(capacity=2))
    tasks = [AlignmentTask("p", f"x = {i}", "", {"x": i}) for i in range(3)]
    assert buffer.add(tasks[0]) and not buffer.add(tasks[0])  # the same program and input once
    buffer.add(tasks[1])
    buffer.add(tasks[2])
    assert len(buffer) == 2 and {t.truth["x"] for t in buffer.sample(5)} == {1, 2}
    assert AlignmentTask.from_json(tasks[2].to_json()) == tasks[2]


# --- alignment reward -------------------------------------------------------------------------------------------
TASK = AlignmentTask("p", "code", "", {"total": 14, "ratio": 0.1, "seen": (1, "a"), "f.flag": False}, "15\n")


@pytest.mark.parametrize(("answer", "reward"), [
    ("[ANSWER]\ntotal = 14\nratio = 0.1\nseen = (1, 'a')\nf.flag = False\n[/ANSWER]", 1.0),  # exact
    ("[ANSWER]\ntotal = 14\nratio = 0.30000000000000004\nseen = (1, 'a')\nf.flag = False\n[/ANSWER]", 0.75),
    ("[ANSWER]\ntotal = 13\nratio = 1\nseen = [1, 'a']\nf.flag = 0\n[/ANSWER]", 0.0),  # wrong, wrong type
    ("[ANSWER]\ntotal = 14.0000000001\nratio = 0.1000000000001\n[/ANSWER]", 0.5),  # float tolerance, two missing
    ("[ANSWER]\ntotal = __import__('os').getpid()\nratio = [0.1\nseen = (1, 'a'\nf.flag = nope\n[/ANSWER]", 0.0),
    ("no answer block at all", 0.0),
    ("thinking: total = 3 ...\ntotal = 14\n`ratio` = 0.1", 0.5),  # lines without a block, the last one wins
    ("[ANSWER]\ntotal = 1\n[/ANSWER]\nretry\n[ANSWER]\ntotal = 14\nf.flag = False\n[/ANSWER]", 0.5),  # last block
])
def test_paper_reward_is_the_fraction_of_exactly_predicted_variables(answer, reward):
    assert AlignmentScorer().score(answer, TASK) == pytest.approx(reward)


def test_released_variant_adds_a_format_bonus_and_counts_the_output():
    scorer = AlignmentScorer(AlignmentRewardConfig(variant="released"))
    good = 'I think...\n{"final_output": "15", "variables": {"total": 14, "ratio": 0.1, "seen": "(1, \'a\')"}}'
    assert scorer.score(good, TASK) == pytest.approx(0.1 + 0.9 * 4 / 5)
    assert scorer.score('{"final_output": "0", "variables": {}}', TASK) == pytest.approx(0.1)
    assert scorer.score("[ANSWER]\ntotal = 14\n[/ANSWER]", TASK) == 0.0
    with pytest.raises(ValueError):
        AlignmentRewardConfig(variant="other")


def test_alignment_reward_function_scores_only_alignment_rows():
    reward = AlignmentReward()
    completions = [[{"role": "assistant", "content": "[ANSWER]\ntotal = 14\n[/ANSWER]"}]] * 2
    out = reward(prompts=[None, None], completions=completions, task=["code", "alignment"],
                 payload=["", TASK.to_json()])
    assert out == [None, 0.25]


# --- code reward ------------------------------------------------------------------------------------------------
def test_code_reward_judges_in_parallel_and_feeds_the_buffer(sandbox_pool):
    problem = stdio("sq", "4\n", "14\n")
    buffer = TaskBuffer()
    reward = CodeReward(Judge(sandbox_pool), {"sq": problem}, [BufferFeeder(AlignmentTaskBuilder(sandbox_pool),
                                                                            buffer)])
    right = "```python\nn = int(input())\nprint(sum(i * i for i in range(n)))\n```"
    crash = "```python\nprint(1 / 0)\n```"
    completions = [[{"role": "assistant", "content": c}] for c in (right, f"```py\n{LOOP}```", crash, "x")]
    out = reward(prompts=[None] * 5, completions=completions + [[]], task=["code"] * 4 + ["alignment"],
                 problem_id=["sq"] * 5)
    assert out == [1.0, 0.0, 0.0, 0.0, None]
    assert len(buffer) == 1 and buffer.sample(1)[0].truth["total"] == 14  # only the semantic failure
    assert reward.stats.judged == 4 and reward.stats.passed == 1 and reward.stats.sandbox_errors == 0


def test_sandbox_errors_are_counted_not_scored_zero(unstartable_pool):
    reward = CodeReward(Judge(unstartable_pool), {"sq": stdio("sq", "1", "1")})  # every run: the sandbox failed
    reward.config = type(reward.config)(max_sandbox_error_fraction=1.0)
    assert reward(prompts=[None], completions=["print(1)"], task=["code"], problem_id=["sq"]) == [None]
    assert reward.stats.sandbox_errors == 1
    reward.config = type(reward.config)()
    with pytest.raises(SandboxFailure):
        reward(prompts=[None], completions=["print(1)"], task=["code"], problem_id=["sq"])


def test_extract_program_prefers_the_last_python_block():
    assert extract_program("a\n```\nx = 1\n```\n```python\ny = 2\n```\n") == "y = 2\n"
    assert extract_program("plain = 1") == "plain = 1"


# --- mixing -----------------------------------------------------------------------------------------------------
def test_mixer_waits_for_the_buffer_then_holds_alpha_with_homogeneous_groups():
    problems = {f"p{i}": stdio(f"p{i}", "1", "1") for i in range(10)}
    renderer = PromptRenderer(PromptLibrary.from_env())
    buffer = TaskBuffer()
    mixer = PromptMixer(buffer, renderer, problems, MixConfig(alpha=0.4))
    rows = [dict(code_row(renderer, p)) for p in problems.values() for _ in range(3)]  # 10 groups of 3
    assert {r["task"] for r in mixer.mix(rows, 3)} == {"code"}
    for i in range(20):
        buffer.add(AlignmentTask("p0", f"x = {i}\nprint(x)", "1", {"x": i}))
    shares = []
    for _ in range(5):
        mixed = mixer.mix(rows, 3)
        groups = split_groups(mixed, 3)  # raises unless each group repeats one prompt
        shares.append(sum(g[0]["task"] == "alignment" for g in groups))
        assert all(len({r["task"] for r in g}) == 1 for g in groups)
    assert shares == [4, 4, 4, 4, 4] and mixer.stats.alignment_groups == 20
    assert "x = " in next(r for r in mixed if r["task"] == "alignment")["prompt"][-1]["content"]
    with pytest.raises(ValueError):
        split_groups(rows[1:4], 3)
    quarter = PromptMixer(buffer, renderer, problems, MixConfig(alpha=0.25))
    counts = [sum(r["task"] == "alignment" for r in quarter.mix(rows, 3)) // 3 for _ in range(4)]
    assert sum(counts) == 10 and set(counts) <= {2, 3}  # round(0.25 x 10) per batch on average, exactly in total


FORGED = ("import os, json\n"
          "os.write(3, json.dumps({'event': 'trace', 'scopes': {'<module>': {'total': '666'}}, 'error': None,\n"
          "                        'returned': None, 'exception': None}).encode() + b'\\n')\n"
          "os._exit(0)\n")


def test_a_program_that_forges_its_trace_gives_no_task(builder):
    """The tracer runs in the program's process, so a trace can be forged (trace.py's docstring): the forged record
    is what the tracer reports, and the task builder turns the program away instead of taking it as ground truth."""
    from solidcoder.execution.trace import trace_program

    assert trace_program(builder.pool, FORGED + LOOP).scopes == {"<module>": {"total": 666}}
    assert builder.build(failed(stdio("sq", "4\n", "14\n"), FORGED + LOOP)) is None
    assert builder.build(failed(stdio("sq", "4\n", "14\n"), LOOP)) is not None


@pytest.mark.parametrize("route", [
    "import os\n", "import sys as s\n", "import sys\nsys.modules\n", "from sys import settrace\n",
    "g = (i for i in [1])\nf = g.gi_frame\n", "x = getattr(1, 'real')\n", "print(__builtins__)\n",
    "import string\nstring.Formatter().get_field('0', [1], {})\n", "import typing\ntyping.sys\n",
    "import sys\nsys.stdin.buffer.raw\n", "open(3, 'w')\n", "class A:\n    def f(self):\n        self._x = 1\n",
])
def test_every_known_route_to_the_tracer_is_found(route):
    from solidcoder.execution.trace import forgery_route

    assert forgery_route(route + LOOP) is not None and forgery_route(LOOP) is None


def test_ordinary_programs_have_no_route():
    from solidcoder.execution.trace import forgery_route

    ordinary = ("import sys, math\nfrom collections import Counter\nfrom typing import List\n"
                "input = sys.stdin.readline\nsys.setrecursionlimit(10000)\n"
                "def f(xs: List[int]) -> int:\n    for _ in range(2):\n        pass\n"
                "    return max(Counter(xs).values())\n"
                "class P:\n    def __init__(self):\n        super().__init__()\n"
                "if __name__ == '__main__':\n    print(f([1, 1]), math.pi)\n")
    assert forgery_route(ordinary) is None
