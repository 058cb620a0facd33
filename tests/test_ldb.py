"""LDB (`--strategy ldb`): the block tracer on known programs, the blocks and values LDB's own tracer gives for them
(FloridSleeves/LLMDebugger@49ac191); the strategy on the scripted server: stage order and call counts, a seed
option, the stop once the visible tests pass, LDB's sampling of the debug and fix calls, a fix reply without code."""

from __future__ import annotations

import asyncio
import json

from stage_router import StageRouter
from test_bench_strategies import ADD, BAD, GOOD, run, run_capped

from solidcoder.bench.runner import BenchRunner, RunSpec
from solidcoder.bench.tasks import CodeTask
from solidcoder.execution.blocks import BlockTrace, atrace_blocks, shorten
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.models.retry import RetryPolicy
from solidcoder.prompting import PromptLibrary
from solidcoder.store import ResultStore, read_rows
from solidcoder.strategies import make_strategy

LOOP = "def f(n):\n    total = 0\n    for i in range(n):\n        if i % 2:\n            total += i\n    return total\n"
ZERO_BUG = "```python\ndef add(a, b):\n    return a if b else 0\n```"  # fails add(1, 2) as BAD does
DEBUG = json.dumps({"blocks": [{"block": "BLOCK-0", "correct": False, "explanation": "subtracts instead of adds"}]})


def trace_blocks(pool, code: str, **given) -> BlockTrace:
    """One block trace, run to its end here (the tracer is async: `atrace_blocks`)."""
    return asyncio.run(atrace_blocks(pool, code, **given))


def test_the_block_tracer_cuts_the_loop_program_into_the_anchors_seven_blocks(sandbox_pool):
    """LDB's own tracer (`get_code_traces_block`, FloridSleeves/LLMDebugger@49ac191) gives 7 blocks for `f(3)`.

    staticfg's blocks of LOOP: the module's ends at `def f` (line 1); f's are `total = 0` (2), the `for` header (3),
    the `if` header (4), `total += i` (5), `return total` (6). LDB probes each line of f that is the line before a
    block's first statement or its last statement's line, {1, ..., 6}: after `def` (the values at the call), after
    line 2, on entering the `for` body (3) and the `if` body (4), after line 5, and at the return (6, with `_ret`).
    `python -m trace` lists f's run from its call: 2 3 4 3 4 5 3 4 3 6. The probes run 1 2 3 3 4 5 3 6; line 1 is not
    in the trace (it only sets the values before), and each other probe takes the trace up to the next run of its
    line: [2] [3] [4 3] [4] [5] [3] [4 3 6], 7 blocks (a block per basic block run gave 10)."""
    trace = trace_blocks(sandbox_pool, LOOP, call="f(3)")
    assert trace.error is None and trace.shown and trace.count == 7
    assert [b.lines for b in trace.blocks] == [(2,), (3,), (4, 3), (4,), (5,), (3,), (4, 3, 6)]
    assert [dict(b.after).get("i") for b in trace.blocks] == [None, "0", "1", "1", "1", "2", "2"]
    assert [b.before for b in trace.blocks[:2]] == [(("n", "3"),), (("n", "3"), ("total", "0"))]
    assert trace.blocks[-1].after == (("n", "3"), ("total", "1"), ("i", "2"), ("_ret", "1"))
    assert trace.blocks[2].render(LOOP) == ("        # n=3\ttotal=0\ti=0\n        if i % 2:\n    for i in range(n):\n"
                                            "    # n=3\ttotal=0\ti=1")


def test_more_than_ten_blocks_show_the_first_five_and_the_last_five(sandbox_pool):
    trace = trace_blocks(sandbox_pool, LOOP, call="f(6)")
    assert trace.count == 14 and [b.index for b in trace.selected] == [0, 1, 2, 3, 4, 9, 10, 11, 12, 13]
    assert trace.prompt_text(LOOP).count("[BLOCK-") == 10 and "[BLOCK-9]\n    # " in trace.prompt_text(LOOP)


def test_a_helpers_lines_join_the_next_block_and_a_recursive_call_ends_the_trace(sandbox_pool):
    """As LDB's: only the entry function is probed, so a helper's lines, run after its caller's line, are taken by
    the next probe; the trace ends where the entry function is called again (LDB's anchor gives 6 and 1 blocks)."""
    helper = ("def sq(x):\n    return x * x\n\ndef f(n):\n    total = 0\n    for i in range(n):\n"
              "        total += sq(i)\n    return total\n")
    trace = trace_blocks(sandbox_pool, helper, call="f(2)")
    assert [b.lines for b in trace.blocks] == [(5,), (6,), (7,), (2, 6), (7,), (2, 6, 8)]
    fib = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"
    recursive = trace_blocks(sandbox_pool, fib, call="fib(3)")
    assert [(b.lines, b.before, b.after) for b in recursive.blocks] == [((2,), (("n", "1"),), (("n", "1"),))]


def test_the_lines_no_probe_takes_are_a_last_block_of_at_most_200_lines_without_values_after(sandbox_pool):
    """f's probe at its return takes the trace up to the return's line, listed before the helper runs; the helper's
    603 lines are left to a last block (LDB shows them all; here the first and last 100 around `...`)."""
    code = "def h(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n\ndef f(n):\n    return h(n)\n"
    trace = trace_blocks(sandbox_pool, code, call="f(300)")
    assert trace.count == 2 and trace.blocks[0].lines == (8,) and trace.blocks[1].after is None
    last = trace.blocks[1].render(code).split("\n")
    assert len(last) == 202 and last[:3] == ["    # n=300\t_ret=44850", "    t = 0", "    for i in range(n):"]
    assert last[101] == "..." and last[-1] == "    return t"


