"""Objects of the program's own classes, reached by a test through proxies (issue 30, item 1): the equality rule
and what a lying or hostile object can and cannot do. Each attack ends as a failing verdict, and the pool keeps
serving (each test judges an honest program after the attack)."""

from __future__ import annotations

import pytest

from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, TestCase

HONEST = "def f(x):\n    return x + 1\n"


def problem(script: str, time_limit_s: float = 5.0) -> Problem:
    return Problem(id="objects", kind="call", statement="", entry_point="f",
                   public_tests=[TestCase(kind="call", script=script)], time_limit_s=time_limit_s)


def judged(pool, code: str, script: str, time_limit_s: float = 5.0):
    """The verdict of `code` on `script`, after checking that the pool then still judges an honest program."""
    report = Judge(pool).judge(problem(script, time_limit_s), code)
    assert Judge(pool).judge(problem("assert f(1) == 2"), HONEST).passed
    return report.verdicts[0]


def passes(pool, code: str, script: str, time_limit_s: float = 5.0) -> None:
    found = judged(pool, code, script, time_limit_s)
    assert found.passed, found.detail


ALWAYS_EQUAL = "class Anything:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"


def test_an_object_whose_eq_always_answers_true_fails_against_an_expected_value(sandbox_pool):
    verdict = judged(sandbox_pool, ALWAYS_EQUAL + "def f(x):\n    return Anything()\n", "assert f(1) == 2")
    assert verdict.status == "fail"


def test_an_object_whose_eq_always_answers_true_fails_on_the_expected_side_too(sandbox_pool):
    verdict = judged(sandbox_pool, ALWAYS_EQUAL + "def f(x):\n    return Anything()\n", "assert [2] == [f(1)]")
    assert verdict.status == "fail"


def test_the_programs_eq_never_sees_an_expected_value(sandbox_pool):
    code = "class Spy:\n    def __eq__(self, other):\n        raise ValueError(f'saw {other!r}')\n" \
           "def f(x):\n    return Spy()\n"
    verdict = judged(sandbox_pool, code, "assert f(1) == 12345")
    assert verdict.status == "fail" and "saw" not in verdict.detail


def test_two_of_the_programs_objects_compare_by_its_own_eq(sandbox_pool):
    verdict = judged(sandbox_pool, ALWAYS_EQUAL + "def f(x):\n    return Anything()\n", "assert f(1) == f(2)")
    assert verdict.passed


@pytest.mark.parametrize("method, script", [
    ("def __len__(self):\n        return 5", "assert len(f(1)) == 3"),
    ("def __len__(self):\n        return '3'", "assert len(f(1)) == 3"),
    ("def __str__(self):\n        return 'no'", "assert str(f(1)) == 'yes'"),
    ("def __str__(self):\n        return Anything()", "assert str(f(1)) == 'yes'"),
    ("def __bool__(self):\n        return Anything()", "assert f(1)"),
    ("def __contains__(self, x):\n        return Anything()", "assert 3 in f(1) and not (4 in f(1))"),
    ("def __getitem__(self, i):\n        return Anything()", "assert f(1)[0] == 7"),
    ("def __hash__(self):\n        return 0", "assert hash(f(1)) == hash(7)"),
    ("def __iter__(self):\n        return iter([Anything()])", "assert list(f(1)) == [7]"),
])
def test_a_lying_protocol_method_passes_only_with_the_right_value(sandbox_pool, method, script):
    code = ALWAYS_EQUAL + f"class Liar:\n    {method}\ndef f(x):\n    return Liar()\n"
    assert judged(sandbox_pool, code, script).status in ("fail", "error")


def test_a_lie_that_is_the_right_value_is_the_programs_answer(sandbox_pool):
    code = "class Box:\n    def __len__(self):\n        return 3\ndef f(x):\n    return Box()\n"
    assert judged(sandbox_pool, code, "assert len(f(1)) == 3").passed


