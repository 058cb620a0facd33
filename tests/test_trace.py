"""The tracer on real runs: final values per scope, the literal_eval filter, errors with the values at the crash,
stdin and call modes, the call's value, typed JSON, and records the program cannot forge or break."""

from __future__ import annotations

from solidcoder.execution.trace import TracedError, TracedValue, trace_program

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


def test_a_program_that_raises_reports_the_error_and_the_values_at_the_crash(sandbox_pool):
    result = trace_program(sandbox_pool, "def f(a):\n    b = a + 1\n    return b / 0\nr = 7\nf(1)\n")
    assert not result.ok and result.scopes == {"f": {"a": 1, "b": 2}, "<module>": {"r": 7}}
    assert result.error == "ZeroDivisionError: division by zero at solution.py:3: return b / 0"
    assert [(f.file, f.line, f.function, f.source) for f in result.exception.frames] == [
        ("solution.py", 5, "<module>", "f(1)"), ("solution.py", 3, "f", "return b / 0")]


def test_a_crash_in_a_recursion_shows_the_innermost_call_and_the_callers_file_name(sandbox_pool):
    code = "def g(n):\n    if n == 0:\n        return 1 // n\n    return g(n - 1)\n"
    result = trace_program(sandbox_pool, code, call="g(3)", filename="examples/g.py")
    assert result.scopes["g"] == {"n": 0} and result.returned is None
    assert result.error == "ZeroDivisionError: integer division or modulo by zero at examples/g.py:3: return 1 // n"
    assert [f.where for f in result.exception.frames] == [
        "<call>:1: g(3)", *["examples/g.py:4: return g(n - 1)"] * 3, "examples/g.py:3: return 1 // n"]


def test_the_call_returns_a_typed_value(sandbox_pool):
    assert trace_program(sandbox_pool, PROGRAM, call="total_of_squares(4)").returned == TracedValue.of(14)
    boxed = trace_program(sandbox_pool, "class Box:\n    def __repr__(self):\n        return 'Box!'\n", call="Box()")
    assert boxed.returned == TracedValue("Box", "Box!") and boxed.to_json()["returned"] == {"type": "Box",
                                                                                            "repr": "Box!"}
    assert trace_program(sandbox_pool, PROGRAM).returned is None


def test_json_gives_each_value_its_type_and_a_json_value_only_when_exact(sandbox_pool):
    scopes = trace_program(sandbox_pool, PROGRAM).to_json()["scopes"]
    assert scopes["<module>"] == {"x": {"type": "int", "repr": "14", "value": 14},
                                  "pair": {"type": "tuple", "repr": "(1, 'a')"},
                                  "flags": {"type": "set", "repr": "{False, True}"}}
    assert scopes["total_of_squares"]["acc"] == {"type": "list", "repr": "[0, 1, 4, 9]", "value": [0, 1, 4, 9]}


def test_nothing_the_program_prints_or_writes_early_forges_the_trace(sandbox_pool):
    fake = "{'event': 'trace', 'scopes': {'<module>': {'x': '666'}}, 'error': None}"
    code = f"import json, os\nfake = json.dumps({fake})\nprint(fake)\nos.write(3, fake.encode() + b'\\n')\nx = 1\n"
    result = trace_program(sandbox_pool, code)
    assert result.ok and result.scopes["<module>"]["x"] == 1 and '"666"' in result.stdout


def test_a_malformed_record_yields_nothing_instead_of_an_error(sandbox_pool):
    bad = "{'event': 'trace', 'scopes': 5, 'exception': {'type': 'X', 'frames': 7}, 'returned': [1], 'error': 3}"
    code = f"import json, os\nos.write(3, json.dumps({bad}).encode() + b'\\n')\nos._exit(0)\n"
    result = trace_program(sandbox_pool, code)
    assert (result.scopes, result.returned, result.error, result.exception) == ({}, None, "X", TracedError("X", ""))


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


def test_a_value_the_parser_cannot_rebuild_is_left_out_or_shown_as_text(sandbox_pool):
    """Odd reprs from the program (huge, deeply nested, raising) and a hostile record's texts never crash."""
    code = ("class Odd:\n    def __repr__(self):\n        raise ValueError('no')\n"
            "odd = Odd()\nhuge = 'x' * 10 ** 6\ndeep = []\nfor _ in range(10 ** 4):\n    deep = [deep]\nok = 1\n")
    result = trace_program(sandbox_pool, code, call="deep")
    assert result.ok and result.scopes["<module>"] == {"_": 9999, "ok": 1} and result.returned.type == "list"
    assert result.to_json()["scopes"]["<module>"]["ok"]["value"] == 1


def test_a_hostile_record_of_unrebuildable_texts_does_not_crash_the_parser(sandbox_pool):
    texts = ["'[' * 100000", "'(' * 300 + ')' * 300", "'1' * 5000", "'1e999999'", "'{[]: 1}'", "'x' * (8 << 20)"]
    record = ("{'event': 'trace', 'scopes': {'<module>': {f'v{i}': eval(t) for i, t in enumerate(TEXTS)}, 'f': 7},"
              " 'returned': {'type': 3, 'repr': eval(TEXTS[0]), 'literal': True}, 'error': None, 'exception': None}")
    code = f"import json, os\nTEXTS = {texts!r}\nos.write(3, json.dumps({record}).encode() + b'\\n')\nos._exit(0)\n"
    result = trace_program(sandbox_pool, code)
    assert result.scopes == {"<module>": {"v3": float("inf")}} and result.returned.type == ""
    assert result.to_json()["returned"]["repr"].startswith("[[[")
