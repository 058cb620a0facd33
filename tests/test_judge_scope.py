"""What a test script's scope holds (the sandbox's rule 3): what plain Python gives it, minus anything the program
can choose at run time. The program's top-level functions and classes are proxies, its imports are the judge's own
imports, the header's names and the test's own names stand, builtins are never the program's, and nothing the
program binds as it runs reaches the test."""

from __future__ import annotations

import pytest

from solidcoder.execution.judge import Judge, program_names
from solidcoder.problem import Problem, TestCase


def verdict(pool, code: str, script: str, header: str = ""):
    problem = Problem(id="scope", kind="call", statement="", entry_point="f", header=header,
                      public_tests=[TestCase(kind="call", script=script)], time_limit_s=5.0)
    return Judge(pool).judge(problem, code).verdicts[0]


def passes(pool, code: str, script: str) -> None:
    found = verdict(pool, code, script)
    assert found.passed, found.detail


LISTS = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val, self.next = val, next
def f(head):
    total = 0
    while head:
        total, head = total + head.val, head.next
    return total
def g(x):
    return x * 2
"""


@pytest.mark.parametrize("code, script", [
    (LISTS, "assert f(ListNode(1, ListNode(2))) == 3"),  # a LeetCode test building the program's class
    (LISTS, "assert g(f(ListNode(2))) == 4"),  # two functions of the program
    ("import math\ndef f(x):\n    return math.sqrt(x)\n", "assert math.isclose(f(2), 1.41421356, rel_tol=1e-6)"),
    ("from math import pi as PI\ndef f(r):\n    return PI * r * r\n", "assert abs(f(1) - PI) < 1e-9"),
    ("import os.path\ndef f(p):\n    return os.path.basename(p)\n", "assert f('/a/b') == os.path.basename('/a/b')"),
    ("from collections import Counter\ndef f(s):\n    return dict(Counter(s))\n",
     "assert f('aab') == Counter('aab')"),
    ("async def helper():\n    return 1\ndef f(x):\n    return x\n", "assert callable(helper) and f(1) == 1"),
])
def test_a_test_names_what_the_program_defines_or_imports(sandbox_pool, code, script):
    passes(sandbox_pool, code, script)


def test_an_imported_module_is_the_judges_own(sandbox_pool):
    code = "import math\nmath.pi = 3\ndef f(x):\n    return math.pi\n"
    assert verdict(sandbox_pool, code, "assert f(0) == 3 and math.pi > 3.14").passed


@pytest.mark.parametrize("code, script", [
    ("def isinstance(*args):\n    return True\ndef f(x):\n    return 'no'\n", "assert isinstance(f(1), int)"),
    ("def len(x):\n    return 3\ndef f(x):\n    return [1]\n", "assert len(f(1)) == 3"),
    ("def f(x):\n    globals()['expected'] = 1\n    return 0\n", "f(1)\nassert f(1) == expected"),
    ("import sys\nsys.modules['evil'] = sys\ndef f(x):\n    return 0\n", "f(0)\nassert evil is not None"),
    ("class math:\n    isclose = staticmethod(lambda *a, **k: True)\ndef f(x):\n    return -1\n",
     "assert math.isclose(f(4), 5)"),  # no header imports math: a class named like a module is still not bound
])
def test_a_program_cannot_give_the_test_a_name_it_chose(sandbox_pool, code, script):
    assert not verdict(sandbox_pool, code, script).passed


def test_a_module_the_program_wrote_is_never_imported_by_the_judge(sandbox_pool):
    code = "import os, sys\nopen('/tmp/planted.py', 'w').write('WRONG = True')\nsys.path[:0] = ['/tmp', '']\n" \
           "os.chdir('/tmp')\nimport planted\ndef f(x):\n    return x\n"
    script = "try:\n    planted\nexcept NameError:\n    pass\nelse:\n    raise AssertionError('imported')\n" \
             "assert f(1) == 1"
    passes(sandbox_pool, code, script)


def test_the_headers_names_and_the_tests_own_stand(sandbox_pool):
    code = "def encode(s):\n    return s\ndef f(s):\n    return s\n"
    header = "def encode(s):\n    return s[::-1]\n"
    assert not verdict(sandbox_pool, code, "assert f(encode('ab')) == 'ab'", header).passed
    assert verdict(sandbox_pool, code, "def f(s):\n    return 'mine'\nassert f(1) == 'mine'").passed


def test_the_names_are_read_from_the_source_not_from_the_run():
    code = "import a.b\nimport c.d as e\nfrom g import h as i, j\nfrom . import k\nfrom m import *\n" \
           "def abs(x):\n    pass\nclass C:\n    pass\nif True:\n    def hidden():\n        pass\n__all__ = []\n"
    assert program_names(code) == {
        "defined": ["C"],
        "imports": [["a", "a.b", "a", None], ["e", "c.d", "c.d", None], ["i", "g", "g", "h"], ["j", "g", "g", "j"]],
    }
    assert program_names("def f(:\n") == {"defined": [], "imports": []}
