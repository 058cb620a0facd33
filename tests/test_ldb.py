"""LDB (`--strategy ldb`): the block tracer on a known program, exact blocks and values; the strategy on the
scripted server: stage order and call counts, a seed option, the stop once the visible tests pass."""

from __future__ import annotations

import json

from stage_router import StageRouter
from test_bench_strategies import BAD, GOOD, run, run_capped

from solidcoder.execution.blocks import shorten, trace_blocks
from solidcoder.strategies import make_strategy

LOOP = "def f(n):\n    total = 0\n    for i in range(n):\n        if i % 2:\n            total += i\n    return total\n"
ZERO_BUG = "```python\ndef add(a, b):\n    return a if b else 0\n```"  # fails add(1, 2) as BAD does
DEBUG = json.dumps({"blocks": [{"block": "BLOCK-0", "correct": False, "explanation": "subtracts instead of adds"}]})


def test_the_block_tracer_records_each_executed_block_and_the_variables_after_it(sandbox_pool):
    trace = trace_blocks(sandbox_pool, LOOP, call="f(3)")
    assert trace.error is None and trace.count == 10
    assert [b.lines for b in trace.blocks] == [(2,), (3,), (4,), (3,), (4,), (5,), (3,), (4,), (3,), (6,)]
    assert [dict(b.after).get("total") for b in trace.blocks] == ["0", "0", "0", "0", "0", "1", "1", "1", "1", "1"]
    assert trace.blocks[0].before == (("n", "3"),) and trace.blocks[-1].after == (
        ("n", "3"), ("total", "1"), ("i", "2"), ("_ret", "1"))
    assert trace.blocks[5].render(LOOP) == ("            # n=3\ttotal=0\ti=1\n            total += i\n"
                                            "            # n=3\ttotal=1\ti=1")


def test_more_than_ten_blocks_show_the_first_five_and_the_last_five(sandbox_pool):
    trace = trace_blocks(sandbox_pool, LOOP, call="f(6)")
    assert trace.count == 18 and [b.index for b in trace.selected] == [0, 1, 2, 3, 4, 13, 14, 15, 16, 17]
    assert trace.prompt_text(LOOP).count("[BLOCK-") == 10 and "[BLOCK-9]\n    # " in trace.prompt_text(LOOP)


def test_long_values_are_shortened_as_ldb_shortens_them(sandbox_pool):
    trace = trace_blocks(sandbox_pool, "def g(s):\n    t = s * 2\n    return t\n", call="g('ab' * 40)")
    after = trace.blocks[0].values(trace.blocks[0].after)
    assert after == shorten("s=" + "ab" * 40 + "\tt=" + "ab" * 80) and len(after) == 103 and after[50:53] == "..."


def test_a_program_that_raises_reports_its_error_and_a_stdin_program_is_traced_at_module_level(sandbox_pool):
    crash = trace_blocks(sandbox_pool, "def g(a):\n    return 1 // a\n", call="g(0)")
    assert crash.error.startswith("ZeroDivisionError")
    script = trace_blocks(sandbox_pool, "x = int(input())\nif x:\n    y = x * 2\nprint(y)\n", stdin="4\n")
    assert [(b.function, b.lines) for b in script.blocks] == [("<module>", (1, 2)), ("<module>", (3,)),
                                                              ("<module>", (4,))]
    assert script.blocks[1].after == (("x", "4"), ("y", "8"))


def test_ldb_debugs_then_fixes_each_round_and_stops_when_the_visible_tests_pass(scripted_server, sandbox_pool,
                                                                                tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD)
    router.queue("strategies/ldb_debug", DEBUG, DEBUG).queue("strategies/ldb_fix", BAD, GOOD, BAD)
    results, errors = run(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path)
    assert errors == [] and results[0]["passed"] and results[0]["notes"]["verified"]
    assert router.seen == ["strategies/direct", *["strategies/ldb_debug", "strategies/ldb_fix"] * 2]
    rounds = results[0]["notes"]["rounds"]
    assert [r["passed"] for r in rounds] == [0, 1] and rounds[0]["verdicts"][0]["correct"] is False
    debug = router.requests("strategies/ldb_debug")[0].body
    assert "assert add(1, 2) == 3 # Real Execution Output: -1" in router.prompt("strategies/ldb_debug")
    block = "[BLOCK-0]\n    # a=1\tb=2\n    return a - b\n    # a=1\tb=2\t_ret=-1"
    assert block in router.prompt("strategies/ldb_debug")
    assert "schema" in json.dumps(debug.get("response_format"))
    assert router.prompt("strategies/ldb_fix").endswith("Please fix the Python 3 code.")


def test_ldb_stops_after_its_rounds_and_answers_with_the_last_program(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server, **{"strategies/ldb_debug": DEBUG, "strategies/ldb_fix": BAD})
    router.queue("strategies/direct", BAD)
    results, _ = run(scripted_server, make_strategy("ldb:rounds=3"), sandbox_pool, tmp_path)
    assert not results[0]["passed"] and results[0]["notes"]["verified"] is False
    assert router.seen == ["strategies/direct", *["strategies/ldb_debug", "strategies/ldb_fix"] * 3]


def test_a_seed_that_passes_is_not_debugged_and_the_seed_is_any_strategy(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/cot", GOOD)
    results, _ = run(scripted_server, make_strategy("ldb:seed=cot"), sandbox_pool, tmp_path)
    assert results[0]["passed"] and router.seen == ["strategies/cot"] and results[0]["notes"]["rounds"] == []


def test_a_program_that_cannot_be_traced_gets_ldbs_feedback_and_no_debug_call(scripted_server, sandbox_pool,
                                                                              tmp_path):
    crash = "```python\ndef add(a, b):\n    return a / 0\n```"
    router = StageRouter(scripted_server).queue("strategies/direct", crash).queue("strategies/ldb_fix", GOOD)
    results, _ = run(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path)
    assert results[0]["passed"] and router.seen == ["strategies/direct", "strategies/ldb_fix"]
    assert "Feedback: With the above function, the assertion is `assert add(1, 2) == 3`" in router.prompt(
        "strategies/ldb_fix")


def test_the_call_cap_mid_round_answers_with_the_last_program_checked(scripted_server, sandbox_pool, tmp_path):
    # seed, then debug + fix: the cap of 4 calls falls on round 2's fix call; round 1's program is the answer
    router = StageRouter(scripted_server, **{"strategies/ldb_debug": DEBUG}).queue("strategies/direct", BAD)
    router.queue("strategies/ldb_fix", ZERO_BUG, GOOD)
    totals, results, errors = run_capped(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path, 4)
    assert not errors and not totals.stopped and results[0]["calls"] == 4 and not results[0]["passed"]
    assert "return a if b else 0" in results[0]["code"] and "cap of 4" in results[0]["notes"]["stopped"]
    assert len(results[0]["notes"]["rounds"]) == 1
