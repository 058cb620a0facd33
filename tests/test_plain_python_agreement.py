"""A program that computes the right values passes, and nothing else does: a corpus of honest programs across value
kinds (issue 38's among them: generators, stdlib values, a program's classes and exceptions, callbacks, names),
each judged by plain Python (the test run in the program's own process, after the problem's header, as the
dataset's harness runs `prompt + completion + test`) and by the sandbox, both in the benchmark environment
(`execution/environment.py`: the standard library and `BENCHMARK_MODULES`). The verdicts agree on every program; a
wrong twin of each program fails both ways, and so does a program importing a module that environment lacks.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

import pytest

from solidcoder.execution.environment import BENCHMARK_MODULES, module_name, plain_python, unlisted_modules
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.problem import Problem, TestCase

HEADER = "import math\nimport collections\nfrom typing import List, Dict, Tuple\n"


@dataclass(frozen=True)
class Case:
    """One honest program (`f` computes the right value of kind `kind`) and one test script for it."""

    kind: str
    body: str  # f's definition, may use the header's names unimported
    script: str  # assert lines naming f
    code: str = ""  # the whole program instead of `def f(x): body` (f may be a class)
    wrong_code: str = ""  # its wrong twin, when `code` is given


def _kind_cases() -> list[Case]:
    """Value kinds a program may return, each with the value it must equal."""
    kinds = {
        "int": ("return x + 1", "3"), "float": ("return x / 2", "1.0"), "str": ("return str(x) * 2", "'22'"),
        "list": ("return [x] * 2", "[2, 2]"), "tuple": ("return (x, x)", "(2, 2)"), "dict": ("return {x: x}", "{2: 2}"),
        "set": ("return {x}", "{2}"), "none": ("return None", "None"), "bool": ("return x > 1", "True"),
        "counter": ("return collections.Counter('ab' * x)", "{'a': 2, 'b': 2}"),
        "defaultdict": ("d = collections.defaultdict(int)\n    d[x] += 1\n    return d", "{2: 1}"),
        "ordereddict": ("return collections.OrderedDict([(x, 1)])", "{2: 1}"),
        "namedtuple": ("P = collections.namedtuple('P', 'a b')\n    return P(x, 1)", "(2, 1)"),
        "intenum": ("import enum\n    class C(enum.IntEnum):\n        TWO = 2\n    return C.TWO", "2"),
        "list_subclass": ("class L(list):\n        pass\n    return L([x])", "[2]"),
        "nested_counter": ("return [collections.Counter([x])]", "[{2: 1}]"),
        "big_int": ("return 10 ** 30 * x", "2 * 10 ** 30"), "complex": ("return complex(x, 1)", "2 + 1j"),
        "bytes": ("return bytes([x])", "b'\\x02'"), "frozenset": ("return frozenset([x])", "frozenset({2})"),
    }
    cases = []
    for kind, (body, expected) in kinds.items():
        cases += [Case(kind, body, f"assert f(2) == {expected}"),
                  Case(kind, body, f"assert {expected} == f(2)"),
                  Case(kind, body, f"assert not (f(2) != {expected})"),
                  Case(kind, body, f"r = f(2)\nassert r == {expected} and type(r) is not None")]
    return cases


def _iterable_cases() -> list[Case]:
    """Iterators and views: consumed by the test as plain Python consumes them."""
    found = {
        "generator": ("return (i for i in range(x))", ["assert list(f(3)) == [0, 1, 2]", "assert sum(f(4)) == 6",
                                                        "g = f(2)\nassert next(g) == 0 and next(g) == 1",
                                                        "assert f(3) != [0, 1, 2]",
                                                        "assert sorted(f(3)) == [0, 1, 2]"]),
        "map": ("return map(str, range(x))", ["assert list(f(2)) == ['0', '1']", "assert ''.join(f(3)) == '012'",
                                              "assert tuple(f(1)) == ('0',)"]),
        "filter": ("return filter(None, range(x))", ["assert list(f(3)) == [1, 2]", "assert len(list(f(4))) == 3"]),
        "zip": ("return zip(range(x), range(x))", ["assert list(f(2)) == [(0, 0), (1, 1)]",
                                                  "assert dict(f(2)) == {0: 0, 1: 1}"]),
        "range": ("return range(x)", ["assert f(3) == range(3)", "assert list(f(3)) == [0, 1, 2]",
                                      "assert len(f(5)) == 5", "assert 2 in f(3)", "assert f(3) != [0, 1, 2]"]),
        "keys": ("return {i: i for i in range(x)}.keys()", ["assert f(2) == {0, 1}", "assert sorted(f(2)) == [0, 1]",
                                                             "assert 1 in f(2)", "assert len(f(3)) == 3",
                                                             "assert f(2) != [0, 1]"]),
        "values": ("return {i: i * 2 for i in range(x)}.values()", ["assert list(f(2)) == [0, 2]",
                                                                     "assert sum(f(3)) == 6"]),
        "items": ("return {i: 1 for i in range(x)}.items()", ["assert f(1) == {(0, 1)}",
                                                              "assert dict(f(2)) == {0: 1, 1: 1}"]),
        "reversed": ("return reversed([1, x])", ["assert list(f(2)) == [2, 1]"]),
        "enumerate": ("return enumerate('ab' * x)", ["assert list(f(1)) == [(0, 'a'), (1, 'b')]"]),
    }
    return [Case(kind, body, script) for kind, (body, scripts) in found.items() for script in scripts]


def _in_place_cases() -> list[Case]:
    """A program that changes its arguments in place; the test checks its own objects after the call."""
    return [
        Case("in_place_positional", "x.append(1)", "a = []\nf(a)\nassert a == [1]"),
        Case("in_place_keyword", "x.append(1)", "a = [0]\nf(x=a)\nassert a == [0, 1]"),
        Case("in_place_nested", "x[0].append(1)", "inner = []\nt = (inner, 2)\nf(t)\nassert inner == [1]"),
        Case("in_place_nested_list", "x[1].append(2)",
             "inner = [1]\na = [0, inner]\nf(a)\nassert inner == [1, 2] and a[1] is inner"),
        Case("in_place_dict", "x['k'] = 1", "d = {}\nf(d)\nassert d == {'k': 1}"),
        Case("in_place_sort", "x.sort()", "a = [3, 1, 2]\nf(a)\nassert a == [1, 2, 3]"),
        Case("in_place_set", "x.add(1)", "s = set()\nf(x=s)\nassert s == {1}"),
    ]


def _header_cases() -> list[Case]:
    """Programs that lean on the header (as `prompt + completion` does): unimported names, the header's helper."""
    return [
        Case("header_typing", "ys: List[int] = [x]\n    return ys", "assert f(2) == [2]"),
        Case("header_math", "return math.floor(x / 3)", "assert f(7) == 2"),
        Case("header_helper", "return helper(x)", "assert f(2) == 4"),
        Case("header_test_uses_math", "return x / 3", "assert math.isclose(f(1), 1 / 3)"),
        Case("header_test_uses_helper", "return x * 2", "assert f(3) == helper(3) - 3"),
    ]