@pytest.mark.parametrize("body, script", [
    ("return 'x' * (100 << 20)", "assert len(repr(f(1))) > 0"),  # a repr over the wire's limit
    ("a = []\n        a.append(a)\n        return a", "assert f(1)[0] == []"),  # a cyclic value
    ("a = []\n        for _ in range(10 ** 4):\n            a = [a]\n        return a", "assert f(1)[0] == []"),
])
def test_a_huge_or_recursive_proxy_answer_is_the_programs_failure(sandbox_pool, body, script):
    hostile = f"class Big:\n    def __repr__(self):\n        {body}\n    def __getitem__(self, i):\n        {body}\n"
    verdict = judged(sandbox_pool, hostile + "def f(x):\n    return Big()\n", script)
    assert verdict.status == "error" and "cannot be judged" in verdict.detail


def test_an_endless_iterator_of_the_programs_is_consumed_lazily(sandbox_pool):
    code = "import itertools\nclass Counter:\n    def __iter__(self):\n        return itertools.count()\n" \
           "def f(x):\n    return Counter()\n"
    script = "import itertools\nassert list(itertools.islice(f(1), 3)) == [0, 1, 2]"
    assert judged(sandbox_pool, code, script).passed


def test_stop_iteration_from_a_method_does_not_end_the_tests_loop(sandbox_pool):
    code = "class C:\n    def ok(self, x):\n        raise StopIteration\ndef f(x):\n    return C()\n"
    verdict = judged(sandbox_pool, code, "assert all(map(f(0).ok, [1, 2, 3]))")
    assert verdict.status == "error" and "StopIteration" in verdict.detail


def test_a_program_spinning_under_a_test_thread_times_out(sandbox_pool):
    code = "def f(x):\n    while True:\n        pass\n"
    script = "from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(1) as ex:\n" \
             "    assert ex.submit(f, 1).result(timeout=30) == 2"
    assert judged(sandbox_pool, code, script, time_limit_s=1.0).status == "timeout"


def test_many_objects_in_one_answer_are_each_reachable(sandbox_pool):
    code = "class N:\n    def __init__(self, v):\n        self.v = v\ndef f(x):\n    return [N(i) for i in range(x)]\n"
    assert judged(sandbox_pool, code, "xs = f(20000)\nassert len(xs) == 20000 and xs[-1].v == 19999").passed


FORGED_ARRAY = """
class Forged:
    def __init__(self):
        # the address of the small int 7's digit: the same object in the judge, a fork of the same zygote
        self.__array_interface__ = {"data": (id(7) + 24, {readonly}), "shape": (1,), "typestr": "<u4", "version": 3}
        self.__array_struct__ = self.__dlpack__ = self._as_parameter_ = id(7)
    def __len__(self):
        return 1
    def __getitem__(self, i):
        if i:
            raise IndexError(i)
        return 0
def f(x):
    return Forged()
"""


@pytest.mark.parametrize("readonly, script", [
    ("True", "import numpy as np\nassert np.asarray(f(1))[0] == 7"),  # reading the judge's memory
    ("False", "import numpy as np\na = np.asarray(f(1))\na[0] = 8\nassert 7 + 0 == 8"),  # writing it
])
def test_an_object_pointing_numpy_at_the_judges_memory_reaches_none_of_it(sandbox_pool, readonly, script):
    pytest.importorskip("numpy")
    verdict = judged(sandbox_pool, FORGED_ARRAY.replace("{readonly}", readonly), script)
    assert verdict.status == "fail"


def test_no_memory_interface_of_the_programs_object_is_forwarded(sandbox_pool):
    script = "assert not any(hasattr(f(1), name) for name in ('__array_interface__', '__array_struct__', " \
             "'__dlpack__', '_as_parameter_'))\nassert len(f(1)) == 1"
    assert judged(sandbox_pool, FORGED_ARRAY.replace("{readonly}", "True"), script).passed


