"""The wire format between the candidate's process and the judge's: exact plain values in, plain values or
WireError out, whatever the bytes."""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import enum
import fractions
import itertools
import json
import math
import os
import random
import struct

import pytest

from solidcoder.execution.inside import wire

PLAIN = [
    None, True, False, 0, -1, 2**63 - 1, -(2**63) + 1, 2**63, -(2**63), 10**400, -(7**300), 1.5, -0.0, math.inf,
    -math.inf, 1e-310, 2 + 3j, complex(math.inf, -0.0), "", "héllo ✓", "\ud800 lone surrogate", "\x00", b"",
    b"\x00\xff", [], [1, 2, 3], [1, "a", 2.5, None, True], [[1], [2, [3]]], (), (1,), (1, (2, (3,))), set(),
    {1, 2}, frozenset({"a"}), {}, {1: "a", (1, 2): [3], None: {"x": b"y"}}, {"k": {"j": [(True, 2**70)]}},
    [2**70, -(2**70), 5], [1, 10**5000], [-(10**5000), 2], (3, 10**5000), list(range(1000)),
    [str(i) for i in range(100)],
]


def same(a, b) -> bool:
    """Equal, of exactly the same types all the way down (NaN aside)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)  # tells -0.0 from 0.0, and NaN is NaN
    return a == b


@pytest.mark.parametrize("value", PLAIN, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(PLAIN)])
def test_every_plain_value_arrives_as_itself(value):
    assert same(wire.decode(wire.encode(value)), value)


def test_nan_arrives_as_nan():
    assert math.isnan(wire.decode(wire.encode(math.nan)))
    assert same(wire.decode(wire.encode([math.nan, (math.nan,)])), [math.nan, (math.nan,)])


def test_a_handle_arrives_as_a_handle_with_its_number():
    value = wire.decode(wire.encode(("handle", wire.Handle(7))))
    assert type(value[1]) is wire.Handle and value[1].id == 7


class Number(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


@pytest.mark.parametrize("value", [object(), math.sqrt, (1, [2, {3: object()}]), itertools.count()], ids=repr)
def test_anything_that_equals_no_builtin_value_is_refused_when_sent(value):
    with pytest.raises(wire.WireError):
        wire.encode(value)


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize(("value", "expected"), [
    (Number.ONE, 1), (Text("x"), "x"), ([Text("x")], ["x"]), ({1: Number.ONE}, {1: 1}),
    (Point(1, 2), (1, 2)), (range(1, 9, 3), range(1, 9, 3)),
], ids=repr)
def test_a_builtin_subclass_or_range_arrives_as_the_builtin_value_it_equals(value, expected):
    arrived = wire.decode(wire.encode(value))
    assert same(arrived, expected) if not isinstance(expected, range) else arrived == expected
    assert arrived == value  # plain Python's equality holds between what was sent and what arrived


def test_an_iterator_arrives_as_a_fresh_iterator_over_its_items_and_a_view_as_a_view():
    arrived = wire.decode(wire.encode(x * x for x in range(3)))
    assert next(arrived) == 0 and list(arrived) == [1, 4] and arrived != [0, 1, 4]
    assert list(wire.decode(wire.encode(map(str, [1, 2])))) == ["1", "2"]
    keys = wire.decode(wire.encode({"a": 1, "b": 2}.keys()))
    assert keys == {"a", "b"} and list(keys) == ["a", "b"] and keys != ["a", "b"]  # a keys view, as in Python
    assert list(wire.decode(wire.encode({"a": 1}.values()))) == [1]
    assert wire.decode(wire.encode({"a": 1}.items())) == {("a", 1)}


def test_numpy_scalars_arrive_as_the_python_numbers_they_equal():
    np = pytest.importorskip("numpy")
    assert same(wire.decode(wire.encode([np.int64(3), np.float64(1.5), np.bool_(True)])), [3, 1.5, True])


def test_an_iterator_longer_than_the_limit_is_refused():
    with pytest.raises(wire.WireError, match="iterator of more than"):
        wire.encode(iter(range(wire.MAX_ITEMS + 1)))


def test_a_cyclic_value_is_refused_not_looped_on():
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(wire.WireError):
        wire.encode(cycle)


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_up_to_the_limit_crosses_and_deeper_does_not():
    assert same(wire.decode(wire.encode(nested(wire.MAX_DEPTH))), nested(wire.MAX_DEPTH))
    with pytest.raises(wire.WireError):
        wire.encode(nested(wire.MAX_DEPTH + 2))
    with pytest.raises(wire.WireError):
        wire.decode(b"[" * 500 + b"]" * 500)


HOSTILE = [
    b"", b"[", b"[1,]", b"{}", b'{"t":[1],"S":[2]}', b'{"q":[1]}', b'{"t":5}', b'{"d":[1]}', b'{"d":[[1],2]}',
    b'{"S":[[1]]}', b'{"b":"zz"}', b'{"b":5}', b'{"c":[1]}', b'{"c":["a","b"]}', b'{"h":-1}', b'{"h":1.5}',
    b'{"I":""}', b'{"I":"0x10"}', b'{"I":" 10"}', b'{"I":"1_0"}', b'{"I":"xyz"}', b"9" * 10000, b'"\xff"',
    b'"caf\xc3\xa9"', b"1 2", b"NaNx", b'{"t":[1]} trailing', b"\x00", b"[" * 100000,
]


@pytest.mark.parametrize("data", HOSTILE, ids=lambda d: repr(d)[:30])
def test_malformed_bytes_are_a_wire_error_and_nothing_else(data):
    with pytest.raises(wire.WireError):
        wire.decode(data)


def test_random_mutations_of_valid_messages_decode_to_plain_values_or_a_wire_error():
    rng = random.Random(13)
    plain_types = {type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, wire.Handle}
    seeds = [wire.encode(v) for v in PLAIN]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.choice(b'[]{}",:0123456789tSzdbcIhe-.' + bytes([rng.randrange(256)]))
        try:
            value = wire.decode(bytes(data))
        except wire.WireError:
            continue
        assert all(type(v) in plain_types for v in _walk(value))


def _walk(value):
    yield value
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _walk(item)
    elif isinstance(value, dict):
        for pair in value.items():
            yield from _walk(pair[0])
            yield from _walk(pair[1])


def test_frames_carry_their_payload_and_refuse_oversized_lengths():
    read_end, write_end = os.pipe()
    wire.write_frame(write_end, wire.encode([1, "two"]))
    assert wire.decode(wire.read_frame(read_end, deadline=None)) == [1, "two"]
    os.write(write_end, struct.pack("<I", wire.MAX_MESSAGE + 1))
    with pytest.raises(wire.WireError):
        wire.read_frame(read_end)
    os.close(read_end)
    os.close(write_end)


@pytest.mark.parametrize("make", [
    lambda np: np.arange(6, dtype=np.int64).reshape(2, 3),
    lambda np: np.array([0.5, np.nan, -np.inf], dtype=np.float32),
    lambda np: np.array([[True, False]]),
    lambda np: np.array([1 + 2j, 3j]),
    lambda np: np.array([2**64 - 1], dtype=np.uint64),
    lambda np: np.zeros((0, 4), dtype=np.int8),
])
def test_numpy_arrays_arrive_as_arrays_of_the_same_dtype_shape_and_values(make):
    np = pytest.importorskip("numpy")
    sent = make(np)
    got = wire.decode(wire.encode(sent))
    assert type(got) is np.ndarray and got.dtype == sent.dtype and got.shape == sent.shape
    np.testing.assert_array_equal(got, sent)


@pytest.mark.parametrize("payload", [
    ["|O", [1], [1]], ["|V8", [1], [1]], ["<M8[s]", [1], [1]], ["<i8", [2], [1]], ["<i8", [-1], []],
    ["<i8", [1.0], [1]], ["<i8", [1], "1"], [7, [1], [1]], ["<i8", [1], [{"h": 0}]], ["<i8", [1]],
    ["<i8", [1] * 33, [1]],
])
def test_a_malformed_array_is_a_wire_error(payload):
    pytest.importorskip("numpy")
    with pytest.raises(wire.WireError):
        wire.decode(json.dumps({"A": payload}).encode())


def test_an_array_of_objects_is_not_sent_as_an_array():
    np = pytest.importorskip("numpy")
    with pytest.raises(wire.WireError):
        wire.encode(np.array([object()]))


@pytest.mark.parametrize("value", [
    [(1, 2), (3, "a"), (None, 2.5, True)], [[1, 2], [], ["x"]], [(1, 2), [3, 4]], [(1, (2,))], [(2**70, 1)],
    [(1, 2)] * 3, [[1, [2]], [3]],
])
def test_rows_of_scalars_keep_their_exact_types(value):
    assert same(wire.decode(wire.encode(value)), value)


@pytest.mark.parametrize("payload", [[[1], [{"h": 1}]], [1, 2], "x", [[1], [[2]]]])
def test_malformed_rows_are_a_wire_error(payload):
    with pytest.raises(wire.WireError):
        wire.decode(json.dumps({"L": payload}).encode())


def test_the_collector_is_back_as_it_was_after_encoding_and_decoding():
    import gc

    for enabled in (True, False):
        gc.enable() if enabled else gc.disable()
        wire.decode(wire.encode([(1, 2)] * 10))
        assert gc.isenabled() is enabled
    gc.enable()


STDLIB_VALUES = [
    fractions.Fraction(3, 4), decimal.Decimal("1.10"), decimal.Decimal("-NaN"), datetime.date(2024, 2, 29),
    datetime.datetime(2024, 1, 1, 12, 30, 5, 7), datetime.time(3, 4), datetime.timedelta(days=-2, seconds=5),
    bytearray(b"a\x00"), collections.deque([1, 2], maxlen=3), array.array("d", [1.5]), collections.Counter("aab"),
    collections.OrderedDict(b=1, a=2), collections.defaultdict(list, {"a": [1]}), collections.UserList([1]),
    collections.UserDict(a=1), collections.UserString("x"),
]


@pytest.mark.parametrize("value", STDLIB_VALUES, ids=repr)
def test_a_stdlib_value_arrives_as_itself_rebuilt_by_its_constructor(value):
    arrived = wire.decode(wire.encode([value]))[0]
    assert type(arrived) is type(value) and str(arrived) == str(value)
    assert getattr(arrived, "maxlen", None) == getattr(value, "maxlen", None)
    assert getattr(arrived, "default_factory", None) is getattr(value, "default_factory", None)


def test_a_defaultdict_with_a_factory_of_the_programs_arrives_without_it():
    arrived = wire.decode(wire.encode(collections.defaultdict(lambda: 7, {"a": 1})))
    assert type(arrived) is collections.defaultdict and arrived.default_factory is None and arrived == {"a": 1}


@pytest.mark.parametrize("payload", [
    ["Fraction", [1, 0]], ["Fraction", [1.5, 2]], ["Decimal", "x" * 20000], ["Decimal", 1], ["date", [2024, 13, 1]],
    ["date", [10**30, 1, 1]], ["deque", [[1], -1]], ["deque", [[1], "3"]], ["array", ["O", [1]]],
    ["array", ["i", [2**70]]],
    ["Counter", [1]], ["defaultdict", [None, [1]]], ["eval", "1"], ["UserString", 1], ["datetime", [2024, 1, 1]],
])
def test_a_malformed_stdlib_value_is_a_wire_error(payload):
    with pytest.raises(wire.WireError):
        wire.decode(json.dumps({"o": payload}).encode())


def test_a_subclass_of_a_builtin_the_program_defined_keeps_a_handle_when_the_sender_gives_one():
    handles = iter(range(5, 100))
    arrived = wire.decode(wire.encode([Point(1, 2), Number.ONE, Text("t"), collections.Counter("a")],
                                      lambda value: wire.Handle(next(handles))))
    assert [(type(x).__name__, getattr(x, "name", None)) for x in arrived] == [
        ("Derived", "Point"), ("Derived", "Number"), ("Derived", "Text"), ("Counter", None)]
    assert [x.value for x in arrived[:3]] == [(1, 2), 1, "t"] and arrived[0].handle.id == 5


def test_a_builtin_type_or_function_arrives_as_the_receivers_own():
    assert all(a is b for a, b in zip(wire.decode(wire.encode([int, len, ValueError, abs])), [int, len, ValueError,
                                                                                                  abs], strict=True))


@pytest.mark.parametrize("name", ["__import__x", "os", "Ellipsis", "True", "__build_class__x", 7])
def test_a_builtin_name_that_is_no_builtin_type_or_function_is_a_wire_error(name):
    with pytest.raises(wire.WireError):
        wire.decode(json.dumps({"B": name}).encode())


def test_a_datetime_with_a_timezone_is_not_sent_without_it():
    aware = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    with pytest.raises(wire.WireError):
        wire.encode(aware)
    assert type(wire.decode(wire.encode(aware, lambda value: wire.Handle(3)))) is wire.Handle
