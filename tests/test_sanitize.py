"""Cleaning up the program in a reply: `strip_self_tests` (a call program keeps its definitions and loses the
self-test a model appends to it), `extract_code` on a reply that fenced no code (the unfenced program is read,
prose that happens to compile is not), and EvalPlus's sanitizer (`reachable_definitions`)."""

from __future__ import annotations

import pytest

from solidcoder.stages.base import extract_code
from solidcoder.stages.sanitize import reachable_definitions, strip_self_tests

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


ADD = "def add(a, b):\n    return a + b\n"
STDIN = "import sys\nn = int(sys.stdin.readline())\n\nprint(n * 2)\n"


@pytest.mark.parametrize("reply, program", [
    ("def f(x):\n    return x + 1", "def f(x):\n    return x + 1\n"),
    (f"Here is the function:\n\n{ADD}\nIt adds the two numbers.", ADD),
    (f"Solution\n{ADD}Complexity: O(1)\n", ADD),  # both compile (a name, an annotation): prose all the same
    ("Sure! Read n and double it:\n\n" + "".join(f"    {line}\n" for line in STDIN.splitlines()) + "\nDone.", STDIN),
    ("n = int(input())\nprint(n * 2)", "n = int(input())\nprint(n * 2)\n"),
    (f"Memoised:\n@cache\n{ADD}", f"@cache\n{ADD}"),
])
def test_a_reply_without_a_fence_gives_the_program_it_holds(reply, program):
    assert extract_code(reply) == program


@pytest.mark.parametrize("reply", [
    "Yes", "x = 1", "print(42)", "The answer is 42.", "Change the line to:\nresult = a + b\n",
    "Complexity: O(n)", "```text\nn = int(input())\n```\nThat is the input format.",
])
def test_prose_and_other_fenced_blocks_are_no_program(reply):
    assert extract_code(reply) == ""


def test_a_fenced_block_still_wins_over_unfenced_code():
    reply = f"def wrong(a, b):\n    return a - b\n\n```python\n{ADD}```\n"
    assert extract_code(reply) == ADD


# EvalPlus's sanitizer, as the Qwen2.5-Coder evaluation runs it (stages/sanitize.py: reachable_definitions).
REPLY_WITH_EXTRAS = '''import math
from functools import reduce
def helper(a):
    return a + 1
def f(n):
    return helper(n) * K
K = 3
print(f(2))
assert f(1) == 6
def unused():
    return 1
def no_return():
    pass
'''


def test_the_sanitizer_keeps_imports_and_what_the_entry_point_reaches():
    assert reachable_definitions(REPLY_WITH_EXTRAS, "f") == (
        "import math\nfrom functools import reduce\ndef helper(a):\n    return a + 1\n"
        "def f(n):\n    return helper(n) * K\nK = 3")


def test_the_sanitizer_reads_the_longest_parsing_run_of_a_reply_with_prose():
    assert reachable_definitions("Here it is:\ndef f(x):\n    return x\nDone, it works.", "f") == \
        "def f(x):\n    return x"


def test_the_sanitizer_drops_decorated_definitions_and_functions_without_return_as_evalplus_does():
    code = "import functools\n@functools.cache\ndef g(n):\n    return n\ndef f(n):\n    print(g(n))\n"
    assert reachable_definitions(code, "f") == "import functools"


def test_the_first_definition_of_a_name_wins():
    code = "def f():\n    return 1\ndef f():\n    return 2\n"
    assert reachable_definitions(code, "f") == "def f():\n    return 1"


def test_an_entry_point_the_code_lacks_leaves_the_imports():
    assert reachable_definitions("import os\ndef g():\n    return 1\n", "f") == "import os"


def test_a_long_reply_that_does_not_parse_is_searched_in_its_first_lines_only():
    reply = "def f(x):\n    return x\n" + "this is not python\n" * 5000
    assert reachable_definitions(reply, "f") == "def f(x):\n    return x"  # read from its first 300 lines, at once
