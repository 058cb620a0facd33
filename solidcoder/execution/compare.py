"""Pure comparison functions for the judge: stdout matching and strict equality of returned values.

Nothing here runs candidate code. Stdout is compared line by line and token by token with a numeric tolerance.
Returned values are compared with *exact* builtin types only, so a candidate cannot pass by returning an object
whose `__eq__` always answers True (or an int subclass that lies about its value).

JSON has no tuples, sets or non-string dict keys, so expected values decoded from JSON lose some distinctions.
`strict_equal` therefore accepts a tuple where a list is expected and an int where a float is expected (and the
reverse). It does not bridge dict keys: an expected `{"1": ...}` from JSON does not match an actual `{1: ...}`.
"""

from __future__ import annotations

import cmath
import math
import re
from typing import Any

# Deep enough for any sensible expected value, shallow enough to stay far from Python's recursion limit.
MAX_DEPTH = 100

_INT_RE = re.compile(r"[+-]?[0-9]+")
# Only plain decimal notation: float() would also accept "nan", "inf", "1_000" and "0x1p3"-like oddities.
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_ALLOWED = _SCALARS | _CONTAINERS


class _Unmatchable(Exception):
    """A set element or dict key that cannot be compared (not plain, NaN, or too deep)."""


def _check_tol(tol: float) -> None:
    if not tol >= 0:  # also rejects NaN
        raise ValueError(f"tolerance must be >= 0, got {tol!r}")


# ---------------------------------------------------------------- stdout


def _lines(text: str) -> list[str]:
    # Split on "\n" only; a trailing "\r" from Windows line ends is removed by rstrip like other trailing space.
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _int_key(token: str) -> str:
    # Compare integers as digit strings: exact for any size, and int() would refuse more than 4300 digits.
    digits = token.lstrip("+-").lstrip("0")
    return "-" + digits if token.startswith("-") and digits else digits


def _tokens_match(actual: str, expected: str, tol: float) -> bool:
    if actual == expected:
        return True
    if _INT_RE.fullmatch(actual) and _INT_RE.fullmatch(expected):
        return _int_key(actual) == _int_key(expected)
    if not (_NUM_RE.fullmatch(actual) and _NUM_RE.fullmatch(expected)):
        return False
    a, b = float(actual), float(expected)
    if not (math.isfinite(a) and math.isfinite(b)):  # overflowed literals like 1e999 prove nothing
        return False
    diff = abs(a - b)
    return diff <= tol or diff <= tol * max(abs(a), abs(b))


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _line_difference(lineno: int, got: str, want: str, tol: float) -> str | None:
    got_tokens, want_tokens = got.split(), want.split()
    for i, (g, w) in enumerate(zip(got_tokens, want_tokens, strict=False), 1):
        if not _tokens_match(g, w, tol):
            return f"line {lineno}, token {i}: expected {_short(w)}, got {_short(g)}"
    if len(got_tokens) != len(want_tokens):
        return (
            f"line {lineno}: expected {len(want_tokens)} tokens, got {len(got_tokens)} "
            f"(expected {_short(want)}, got {_short(got)})"
        )
    return None


def first_difference(actual: str, expected: str, tol: float = 1e-6) -> str | None:
    """Describe the first mismatch between outputs in one short line (for debugger feedback); None if they match."""
    _check_tol(tol)
    got, want = _lines(actual), _lines(expected)
    for lineno, (g, w) in enumerate(zip(got, want, strict=False), 1):
        diff = _line_difference(lineno, g, w, tol)
        if diff:
            return diff
    counts = f"expected {len(want)} lines, got {len(got)}"
    if len(got) < len(want):
        return f"{counts}: line {len(got) + 1} missing, expected {_short(want[len(got)])}"
    if len(got) > len(want):
        return f"{counts}: unexpected line {len(want) + 1}: {_short(got[len(want)])}"
    return None


def stdout_matches(actual: str, expected: str, tol: float = 1e-6) -> bool:
    """True when the outputs agree line by line and token by token (numbers within `tol`, integers exactly).

    Trailing whitespace on each line and trailing blank lines are ignored; leading blank lines count.
    """
    return first_difference(actual, expected, tol) is None


def matches_any(actual: str, accepted: list[str], tol: float = 1e-6) -> bool:
    """True when `actual` matches at least one accepted output (False for an empty list)."""
    return any(stdout_matches(actual, option, tol) for option in accepted)


# ---------------------------------------------------------------- returned values