@pytest.mark.parametrize("script", [
    "import numpy as np\nassert np.array_equal(f(np.arange(3)), [0, 2, 4])",
    "import numpy as np\nnp.testing.assert_allclose(f([0.5, 1.0]), [1.0, 2.0])",
    "import numpy as np\nassert f(np.ones((2, 2))).shape == (2, 2) and f(np.ones(2, dtype=np.int32)).dtype == np.int32",
    "import numpy as np\nassert isinstance(f([1]), np.ndarray) and f([1, 2]).tolist() == [2, 4]",
])
def test_a_numpy_array_crosses_as_a_real_array_both_ways(sandbox_pool, script):
    pytest.importorskip("numpy")
    assert judged(sandbox_pool, "import numpy as np\ndef f(x):\n    return np.asarray(x) * 2\n", script).passed


def catches(call: str, clause: str, then: str = "pass") -> str:
    """A script that expects `call` to raise what `clause` names, then runs `then` in the handler."""
    return f"try:\n    {call}\nexcept {clause}:\n    {then}\nelse:\n    raise AssertionError('nothing raised')"


@pytest.mark.parametrize("code, script", [
    ("import statistics\ndef f(x):\n    return statistics.mean(x)\n",
     "import statistics\n" + catches("f([])", "statistics.StatisticsError")),
    ("import json\ndef f(x):\n    return json.loads(x)\n",
     "import json\n" + catches("f('{')", "json.JSONDecodeError as e", "assert e.pos == 1")),
    ("class Invalid(ValueError):\n    pass\ndef f(x):\n    raise Invalid('bad', x)\n",
     catches("f(3)", "ValueError as e", "assert type(e).__name__ == 'Invalid' and e.args == ('bad', 3)")),
    ("def f(x):\n    raise KeyError(x)\n", catches("f((1, 2))", "LookupError as e", "assert e.args == ((1, 2),)")),
    ("class Mine(Exception):\n    pass\ndef f(x):\n    raise Mine()\n",
     "errors = []\nfor _ in range(2):\n    try:\n        f(1)\n    except Exception as e:\n"
     "        errors.append(type(e))\nassert errors[0] is errors[1] and errors[0].__name__ == 'Mine'"),
])
def test_the_programs_exception_arrives_as_its_class_with_its_args(sandbox_pool, code, script):
    passes(sandbox_pool, code, script)


POSING = ("type('Fake', (Exception,), {'__module__': 'solidcoder.execution.inside.proxies', "
          "'__qualname__': 'TestTimeout'})")


@pytest.mark.parametrize("code", [
    "def f(x):\n    raise StopIteration\n",
    "class Stop(StopIteration):\n    pass\ndef f(x):\n    raise Stop\n",
    "def f(x):\n    raise SystemExit(0)\n",
    f"def f(x):\n    raise {POSING}()\n",
])
def test_an_exception_cannot_end_the_tests_loop_or_pose_as_the_judges(sandbox_pool, code):
    script = "caught = []\nfor i in range(3):\n    try:\n        f(i)\n    except Exception as e:\n" \
             "        caught.append(type(e).__name__)\nassert len(caught) == 3, caught"
    passes(sandbox_pool, code, script)


def test_a_million_pair_answer_is_judged_within_the_programs_limit(sandbox_pool):
    """Plain Python builds it in well under a second; sending it must not turn the right answer into a timeout."""
    code = "def f(n):\n    return [(i, i + 1) for i in range(n)]\n"
    passes(sandbox_pool, code, "r = f(10**6)\nassert len(r) == 10**6 and r[-1] == (999999, 1000000)")


def test_a_program_that_stalls_its_own_sending_gains_only_the_allowance(sandbox_pool):
    code = "import sys, time\nwire = sys.modules['solidcoder.execution.inside.wire']\n" \
           "def f(x):\n    wire._dumps = lambda value: time.sleep(60)\n    return x\n"
    started = __import__("time").monotonic()
    found = judged(sandbox_pool, code, "assert f(1) == 1", time_limit_s=1.0)
    assert found.status == "timeout" and __import__("time").monotonic() - started < 10