def _loop_cases() -> list[Case]:
    """Tests that iterate over the program's answers."""
    return [
        Case("all_map", "return x > 0", "assert all(map(f, [1, 2, 3]))"),
        Case("any_map", "return x == 2", "assert any(map(f, [1, 2, 3]))"),
        Case("comprehension", "return -x", "assert [f(i) for i in range(3)] == [0, -1, -2]"),
        Case("exception_expected", "raise ValueError('no')",
             "try:\n    f(1)\nexcept ValueError:\n    pass\nelse:\n    assert False"),
    ]


LIST_NODE = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

    def to_list(self):
        return [self.val] + (self.next.to_list() if self.next else [])

    def same(self, other):
        return self.to_list() == other.to_list()


def build(xs):
    head = None
    for v in reversed(xs):
        head = ListNode(v, head)
    return head


def reverseList(head):
    prev = None
    while head:
        head.next, prev, head = prev, head, head.next
    return prev
"""


def _list_node_cases() -> list[Case]:
    """A LeetCode linked list returned by `reverseList`: the test reads `node.val` and `node.next`, calls methods,
    compares identity, sets an attribute and passes a node back to the program."""
    code = LIST_NODE + "\ndef f(x):\n    return reverseList(build(x))\n"
    wrong_code = LIST_NODE + "\ndef f(x):\n    return build(x)\n"  # forgot to reverse
    scripts = [
        "n = f([1, 2, 3])\nassert n.val == 3 and n.next.val == 2 and n.next.next.next is None",
        "n = f([1, 2])\nout = []\nwhile n:\n    out.append(n.val)\n    n = n.next\nassert out == [2, 1]",
        "assert f([1, 2, 3]).to_list() == [3, 2, 1]",
        "n = f([1, 2])\nm = n.next\nassert n.next is m and m.val == 1",
        "n = f([2, 1])\nn.val = 9\nassert n.val == 9 and n.next.val == 2",
        "assert f([7, 8]).same(f([7, 8])) and f([1, 2]).next.val == 1",
        "nodes = [f([1, 2]), f([3, 4])]\nassert [n.val for n in nodes] == [2, 4]",
        "assert getattr(f([4, 5]), 'val') == 5 and hasattr(f([4, 5]), 'next')",
        "assert not hasattr(f([1, 2]), 'missing') and f([1, 2]).val == 2",
    ]
    pairs = "\ndef f(x):\n    h = reverseList(build(x))\n    return [h, h.next]\n"
    return [Case("list_node", "", s, code, wrong_code) for s in scripts] + [
        Case("list_node_in_a_list", "", "a, b = f([1, 2])\nassert (a.val, b.val) == (2, 1) and a.next is b",
             LIST_NODE + pairs, wrong_code.replace("return build(x)", "h = build(x)\n    return [h, h.next]")),
        Case("list_node_empty", "", "assert f([]) is None and f([1]).next is None", code,
             LIST_NODE + "\ndef f(x):\n    return ListNode(0)\n")]


BAG = """
class Bag:
    def __init__(self, items):
        self.items = list(items)

    def add(self, x):
        self.items.append(x)
        return self

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __str__(self):
        return f"Bag({self.items})"

    __repr__ = __str__

    def __contains__(self, x):
        return x in self.items

    def __getitem__(self, i):
        return self.items[i]

    def __hash__(self):
        return hash(tuple(self.items))

    def __eq__(self, other):
        return isinstance(other, Bag) and self.items == other.items

    def __lt__(self, other):
        return self.items < other.items

    def __bool__(self):
        return bool(self.items)