def is_plain_value(value: Any) -> bool:
    """True when `value` is built only from exact builtin types (no subclasses), without cycles or deep nesting."""
    try:
        return _plain(value, 0, set())
    except RecursionError:
        return False


def _plain(value: Any, depth: int, active: set[int]) -> bool:
    kind = type(value)
    if kind not in _ALLOWED or depth > MAX_DEPTH:
        return False
    if kind in _SCALARS:
        return True
    if id(value) in active:  # a cycle: the value could never be serialised or compared
        return False
    active.add(id(value))
    try:
        items = value.items() if kind is dict else ((x, None) for x in value)
        return all(_plain(k, depth + 1, active) and _plain(v, depth + 1, active) for k, v in items)
    finally:
        active.discard(id(value))


def strict_equal(actual: Any, expected: Any, tol: float = 1e-6) -> bool:
    """Compare a returned value with the expected one using exact builtin types only.

    bool is not int; int and float compare numerically; floats and complex numbers use math.isclose with
    rel_tol=abs_tol=tol; NaN never equals anything; a tuple is accepted where a list is expected (JSON has no
    tuples) but not the reverse. Dict keys and set elements compare exactly (hashing cannot honour a tolerance).
    Cycles, nesting deeper than MAX_DEPTH and any non-builtin type make the result False.
    """
    _check_tol(tol)
    try:
        return _equal(actual, expected, tol, 0, set())
    except RecursionError:
        return False


def _equal(a: Any, e: Any, tol: float, depth: int, active: set[int]) -> bool:
    ta, te = type(a), type(e)
    if ta not in _ALLOWED or te not in _ALLOWED or depth > MAX_DEPTH:
        return False
    if ta in (int, float) and te in (int, float):
        return _numbers_equal(a, e, tol)
    if ta is tuple and te is list:
        ta = list
    if ta is not te:
        return False
    if ta is complex:
        return cmath.isclose(a, e, rel_tol=tol, abs_tol=tol)
    if ta in _SCALARS:
        return a == e
    return _containers_equal(a, e, tol, depth, active)


def _numbers_equal(a: int | float, e: int | float, tol: float) -> bool:
    if type(a) is int and type(e) is int:
        return a == e  # exact, whatever the size
    try:
        return math.isclose(a, e, rel_tol=tol, abs_tol=tol)
    except OverflowError:  # an int too large for a float cannot be close to a finite float
        return False


def _containers_equal(a: Any, e: Any, tol: float, depth: int, active: set[int]) -> bool:
    # Ids on the current path: meeting one again means a cycle, which we refuse rather than loop on.
    if id(a) in active or id(e) in active:
        return False
    active.update((id(a), id(e)))
    try:
        if type(a) is dict:
            return _dicts_equal(a, e, tol, depth, active)
        if type(a) in (set, frozenset):
            canon_a = _canon_set(a, depth)
            return canon_a is not None and canon_a == _canon_set(e, depth)
        return len(a) == len(e) and all(_equal(x, y, tol, depth + 1, active) for x, y in zip(a, e, strict=True))
    finally:
        active.discard(id(a))
        active.discard(id(e))


def _dicts_equal(a: dict, e: dict, tol: float, depth: int, active: set[int]) -> bool:
    try:
        keyed_a = {_canon(k, depth + 1): v for k, v in a.items()}
        keyed_e = {_canon(k, depth + 1): v for k, v in e.items()}
    except _Unmatchable:
        return False
    if keyed_a.keys() != keyed_e.keys():
        return False
    return all(_equal(keyed_a[k], keyed_e[k], tol, depth + 1, active) for k in keyed_e)


def _canon_set(items: set | frozenset, depth: int) -> frozenset | None:
    try:
        return frozenset(_canon(x, depth + 1) for x in items)
    except _Unmatchable:
        return None


def _canon(x: Any, depth: int) -> tuple:
    """A type-tagged hashable stand-in for a key, so that 1 and True (equal in Python) stay different."""
    kind = type(x)
    if depth > MAX_DEPTH or kind not in _ALLOWED:
        raise _Unmatchable
    if kind in (int, float):
        if x != x:  # NaN
            raise _Unmatchable
        return ("num", x)
    if kind is complex and cmath.isnan(x):
        raise _Unmatchable
    if kind is tuple:
        return ("tuple", tuple(_canon(y, depth + 1) for y in x))
    if kind is frozenset:
        return ("frozenset", frozenset(_canon(y, depth + 1) for y in x))
    if kind in _SCALARS:
        return (kind.__name__, x)
    raise _Unmatchable  # unhashable containers cannot be keys anyway
