"""Tests for the judge's pure comparison functions: stdout matching (tokens and lines) and strict value equality."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solidcoder.execution.compare import (
    MAX_DEPTH,
    first_difference,
    is_plain_value,
    matches_any,
    stdout_matches,
    strict_equal,
)

# ---------------------------------------------------------------- stdout


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("1 2 3\n", "1 2 3"),
        ("1 2 3   \r\n\n\n", "1 2 3\n"),
        ("a  b\tc\n", "a b c\n"),  # tokens, not spacing, matter
        ("", "\n\n"),
        ("0.3333333\n", "0.33333333\n"),
        ("2\n", "2.0\n"),  # a float expected accepts an integer token
        ("1000000000", "1e9"),
        ("1e6", "1000000.0000001"),
        ("-0.0", "0.0"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        ("1" * 5000, "1" * 5000),  # beyond int()'s digit limit
        ("nan", "nan"),  # identical strings always pass
        ("YES\nNO", "YES\nNO\n"),
    ],
)
def test_stdout_matches(actual, expected):
    assert stdout_matches(actual, expected)
    assert first_difference(actual, expected) is None


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("12345678901234567891", "12345678901234567890"),  # must not go through float
        ("1e9", "999999937"),  # an integer expected needs an integer token, never within a tolerance
        ("5.0", "5"),
        ("007", "7"),  # integers compare as tokens, as Codeforces' checkers read them
        ("7", "007"),  # a zero-padded answer must keep its padding
        ("+5", "5"),
        ("-0", "0"),
        ("1" * 5000 + "1", "1" * 5000 + "2"),
        ("1 2", "1 2 3"),
        ("1 2 3", "1 2"),
        ("1\n2", "1\n2\n3"),
        ("1\n2\n3", "1\n2"),
        ("0.1", "0.2"),
        ("nan", "1.0"),
        ("nan", "NaN"),
        ("inf", "1e999"),  # both overflow to infinity, which proves nothing
        ("1_000", "1000"),  # float() accepts underscores, judges should not
        ("yes", "YES"),
        ("1.0000001", "1.0000100"),
    ],
)
def test_stdout_mismatches(actual, expected):
    assert not stdout_matches(actual, expected)
    assert first_difference(actual, expected) is not None


def test_tolerance_is_absolute_or_relative():
    assert stdout_matches("1000000.5", "1000000.0", tol=1e-6)  # relative: 0.5 <= 1e-6 * 1e6
    assert not stdout_matches("1.5", "1.0", tol=1e-6)
    assert stdout_matches("1.5", "1.0", tol=0.5)
    assert not stdout_matches("3", "4", tol=10)  # integer pairs are exact whatever the tolerance
    with pytest.raises(ValueError):
        stdout_matches("1", "1", tol=-1)


@pytest.mark.parametrize("mode", ["tokens", "lines"])
def test_1e9_is_not_999999937_in_either_mode(mode):
    assert not stdout_matches("1e9\n", "999999937\n", mode=mode)


def test_tokens_match_across_lines():
    assert stdout_matches("1 2\n3\n", "1\n2 3")


def test_lines_mode_fails_a_different_line_layout():
    assert not stdout_matches("1 2\n3\n", "1\n2 3", mode="lines")


def test_tokens_mode_ignores_leading_blank_lines():
    assert stdout_matches("\n\n1", "1")


def test_lines_mode_counts_leading_blank_lines():
    assert not stdout_matches("\n1", "1", mode="lines")


def test_lines_mode_ignores_trailing_space_and_blank_lines():
    assert stdout_matches("1 2 \r\n3\n\n", "1  2\n3", mode="lines")


def test_only_ascii_whitespace_separates_tokens():
    assert not stdout_matches("1\u00a02", "1 2")


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="mode"):
        stdout_matches("1", "1", mode="words")


@pytest.mark.parametrize(
    ("actual", "expected", "description"),
    [
        ("1 2\n3 4\n6 6 7", "1 2 3 4 5 6 7", "token 5 (line 3): expected '5', got '6'"),
        ("1 2\n", "1 2 3", "expected 3 tokens, got 2: token 3 missing, expected '3'"),
        ("1\n2\n\n3", "1 2", "expected 2 tokens, got 3: unexpected token 3 (line 4): '3'"),
    ],
)
def test_first_difference_names_the_token_and_its_line(actual, expected, description):
    assert first_difference(actual, expected) == description


@pytest.mark.parametrize(
    ("actual", "expected", "description"),
    [
        ("1 2 3\n4 5 7", "1 2 3\n4 5 6", "line 2, token 3: expected '6', got '7'"),
        ("1 2", "1 2 3", "line 1: expected 3 tokens, got 2 (expected '1 2 3', got '1 2')"),
        ("a", "a\nb", "expected 2 lines, got 1: line 2 missing, expected 'b'"),
        ("a\nb\nc", "a", "expected 1 lines, got 3: unexpected line 2: 'b'"),
    ],
)
def test_first_difference_in_lines_mode_names_the_line(actual, expected, description):
    assert first_difference(actual, expected, mode="lines") == description


@pytest.mark.parametrize("mode", ["tokens", "lines"])
def test_first_difference_stays_short(mode):
    long = first_difference("x" * 500, "y", mode=mode)
    assert long is not None and len(long) < 200


def test_matches_any():
    assert matches_any("-1\n", ["1", "-1"], tol=1e-6)
    assert not matches_any("0", ["1", "-1"])
    assert not matches_any("0", [])


@pytest.mark.parametrize("mode", ["tokens", "lines"])
@given(text=st.text())
def test_output_always_matches_itself(mode, text):
    assert stdout_matches(text, text, mode=mode)
    assert stdout_matches(text + "  \n\n", text, mode=mode)


@given(st.lists(st.integers(), max_size=20), st.lists(st.sampled_from([" ", "\n", "\t", "\r\n"]), min_size=20))
def test_any_whitespace_layout_of_the_same_tokens_matches(numbers, separators):
    laid_out = "".join(f"{n}{sep}" for n, sep in zip(numbers, separators, strict=False))
    assert stdout_matches(laid_out, " ".join(map(str, numbers)))


@given(st.integers(), st.integers())
def test_integers_compare_exactly(a, b):
    assert stdout_matches(str(a), str(b)) == (a == b)


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_float_repr_matches_itself_within_tolerance(x):
    assert stdout_matches(repr(x), f"{x:.12e}")


@given(st.integers(min_value=-(10**18), max_value=10**18))
def test_integer_expected_never_accepts_a_float_token(n):
    assert not stdout_matches(f"{float(n)!r}", str(n))


# ---------------------------------------------------------------- strict_equal


class LiesAboutEquality:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class MyInt(int):
    pass


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (None, None),
        (2, 2.0),  # an expected float accepts an int
        (999999937, 1e9),
        (0.1 + 0.2, 0.3),
        (10**30, 10**30),
        (True, True),
        ("a", "a"),
        (b"a", b"a"),
        (1 + 2j, 1 + 2.0000000001j),
        ((1, 2), [1, 2]),  # JSON has no tuples
        ([(1, 2), (3, 4)], [[1, 2], [3, 4]]),
        ({"a": [1, 2.0]}, {"a": [1.0000000001, 2.0]}),
        ({1: "x", (2, 3): "y"}, {1: "x", (2, 3): "y"}),
        ({1, 2, 3}, {3, 2, 1}),
        (frozenset({(1, "a")}), frozenset({(1, "a")})),
        (float("inf"), float("inf")),
    ],
)
def test_strict_equal_accepts(actual, expected):
    assert strict_equal(actual, expected)


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (True, 1),
        (1, True),
        (0, False),
        (1e9, 999999937),  # an expected int needs an int, exactly equal
        (2.0, 2),
        ([3.0], [3]),
        ({1.0: "x"}, {1: "x"}),  # keys compare exactly, type included
        ({1.0}, {1}),
        ([True], [1]),
        ({True}, {1}),
        ({True: "x"}, {1: "x"}),
        (MyInt(3), 3),
        (3, MyInt(3)),
        (LiesAboutEquality(), 3),
        ([LiesAboutEquality()], [3]),
        ({LiesAboutEquality()}, {3}),
        (float("nan"), float("nan")),
        ([float("nan")], [float("nan")]),
        ({float("nan")}, {float("nan")}),
        (complex(float("nan"), 0), complex(float("nan"), 0)),
        ([1, 2], (1, 2)),  # a list where a tuple is expected is a real difference
        ([1, 2], [1, 2, 3]),
        ({1, 2}, frozenset({1, 2})),
        ({1, 2}, [1, 2]),
        ({"1": 2}, {1: 2}),
        ("1", 1),
        (b"a", "a"),
        (1 + 0j, 1),
        (10**400, 1.0),  # too big for a float: must not raise
        (0.1, 0.2),
        (12345678901234567891, 12345678901234567890),
        ({"a": 1}, {"a": 1, "b": 2}),
    ],
)
def test_strict_equal_rejects(actual, expected):
    assert not strict_equal(actual, expected)


def test_strict_equal_never_calls_foreign_eq():
    calls = []

    class Spy:
        def __eq__(self, other):
            calls.append(other)
            return True

        __hash__ = object.__hash__

    assert not strict_equal({"k": Spy()}, {"k": 1})
    assert not strict_equal(1, Spy())
    assert calls == []


def test_strict_equal_tolerance():
    assert strict_equal(1.0, 1.05, tol=0.1)
    assert not strict_equal(1.0, 1.05, tol=0.01)
    assert strict_equal(1e-9, 0.0)  # absolute tolerance near zero
    with pytest.raises(ValueError):
        strict_equal(1.0, 1.0, tol=float("nan"))


def test_self_referential_containers_are_not_equal():
    a: list = [1]
    a.append(a)
    b: list = [1]
    b.append(b)
    assert not strict_equal(a, b)
    assert not strict_equal(a, a)
    d: dict = {}
    d["self"] = d
    assert not strict_equal(d, {"self": {}})
    assert not is_plain_value(a)
    assert not is_plain_value(d)


def test_shared_but_acyclic_values_are_fine():
    inner = [1, 2]
    assert strict_equal([inner, inner], [[1, 2], [1, 2]])
    assert is_plain_value([inner, inner])


def nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_deep_nesting_is_refused_without_crashing():
    assert strict_equal(nested(MAX_DEPTH - 1), nested(MAX_DEPTH - 1))
    assert not strict_equal(nested(100_000), nested(100_000))
    assert not is_plain_value(nested(100_000))
    assert is_plain_value(nested(MAX_DEPTH - 1))
    deep_tuple: tuple = ()
    for _ in range(100_000):
        deep_tuple = (deep_tuple,)
    assert not strict_equal({deep_tuple}, {deep_tuple})


# ---------------------------------------------------------------- is_plain_value


@pytest.mark.parametrize(
    "value",
    [None, True, 1, 1.5, float("nan"), 1j, "s", b"b", [1, (2, {3: {4}})], {"a": frozenset({1})}, set(), {(): []}],
)
def test_plain_values(value):
    assert is_plain_value(value)


@pytest.mark.parametrize(
    "value", [MyInt(1), LiesAboutEquality(), [1, LiesAboutEquality()], {"k": object()}, {MyInt(1): 1}, range(3)]
)
def test_forged_values_are_not_plain(value):
    assert not is_plain_value(value)


# ---------------------------------------------------------------- properties

_no_int_hashable = st.none() | st.booleans() | st.floats(allow_nan=False) | st.text() | st.binary()
_hashable = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
_scalars = _hashable | st.complex_numbers(allow_nan=False)
plain_values = st.recursive(
    _scalars | st.sets(_hashable, max_size=4) | st.frozensets(_hashable, max_size=4),
    lambda children: st.lists(children, max_size=4)
    | st.tuples(children, children)
    | st.dictionaries(_hashable, children, max_size=4),
    max_leaves=20,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@given(plain_values)
def test_plain_values_equal_themselves_and_copies(value):
    assert is_plain_value(value)
    assert strict_equal(value, value)
    assert strict_equal(value, copy.deepcopy(value))


@given(json_values)
def test_json_round_trip_is_equal(value):
    assert strict_equal(value, json.loads(json.dumps(value)))


tuple_free_values = st.recursive(
    _no_int_hashable | st.complex_numbers(allow_nan=False) | st.sets(_no_int_hashable, max_size=4),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_no_int_hashable, children, max_size=4),
    max_leaves=12,
)


@given(tuple_free_values, tuple_free_values)
def test_strict_equal_is_symmetric_without_tuples_or_ints(a, b):
    # Only the deliberate rules (a tuple for a list, an int for a float) break symmetry, so without them it holds.
    assert strict_equal(a, b) == strict_equal(b, a)


def test_bool_is_not_a_number_inside_floats():
    assert not strict_equal(True, 1.0)
    assert not strict_equal(1.0, True)
    assert math.isclose(1.0, True)  # the naive comparison would have passed


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_expected_float_accepts_the_same_int(n):
    assert strict_equal(n, float(n))


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_expected_int_refuses_the_same_float(n):
    assert not strict_equal(float(n), n)