f = Bag
"""


def _class_cases() -> list[Case]:
    """A class-based problem: the test builds `obj = f(...)` and uses the protocols on it."""
    wrong_code = BAG.replace("self.items = list(items)", "self.items = list(items)[1:]")
    scripts = [
        "assert len(f([1, 2])) == 2", "assert list(f([1, 2])) == [1, 2]",
        "it = iter(f([3]))\nassert next(it) == 3\ntry:\n    next(it)\nexcept StopIteration:\n    pass\n"
        "else:\n    assert False",
        "assert str(f([1])) == 'Bag([1])'", "assert repr(f(['a'])) == \"Bag(['a'])\"",
        "assert bool(f([1])) and not f([])", "assert 2 in f([1, 2]) and 1 in f([1])",
        "assert f([4, 5])[1] == 5 and f([4, 5])[-1] == 5", "assert f([1, 2, 3])[0:2] == [1, 2]",
        "assert hash(f([1, 2])) == hash((1, 2))", "assert f([1, 2]) == f([1, 2]) and f([1]) != f([2])",
        "b = f([1])\nassert b.add(2) is b and len(b) == 2", "assert sorted(f([3, 1, 2])) == [1, 2, 3]",
        "assert sum(f([1, 2, 3])) == 6", "assert f'{f([1])}' == 'Bag([1])'", "assert max(f([5, 1, 2])) == 5",
        "b = f([1, 2])\nassert len({b, b, f([1, 2])}) == 1 and b.items == [1, 2]",
        "assert sorted([f([2, 1]), f([1, 5])])[0].items == [1, 5]",
        "assert [x * 2 for x in f([1, 2])] == [2, 4]", "assert dict(enumerate(f([7]))) == {0: 7}",
    ]
    return [Case("class", "", s, BAG, wrong_code) for s in scripts]


def _thread_cases() -> list[Case]:
    """Test scripts that call the program from a thread."""
    pool = "from concurrent.futures import ThreadPoolExecutor\n"
    return [
        Case("thread_pool", "return x + 1", pool + "with ThreadPoolExecutor(2) as ex:\n"
             "    assert ex.submit(f, 2).result(timeout=5) == 3"),
        Case("thread_pool_map", "return x + 1", pool + "with ThreadPoolExecutor(4) as ex:\n"
             "    assert list(ex.map(f, range(30))) == list(range(1, 31))"),
        Case("thread_pool_left_open", "return x + 1",
             pool + "assert ThreadPoolExecutor(1).submit(f, 1).result(timeout=5) == 2"),
        Case("thread", "return x * 2", "import threading\nout = []\n"
             "t = threading.Thread(target=lambda: out.append(f(4)))\nt.start()\nt.join(5)\nassert out == [8]"),
    ]


def _crossing(name: str, code: str, scripts: list[str], wrong_code: str) -> list[Case]:
    return [Case(name, "", script, code, wrong_code) for script in scripts]


# Issue 38's honest programs: values that cross as what they are, classes, exceptions, callbacks and names. Each
# wrong twin computes a wrong value of the same shape.
ISSUE_38 = {
    "generator": ("def f(n):\n    i = 0\n    while True:\n        yield i\n        i += n\n",
                  ["import itertools\nassert list(itertools.islice(f(2), 3)) == [0, 2, 4]",
                   "g = f(1)\nassert next(g) == 0 and next(g) == 1",
                   "g = f(3)\nnext(g)\nassert next(g) == 3\ng.close()"],
                  "def f(n):\n    while True:\n        yield -1\n"),
    "send": ("def f(n):\n    got = yield n\n    while True:\n        got = yield got * n\n",
             ["g = f(2)\nassert next(g) == 2 and g.send(5) == 10 and g.send(1) == 2"],
             "def f(n):\n    while True:\n        yield 0\n"),
    "namedtuple": ("P = collections.namedtuple('P', 'x y')\ndef f(n):\n    return P(n, n + 1)\n",
                   ["p = f(1)\nassert p.x == 1 and p.y == 2 and p == (1, 2)",
                    "assert f(2)._asdict() == {'x': 2, 'y': 3}",
                    "assert type(f(1)).__name__ == 'P' and f(1)._fields == ('x', 'y') and f(1).x == 1"],
                   "P = collections.namedtuple('P', 'x y')\ndef f(n):\n    return P(0, 0)\n"),
    "counter": ("def f(s):\n    return collections.Counter(s)\n",
                ["c = f('aab')\nassert c['z'] == 0 and c['a'] == 2", "assert f('aab').most_common(1) == [('a', 2)]",
                 "assert f('ab') + f('a') == collections.Counter('aab')"],
                "def f(s):\n    return collections.Counter()\n"),
    "defaultdict": ("def f(xs):\n    d = collections.defaultdict(list)\n    for x in xs:\n        d[x % 2].append(x)\n"
                    "    return d\n",
                    ["d = f([1, 2, 3])\nassert d[1] == [1, 3] and d[5] == []", "assert f([]).default_factory is list"],
                    "def f(xs):\n    return collections.defaultdict(set)\n"),
    "enum": ("import enum\nclass Color(enum.Enum):\n    RED = 1\n    BLUE = 2\ndef f(n):\n    return Color(n)\n",
             ["assert f(1).name == 'RED' and f(2).value == 2"], "import enum\nclass Color(enum.Enum):\n    RED = 1\n"
             "    BLUE = 2\ndef f(n):\n    return Color(3 - n)\n"),
    "intenum": ("import enum\nclass Level(enum.IntEnum):\n    LOW = 1\n    HIGH = 2\ndef f(n):\n    return Level(n)\n",
                ["assert f(2) == 2 and f(2).name == 'HIGH' and f(1) < f(2)"],
                "import enum\nclass Level(enum.IntEnum):\n    LOW = 1\n    HIGH = 2\ndef f(n):\n    return Level(1)\n"),
    "fraction": ("from fractions import Fraction\ndef f(n):\n    return Fraction(1, n)\n",
                 ["from fractions import Fraction\nassert f(3) == Fraction(1, 3) and f(3).denominator == 3",
                  "assert f(4) == 0.25"], "from fractions import Fraction\ndef f(n):\n    return Fraction(1, n + 1)\n"),
    "decimal": ("from decimal import Decimal\ndef f(s):\n    return Decimal(s) * 2\n",
                ["from decimal import Decimal\nassert f('1.10') == Decimal('2.20') and str(f('1.10')) == '2.20'"],
                "from decimal import Decimal\ndef f(s):\n    return Decimal(s)\n"),
    "date": ("import datetime\ndef f(n):\n    return datetime.date(2024, 1, 1) + datetime.timedelta(days=n)\n",
             ["import datetime\nassert f(31) == datetime.date(2024, 2, 1) and f(0).year == 2024"],
             "import datetime\ndef f(n):\n    return datetime.date(2024, 1, 1)\n"),
    "timedelta": ("import datetime\ndef f(n):\n    return datetime.timedelta(hours=n)\n",
                  ["import datetime\nassert f(25).days == 1 and f(1) == datetime.timedelta(minutes=60)"],
                  "import datetime\ndef f(n):\n    return datetime.timedelta(0)\n"),
    "bytearray": ("def f(n):\n    return bytearray(range(n))\n", ["assert f(3) == bytearray(b'\\x00\\x01\\x02')",
                                                                   "assert f(2) == b'\\x00\\x01'"],
                  "def f(n):\n    return bytearray(n)\n"),
    "deque": ("def f(xs):\n    return collections.deque(xs, maxlen=2)\n",
              ["d = f([1, 2, 3])\nassert d == collections.deque([2, 3]) and d.maxlen == 2\nd.appendleft(0)\n"
               "assert list(d) == [0, 2]"], "def f(xs):\n    return collections.deque(xs)\n"),
    "array": ("import array\ndef f(n):\n    return array.array('i', range(n))\n",
              ["import array\nassert f(3) == array.array('i', [0, 1, 2]) and f(3).typecode == 'i'"],
              "import array\ndef f(n):\n    return array.array('i', [0] * n)\n"),
    "userlist": ("def f(n):\n    return collections.UserList(range(n))\n",
                 ["assert f(2) == [0, 1] and f(2).data == [0, 1]"],
                 "def f(n):\n    return collections.UserList()\n"),
    "identity": ("def f(kind):\n    return {'int': int, 'len': len, 'error': KeyError}[kind]\n",
                 ["assert f('int') is int and f('len') is len and f('error') is KeyError"],
                 "def f(kind):\n    return str\n"),
    "same_list": ("def f(xs):\n    xs.sort()\n    return xs\n", ["xs = [2, 1]\nassert f(xs) is xs and xs == [1, 2]"],
                  "def f(xs):\n    return sorted(xs)\n"),
    "own_error": ("class BadInput(ValueError):\n    pass\ndef f(x):\n    if x < 0:\n"
                  "        raise BadInput('negative', x)\n    return x\n",
                  ["try:\n    f(-1)\nexcept ValueError as e:\n    assert e.args == ('negative', -1)\nelse:\n"
                   "    raise AssertionError", "assert f(1) == 1"],
                  "def f(x):\n    return abs(x) + 1\n"),
    "stdlib_error": ("import statistics\ndef f(xs):\n    return statistics.mean(xs)\n",
                     ["import statistics\ntry:\n    f([])\nexcept statistics.StatisticsError:\n    pass\nelse:\n"
                      "    raise AssertionError", "assert f([1, 3]) == 2"],
                     "def f(xs):\n    return 0\n"),
    "json_error": ("import json\ndef f(s):\n    return json.loads(s)\n",
                   ["import json\ntry:\n    f('[1,')\nexcept json.JSONDecodeError as e:\n    assert e.pos == 3\nelse:\n"
                    "    raise AssertionError"], "def f(s):\n    return []\n"),
    "class": ("class Stack:\n    LIMIT = 3\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
              "        self.items.append(x)\n        return len(self.items)\n    @staticmethod\n    def name():\n"
              "        return 'stack'\n    @classmethod\n    def of(cls, *xs):\n        s = cls()\n"
              "        for x in xs:\n            s.push(x)\n        return s\ndef f(x):\n    return Stack.of(x)\n",
              ["s = Stack()\nassert s.push(5) == 1 and isinstance(s, Stack) and s.items == [5]",
               "assert Stack.LIMIT == 3 and Stack.name() == 'stack' and Stack.of(1, 2).items == [1, 2]",
               "assert isinstance(f(1), Stack) and not isinstance(1, Stack)"],
              "class Stack:\n    LIMIT = 0\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n"
              "        return 0\n    @staticmethod\n    def name():\n        return ''\n    @classmethod\n"
              "    def of(cls, *xs):\n        return cls()\ndef f(x):\n    return 0\n"),
    "callback": ("def f(fn, xs):\n    return [fn(x) for x in xs]\n",
                 ["assert f(lambda x: x * 2, [1, 2]) == [2, 4]", "assert f(len, ['ab']) == [2]",
                  "def sq(x):\n    return x * x\nassert f(sq, [3]) == [9]",
                  "out = []\nf(out.append, [1])\nassert out == [1]"],
                 "def f(fn, xs):\n    return list(xs)\n"),
    "decorator": ("import functools\ndef f(fn):\n    @functools.wraps(fn)\n    def wrapper(*args):\n"
                  "        return fn(*args) + 1\n    return wrapper\n",
                  ["def add(a, b):\n    return a + b\nassert f(add)(1, 2) == 4"],
                  "def f(fn):\n    return fn\n"),
    "names": ("class Node:\n    def __init__(self, val, nxt=None):\n        self.val, self.nxt = val, nxt\n"
              "def f(head):\n    n = 0\n    while head:\n        n, head = n + head.val, head.nxt\n    return n\n"
              "def g(n):\n    return Node(n)\nimport math as m\n",
              ["assert f(Node(1, Node(2))) == 3", "assert f(g(4)) == 4", "assert m.isclose(f(Node(2)), 2.0)"],
              "class Node:\n    def __init__(self, val, nxt=None):\n        self.val, self.nxt = val, nxt\n"
              "def f(head):\n    return 0\ndef g(n):\n    return Node(0)\nimport math as m\n"),
    "big_answer": ("def f(n):\n    return [(i, -i) for i in range(n)]\n",
                   ["r = f(300000)\nassert len(r) == 300000 and r[-1] == (299999, -299999)"],
                   "def f(n):\n    return [(i, i) for i in range(n)]\n"),
    "numpy": ("import numpy as np\ndef f(n):\n    return np.arange(n) / 2\n",
              ["import numpy as np\nassert np.allclose(f(3), [0, 0.5, 1])",
               "import numpy as np\nnp.testing.assert_array_equal(f(2), np.array([0.0, 0.5]))",
               "assert f(4).shape == (4,) and f(2).tolist() == [0.0, 0.5]"],
              "import numpy as np\ndef f(n):\n    return np.zeros(n)\n"),
    "map": ("def f(xs):\n    return map(str, xs)\n", ["assert list(f([1, 2])) == ['1', '2']",
                                                      "assert next(f([3])) == '3'"],
            "def f(xs):\n    return map(repr, [0])\n"),
    "pairs": ("def f(n):\n    for i in range(n):\n        yield i, i * i\n",
              ["assert dict(f(3)) == {0: 0, 1: 1, 2: 4}"],
              "def f(n):\n    yield 0, 0\n"),
    "iterable_class": ("class Evens:\n    def __init__(self, n):\n        self.n = n\n    def __iter__(self):\n"
                       "        return iter(range(0, self.n, 2))\ndef f(n):\n    return Evens(n)\n",
                       ["assert list(f(5)) == [0, 2, 4] and 4 in list(f(6))"],
                       "class Evens:\n    def __iter__(self):\n        return iter([])\n"
                       "def f(n):\n    return Evens()\n"),
    "ordereddict": ("def f(keys):\n    return collections.OrderedDict((k, 1) for k in keys)\n",
                    ["d = f('ab')\nd.move_to_end('a')\nassert list(d) == ['b', 'a']"],
                    "def f(keys):\n    return collections.OrderedDict()\n"),
    "userdict": ("def f(k):\n    return collections.UserDict({k: 1})\n",
                 ["assert f('a') == {'a': 1} and f('a').data == {'a': 1}"],
                 "def f(k):\n    return collections.UserDict()\n"),
    "datetime": ("import datetime\ndef f(h):\n    return datetime.datetime(2024, 1, 1, h)\n",
                 ["assert f(5).isoformat() == '2024-01-01T05:00:00' and f(5).hour == 5"],
                 "import datetime\ndef f(h):\n    return datetime.datetime(2024, 1, 1)\n"),
    "time": ("import datetime\ndef f(h):\n    return datetime.time(h, 30)\n",
             ["import datetime\nassert f(1) == datetime.time(1, 30) and f(2).minute == 30"],
             "import datetime\ndef f(h):\n    return datetime.time(0)\n"),
    "fractions_in_dict": ("from fractions import Fraction\ndef f(n):\n"
                          "    return {i: Fraction(i, n) for i in range(n)}\n",
                          ["from fractions import Fraction as F\nassert f(2) == {0: F(0), 1: F(1, 2)}"],
                          "def f(n):\n    return {}\n"),
    "key_error": ("def f(d):\n    return d['k']\n",
                  ["try:\n    f({})\nexcept KeyError as e:\n    assert e.args == ('k',)\nelse:\n"
                   "    raise AssertionError"],
                  "def f(d):\n    return d.get('k')\n"),
    "from_import": ("from math import gcd\nimport itertools as it\ndef f(a, b):\n    return gcd(a, b)\n",
                    ["assert f(4, 6) == gcd(4, 6) == 2", "assert list(it.islice(it.count(f(2, 4)), 2)) == [2, 3]"],
                    "from math import gcd\nimport itertools as it\ndef f(a, b):\n    return 1\n"),
    "property": ("class Box:\n    def __init__(self, w):\n        self._w = w\n    @property\n    def area(self):\n"
                 "        return self._w ** 2\ndef f(w):\n    return Box(w)\n",
                 ["assert f(3).area == 9 and Box(2).area == 4"],
                 "class Box:\n    def __init__(self, w):\n        self.area = 0\ndef f(w):\n    return Box(w)\n"),
    "sort_key": ("def f(xs, key):\n    return sorted(xs, key=key)\n",
                 ["assert f(['bb', 'a'], len) == ['a', 'bb'] and f([3, 1], lambda x: -x) == [3, 1]"],
                 "def f(xs, key):\n    return list(xs)\n"),
    "callback_kwargs": ("def f(fn):\n    return fn(1, b=2)\n", ["assert f(lambda a, b: a + b) == 3",
                                                               "assert f(lambda *a, **k: k) == {'b': 2}"],
                        "def f(fn):\n    return 0\n"),
    "numpy_int": ("import numpy as np\ndef f(n):\n    return np.arange(n).reshape(1, n)\n",
                  ["assert f(3).sum() == 3 and f(3).shape == (1, 3) and f(2)[0, 1] == 1"],
                  "import numpy as np\ndef f(n):\n    return np.zeros((1, n), dtype=int)\n"),
}


def _issue_38_cases() -> list[Case]:
    return [case for name, (code, scripts, wrong_code) in ISSUE_38.items()
            for case in _crossing(name, code, scripts, wrong_code)]


CORPUS = (_kind_cases() + _iterable_cases() + _in_place_cases() + _header_cases() + _loop_cases()
          + _list_node_cases() + _class_cases() + _thread_cases() + _issue_38_cases())
HELPER = "def helper(x):\n    return x * x\n"


def program(case: Case) -> str:
    return case.code or f"def f(x):\n    {case.body}\n"


def wrong(case: Case) -> str:
    """A wrong twin: it computes nothing (None; 0 where None is the right value) and changes no argument; for a
    whole program, the twin it names."""
    return case.wrong_code or f"def f(x):\n    return {0 if case.kind == 'none' else None}\n"


def plain_python_passes(code: str, script: str) -> bool:
    """The test in the program's own process, after the header, as `prompt + completion + test` runs, in a plain
    Python with the benchmark environment's modules only."""
    source = HEADER + HELPER + code + "\n" + script + "\n"
    with plain_python() as (command, env):
        return subprocess.run([*command, "-c", source], capture_output=True, timeout=30, env=env).returncode == 0


