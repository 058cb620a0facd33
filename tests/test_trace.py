"""The tracer on real runs: final values per scope, the literal_eval filter, errors, stdin and call modes."""

from __future__ import annotations

from solidcoder.execution.trace import trace_program

PROGRAM = """\
def total_of_squares(n):
    acc = []
    for i in range(n):
        acc.append(i * i)
    total = sum(acc)
    return total

x = total_of_squares(4)
pair = (1, 'a')
flags = {True, False}
"""


def test_final_values_per_scope(sandbox_pool):
    result = trace_program(sandbox_pool, PROGRAM)
    assert result.ok
    assert result.scopes["total_of_squares"] == {"n": 4, "acc": [0, 1, 4, 9], "i": 3, "total": 14}
    assert result.scopes["<module>"] == {"x": 14, "pair": (1, "a"), "flags": {True, False}}


def test_last_call_wins_and_call_mode(sandbox_pool):
    result = trace_program(sandbox_pool, PROGRAM, call="total_of_squares(2)")
    assert result.scopes["total_of_squares"]["acc"] == [0, 1]


def test_values_that_do_not_round_trip_are_left_out(sandbox_pool):
    code = "class Box:\n    pass\nb = Box()\nbig = list(range(1000))\nfn = len\nok = 'kept'\ninf = float('inf')\n"
    result = trace_program(sandbox_pool, code)
    assert result.scopes["<module>"] == {"ok": "kept"}


def test_stdin_program(sandbox_pool):
    code = "import sys\nnums = list(map(int, sys.stdin.read().split()))\nbest = max(nums)\nprint(best)\n"
    result = trace_program(sandbox_pool, code, stdin="3 9 2")
    assert result.scopes["<module>"] == {"nums": [3, 9, 2], "best": 9}
    assert result.stdout == "9\n"


def test_a_program_that_raises_reports_the_error_not_values(sandbox_pool):
    result = trace_program(sandbox_pool, "def f(a):\n    b = a + 1\n    return b / 0\nf(1)\n")
    assert not result.ok and result.scopes == {}
    assert result.error.startswith("ZeroDivisionError") and "solution.py:3" in result.error


def test_nested_functions_are_keyed_by_qualified_name(sandbox_pool):
    code = (
        "def outer():\n    k = 2\n    def inner(v):\n        w = v * k\n        return w\n"
        "    return inner(5)\nr = outer()\n"
    )
    result = trace_program(sandbox_pool, code)
    assert result.scopes["outer.<locals>.inner"] == {"v": 5, "w": 10}
    assert result.scopes["outer"]["k"] == 2 and result.scopes["<module>"] == {"r": 10}


def test_a_program_that_times_out_reports_the_timeout(sandbox_pool):
    from solidcoder.execution.sandbox import Limits

    result = trace_program(sandbox_pool, "while True:\n    pass\n", limits=Limits(wall_s=0.5))
    assert result.status == "timeout" and not result.ok