def test_long_values_are_shortened_as_ldb_shortens_them(sandbox_pool):
    trace = trace_blocks(sandbox_pool, "def g(s):\n    t = s * 2\n    return t\n", call="g('ab' * 40)")
    after = trace.blocks[0].values(trace.blocks[0].after)
    assert after == shorten("s=" + "ab" * 40 + "\tt=" + "ab" * 80 + "\t_ret=" + "ab" * 80)
    assert len(after) == 103 and after[50:53] == "..."


def test_an_instrumentation_that_does_not_compile_shows_the_whole_trace_as_one_block(sandbox_pool):
    """LDB's probe after the `if` header goes at the next line's indentation counted in 4-space levels: a body
    indented by 2 spaces gets it outside the body, the instrumented program does not compile, LDB's value run prints
    nothing and its whole trace is one block, with no values after it. A program staticfg fails on (a callee that
    subscripts a subscript) gets no blocks (LDB: `*execution fail*`, its one-line feedback)."""
    code = "def f(n):\n  if n:\n    n = n - 1\n  return n\n"
    trace = trace_blocks(sandbox_pool, code, call="f(1)")
    assert trace.shown and "does not compile" in trace.unprobed and [b.lines for b in trace.blocks] == [(2, 3, 4)]
    assert trace.prompt_text(code) == "\n[BLOCK-0]\n# \n  if n:\n    n = n - 1\n  return n"
    failed = trace_blocks(sandbox_pool, "def f(m):\n    s = m[0][0].strip()\n    return s\n", call="f([[' ']])")
    assert not failed.shown and failed.tracer.startswith("TracerFailure: staticfg cannot name the callee")


def test_a_line_after_a_frozen_modules_and_module_code_calling_the_entry_follow_ldbs_trace_listing(sandbox_pool):
    """`python -m trace` prints a frozen module's line without text or newline, so LDB loses the program line listed
    next (`c = Counter(xs)`, after `from collections import Counter` ran importlib's `_handle_fromlist`); a program
    whose own code calls the entry function has that call traced (LDB's first run runs the whole program), up to
    LDB's test line, while the values come from the test's call (its instrumented program stops after the entry).
    LDB's tracer gives the same blocks (values aside: it prints `Counter=<class ...>` too)."""
    frozen = "def f(xs):\n    from collections import Counter\n    c = Counter(xs)\n    return c[1]\n"
    trace = trace_blocks(sandbox_pool, frozen, call="f([1, 1])")
    assert [b.lines for b in trace.blocks] == [(2, 4)] and dict(trace.blocks[0].after)["_ret"] == "2"
    usage = "def f(n):\n    m = n + 1\n    return m\n\nprint(f(1))\n"
    trace = trace_blocks(sandbox_pool, usage, call="f(5)")
    assert trace.prompt_text(usage) == ("\n[BLOCK-0]\n    # n=5\n    m = n + 1\n    return m\n    # n=5\tm=6\t_ret=6"
                                        "\n[BLOCK-1]\n# n=5\tm=6\t_ret=6\nf(5) ")


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


def run_sampled(server, strategy, sandbox_pool, tmp_path, temperature: float, max_tokens: int):
    """`run`, at the run's own temperature and completion cap."""
    model = make_model("openai/scripted-model", ModelOptions(api_base=server.url, policy=RetryPolicy(attempts=1)))
    store = ResultStore(tmp_path / "run")
    task = CodeTask([ADD], strategy, PromptLibrary.from_env(), sandbox_pool, temperature, max_tokens)
    asyncio.run(BenchRunner(spec=RunSpec("t", strategy.name, "m", "h"), task=task, model=model, store=store,
                            concurrency=1).run())
    store.close()
    return read_rows(tmp_path / "run" / "results.jsonl")


def test_the_debug_and_fix_calls_run_at_ldbs_temperature_0_and_1024_tokens_whatever_the_run_sets(
        scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD)
    router.queue("strategies/ldb_debug", DEBUG).queue("strategies/ldb_fix", GOOD)
    results = run_sampled(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path, 0.8, 300)
    assert results[0]["passed"] and router.seen == ["strategies/direct", "strategies/ldb_debug", "strategies/ldb_fix"]
    sampled = {stage: [(r.body.get("temperature"), r.body.get("max_tokens")) for r in router.requests(stage)]
               for stage in ("strategies/direct", "strategies/ldb_debug", "strategies/ldb_fix")}
    assert sampled == {"strategies/direct": [(0.8, 300)], "strategies/ldb_debug": [(0.0, 1024)],
                       "strategies/ldb_fix": [(0.0, 1024)]}
    settings = make_strategy("ldb").settings()
    assert (settings["temperature"], settings["max_tokens"]) == (0.0, 1024)


def test_a_fix_reply_without_code_keeps_the_current_program(scripted_server, sandbox_pool, tmp_path):
    router = StageRouter(scripted_server).queue("strategies/direct", BAD)
    router.queue("strategies/ldb_debug", DEBUG, DEBUG).queue("strategies/ldb_fix", "I cannot see the bug.", GOOD)
    results, errors = run(scripted_server, make_strategy("ldb"), sandbox_pool, tmp_path)
    assert not errors and results[0]["passed"]
    rounds = results[0]["notes"]["rounds"]
    assert [(r["no_code"], r["passed"]) for r in rounds] == [(True, 0), (False, 1)]
    assert "return a - b" in router.prompt("strategies/ldb_debug", 1)  # round 2 debugs the kept program