@pytest.fixture(scope="module")
def benchmark_pool():
    """A sandbox that shows the benchmark environment's third-party modules only, as `bench` judges."""
    with SandboxPool(SandboxConfig(workers=2, third_party=BENCHMARK_MODULES)) as pool:
        yield pool


def problem(script: str) -> Problem:
    return Problem(id="corpus", kind="call", statement="", entry_point="f", header=HEADER + HELPER,
                   public_tests=[TestCase(kind="call", script=script)], time_limit_s=5.0)


def test_the_corpus_holds_at_least_100_honest_programs():
    assert len(CORPUS) >= 100 and len({(c.kind, c.script) for c in CORPUS}) == len(CORPUS)
    assert len(_issue_38_cases()) >= 60


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: f"{c.kind}:{c.script.splitlines()[-1][:40]}")
def test_plain_python_and_the_sandbox_agree_on_an_honest_program(benchmark_pool, case):
    code = program(case)
    assert plain_python_passes(code, case.script), "the corpus program is wrong, not the judge"
    report = Judge(benchmark_pool).judge(problem(case.script), code)
    assert report.passed, [v.detail for v in report.verdicts]


WRONG = [c for c in CORPUS[::3] + _loop_cases() if "!=" not in c.script]  # a `!=` test alone any other value passes
WRONG += [c for c in _list_node_cases() + _class_cases() + _thread_cases() + _issue_38_cases() if c not in WRONG]