VALUES = """
import collections, enum, array, datetime, decimal, fractions
Point = collections.namedtuple("Point", "x y")
class Color(enum.IntEnum):
    RED = 1
class Shape(enum.Enum):
    SQUARE = "sq"
class Liar(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def point():
    return Point(1, 2)
def total(p):
    return p.x + p.y
def color():
    return Color.RED
def shape():
    return Shape.SQUARE
def counter(s):
    return collections.Counter(s)
def groups():
    return collections.defaultdict(list, {"a": [1]})
def liar():
    return Liar(5)
def f(x):
    return x * 2
"""


@pytest.mark.parametrize("script", [
    "p = point()\nassert p == (1, 2) and p.x == 1 and p._asdict() == {'x': 1, 'y': 2} and type(p).__name__ == 'Point'",
    "p = point()\nassert total(p) == 3 and p.y == 2",  # the program gets its own namedtuple back
    "c = color()\nassert c == 1 and c.name == 'RED' and c.value == 1 and c in {1} and isinstance(c, int)",
    "assert shape().name == 'SQUARE' and shape().value == 'sq'",
    "c = counter('aab')\nassert c['z'] == 0 and c.most_common(1) == [('a', 2)] and c == {'a': 2, 'b': 1}",
    "d = groups()\nd['new'].append(2)\nassert d == {'a': [1], 'new': [2]}",
    "from fractions import Fraction as F\nassert f(F(1, 3)) == F(2, 3) and type(f(F(1, 3))) is F",
    "from decimal import Decimal\nassert f(Decimal('1.1')) == Decimal('2.2')",
    "import datetime\nassert f(datetime.timedelta(days=1)) == datetime.timedelta(days=2)",
    "import collections\nassert f(collections.deque([1])) == collections.deque([1, 1])",
    "import array\nassert f(array.array('i', [1])) == array.array('i', [1, 1])",
    "assert f(bytearray(b'a')) == bytearray(b'aa') and f(collections.UserList([1])) == [1, 1]",
])
def test_values_cross_as_what_they_are(sandbox_pool, script):
    passes(sandbox_pool, VALUES, "import collections\n" + script)


@pytest.mark.parametrize("script", ["assert liar() == 7", "assert 7 == liar()", "assert liar() in [7]",
                                    "assert {liar(): 1} == {7: 1}"])
def test_a_subclass_of_a_builtin_that_lies_about_equality_is_judged_on_its_value(sandbox_pool, script):
    assert judged(sandbox_pool, VALUES, script).status == "fail"


CLASSES = """
class Account:
    LIMIT = 100
    def __init__(self, balance):
        self.balance = balance
    @staticmethod
    def fee(amount):
        return amount // 10
    @classmethod
    def empty(cls):
        return cls(0)
def f(x):
    return x
def kind(x):
    return int if isinstance(x, int) else len
def grow(xs):
    xs.append(1)
    return xs
"""


@pytest.mark.parametrize("script", [
    "a = Account(5)\nassert isinstance(a, Account) and not isinstance(5, Account) and a.balance == 5",
    "assert Account.LIMIT == 100 and Account.fee(50) == 5 and Account.empty().balance == 0",
    "assert isinstance(Account.empty(), Account) and not isinstance(object(), Account)",
    "assert kind(1) is int and kind('a') is len and f(ValueError) is ValueError",
    "xs = [0]\nassert grow(xs) is xs and xs == [0, 1]",
    "xs = [0]\nys = f(xs)\nys.append(2)\nassert xs == [0, 2]",
])
def test_classes_builtins_and_the_tests_own_objects_keep_what_they_are(sandbox_pool, script):
    passes(sandbox_pool, CLASSES, script)


GENERATORS = """
import itertools
def naturals():
    n = 0
    while True:
        yield n
        n += 1
def echo():
    received = yield "ready"
    while True:
        received = yield received * 2
def squares(n):
    return (i * i for i in range(n))
def broken():
    yield 1
    yield 2
    raise ValueError("after two")
def f(x):
    return map(str, x)
"""


