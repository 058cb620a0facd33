"""`strip_self_tests`: a call program keeps its definitions and loses the self-test a model appends to it."""

from __future__ import annotations

import pytest

from solidcoder.stages.sanitize import strip_self_tests

FUNCTION = ("from collections import Counter\n\nLIMIT = 10\n\n\n"
            "def f(xs):\n    return [x for x in xs if Counter(xs)[x] == 1]\n")


@pytest.mark.parametrize("tail, left", [
    ("\n\ndef check():\n    assert f([1, 1]) == [1]\n\ncheck()\n", "\n\ndef check():\n    assert f([1, 1]) == [1]\n"),
    ("\nprint(f([1, 2]))\n", ""),
    ("\nassert f([]) == [0], 'wrong by the model'\n", ""),
    ("\nif __name__ == '__main__':\n    print(f([3]))\n", ""),
    ("\nfor case in ([1], [2]):\n    print(f(case))\n", ""),
    ("\nresult = f([1, 2, 2])\n", ""),
])
def test_each_kind_of_top_level_self_test_is_dropped(tail, left):
    stripped = strip_self_tests(FUNCTION + tail)
    assert stripped.rstrip("\n") == (FUNCTION + left).rstrip("\n")
    namespace: dict = {}
    exec(compile(stripped, "<stripped>", "exec"), namespace)  # nothing runs at import any more
    assert namespace["f"]([1, 1, 2]) == [2]


def test_definitions_imports_decorators_and_constants_stay_byte_for_byte():
    code = ("import functools\n\nMEMO = {}\n\n\n@functools.lru_cache(None)\ndef f(n):\n    return n\n\n\n"
            "class A:\n    x = 1\n")
    assert strip_self_tests(code) == code


def test_a_module_constant_built_by_an_imported_function_is_kept_and_one_built_by_the_program_is_not():
    code = ("import re\n\nPATTERN = re.compile('a+')\n\n\ndef f(s):\n    return bool(PATTERN.match(s))\n\n"
            "OUT = f('aa')\n")
    assert strip_self_tests(code) == code.removesuffix("\nOUT = f('aa')\n")


@pytest.mark.parametrize("code", ["def f(:\n    pass\nf()\n", "print(sum(map(int, input().split())))\n"])
def test_a_program_that_does_not_parse_or_defines_nothing_is_left_alone(code):
    assert strip_self_tests(code) == code