@pytest.mark.parametrize("case", WRONG, ids=lambda c: f"{c.kind}:{c.script[:30]}")
def test_a_wrong_program_fails_both_ways(benchmark_pool, case):
    code = wrong(case)
    assert not plain_python_passes(code, case.script)
    report = Judge(benchmark_pool).judge(problem(case.script), code)
    assert not report.passed and not report.infrastructure_error


def test_stop_iteration_from_the_program_does_not_end_the_tests_own_loop(sandbox_pool):
    """The official harness passes `assert all(map(candidate, cases))` for a program that raises StopIteration (it
    ends the map early); a verdict must not: the exception arrives as the program's error."""
    script = "assert all(map(f, [1, 2, 3]))"
    report = Judge(sandbox_pool).judge(problem(script), "def f(x):\n    raise StopIteration\n")
    assert not report.passed and "StopIteration" in report.verdicts[0].detail


# Installed here (solidcoder's dependencies), not in the benchmark environment: a package and a one-file module.
UNLISTED = ("typer", "typing_extensions")


@pytest.mark.parametrize("module", UNLISTED)
def test_a_module_the_benchmark_environment_lacks_fails_both_ways_and_imports_in_the_users(benchmark_pool,
                                                                                          sandbox_pool, module):
    code = f"import {module}\ndef f(x):\n    return x + 1\n"
    assert not plain_python_passes(code, "assert f(1) == 2")
    report = Judge(benchmark_pool).judge(problem("assert f(1) == 2"), code)
    assert not report.passed and f"No module named '{module}'" in report.verdicts[0].detail
    assert Judge(sandbox_pool).judge(problem("assert f(1) == 2"), code).passed  # solve's: every installed module


def test_the_environment_lists_what_the_sandbox_hides():
    hidden = unlisted_modules(BENCHMARK_MODULES)
    names = {module_name(os.path.basename(path)) for path in hidden}
    assert {"typer", "typing_extensions"} <= names and not names & {"numpy", "solidcoder"}