@pytest.mark.parametrize("script", [
    "import itertools\nassert list(itertools.islice(naturals(), 5)) == [0, 1, 2, 3, 4]",
    "g = naturals()\nassert next(g) == 0 and next(g) == 1",
    "g = echo()\nassert next(g) == 'ready' and g.send(3) == 6 and g.send(5) == 10\ng.close()",
    "assert sum(squares(10**5)) == sum(i * i for i in range(10**5))",
    "got = []\ntry:\n    for x in broken():\n        got.append(x)\nexcept ValueError as e:\n    assert got == [1, 2] "
    "and str(e) == 'after two'\nelse:\n    raise AssertionError",
    "assert list(f([1, 2])) == ['1', '2'] and f([1]) != ['1']",
])
def test_a_programs_generator_is_drawn_lazily_where_it_lives(sandbox_pool, script):
    passes(sandbox_pool, GENERATORS, script)


CALLBACKS = """
def apply(fn, xs):
    return [fn(x) for x in xs]
def compose(f, g):
    return lambda x: f(g(x))
def twice(fn):
    def wrapper(x):
        return fn(fn(x))
    return wrapper
def call(fn, *args, **kwargs):
    return fn(*args, **kwargs)
def double(x):
    return 2 * x
"""


@pytest.mark.parametrize("script", [
    "assert apply(lambda x: x + 1, [1, 2]) == [2, 3]",
    "assert apply(len, ['ab', 'c']) == [2, 1] and apply(str.upper, ['a']) == ['A']",
    "def mine(x):\n    return x * 10\nassert apply(mine, [1]) == [10]",
    "assert apply(double, [4]) == [8]",  # the program's own function, passed back to it
    "assert call(lambda *a, **k: (a, k), 1, b=2) == ((1,), {'b': 2})",
    "seen = []\napply(seen.append, [1, 2])\nassert seen == [1, 2]",
    "try:\n    call(lambda: 1 / 0)\nexcept ZeroDivisionError:\n    pass\nelse:\n    raise AssertionError",
    "assert call(lambda: apply(lambda y: y * 3, [1])) == [3]",  # a callback that calls the program again
])
def test_a_tests_callable_reaches_the_program_and_runs_in_the_judge(sandbox_pool, script):
    passes(sandbox_pool, CALLBACKS, script)


def test_callbacks_that_recurse_between_the_test_and_the_program_end_not_hang(sandbox_pool):
    script = "def bounce(n):\n    return call(bounce, n + 1)\nbounce(0)"
    found = judged(sandbox_pool, CALLBACKS, script)
    assert not found.passed and "Recursion" in found.detail


@pytest.mark.parametrize("code, script", [
    ("class Sneaky(list):\n    def __eq__(self, other):\n        self[:] = other if isinstance(other, list) else self\n"
     "        return True\n    __hash__ = None\ndef f(x):\n    return Sneaky([0])\n", "assert f(1) == [2]"),
    ("class Fake:\n    __class__ = int\n    def __eq__(self, other):\n        return True\n"
     "    __hash__ = object.__hash__\ndef f(x):\n    return Fake()\n",
     "r = f(1)\nassert isinstance(r, int) and r == 2"),
    ("class Point(tuple):\n    @property\n    def x(self):\n        return 2\ndef f(x):\n    return Point((0,))\n",
     "assert f(1) == (2,)"),
    ("import enum\nclass E(enum.IntEnum):\n    A = 0\n    def __eq__(self, other):\n        return True\n"
     "    __hash__ = int.__hash__\ndef f(x):\n    return E.A\n", "assert f(1) == 2"),
])
def test_dishonest_twins_fail(sandbox_pool, code, script):
    """A lying dunder, a value that changes itself when compared, a fake `__class__`: the judge compares the value
    the program computed, never what its methods claim."""
    assert judged(sandbox_pool, code, script).status == "fail"


@pytest.mark.parametrize("script", [
    "a = Account(5)\nassert type(a).__name__ == 'Account' and vars(a) == {'balance': 5}",
    "a = Account(5)\na.balance = 7\nassert vars(a) == {'balance': 7} and a.__dict__['balance'] == 7",
    "assert type(Account.empty()).__name__ == 'Account'",
])
def test_a_programs_object_reads_as_its_class(sandbox_pool, script):
    passes(sandbox_pool, CLASSES, script)
