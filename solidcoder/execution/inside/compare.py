"""Pure comparison functions for the judge: stdout matching and strict equality of returned values.

Nothing here runs candidate code.

Stdout is compared as a sequence of tokens (`mode="tokens"`, the default): whitespace of any kind, newlines
included, only separates tokens, as in the Codeforces default checker, so "1 2" matches "1\n2". `mode="lines"`
also requires the same line layout: line by line, then token by token within a line (trailing whitespace and
trailing blank lines are ignored, leading blank lines count). Whitespace is ASCII space, tab, CR, LF, VT and FF.
Token by token:

- an integer token expected ("42", "-7") needs the very same token: "42.0", "4.2e1", "042", "+42" all fail, as
  do "1e9" for "999999937" and "-0" for "0" (a float tolerance never applies to an integer, and Codeforces'
  checkers read integers as exact strings; zero-padded answers such as "007" must keep their padding);
- a non-integer number expected ("0.5", "2.0", "1e-3") accepts any decimal number, integers included, within the
  tolerance, absolute or relative: |a - e| <= tol or |a - e| <= tol * max(|a|, |e|). "nan", "inf", "1_000" and
  overflowing literals are words, not numbers;
- anything else is a word and must be identical.

Returned values are compared with *exact* builtin types only, so a candidate cannot pass by returning an object
whose `__eq__` always answers True (or an int subclass that lies about its value). An expected int needs an int
of exactly the same value; an expected float accepts a float or an int within the tolerance; bool is never a
number.

JSON has no tuples, sets or non-string dict keys, so expected values decoded from JSON lose some distinctions.
`strict_equal` therefore accepts a tuple where a list is expected. It does not bridge dict keys: an expected
`{"1": ...}` from JSON does not match an actual `{1: ...}`.
"""

from __future__ import annotations

import cmath
import itertools
import math
import re
from typing import Any

from solidcoder.matching import DEFAULT_TOLERANCE, MODES

# Deep enough for any sensible expected value, shallow enough to stay far from Python's recursion limit.
MAX_DEPTH = 100

_INT_RE = re.compile(r"[+-]?[0-9]+")
# Only plain decimal notation: float() would also accept "nan", "inf", "1_000" and "0x1p3"-like oddities.
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPACE = " \t\n\r\f\v"
_TOKEN_RE = re.compile(r"[^ \t\n\r\f\v]+")
_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_ALLOWED = _SCALARS | _CONTAINERS


class _Unmatchable(Exception):
    """A set element or dict key that cannot be compared (not plain, NaN, or too deep)."""


def _check_tol(tol: float) -> None:
    if not tol >= 0:  # also rejects NaN
        raise ValueError(f"tolerance must be >= 0, got {tol!r}")


# ---------------------------------------------------------------- stdout


def _tokens_match(actual: str, expected: str, tol: float) -> bool:
    if actual == expected:
        return True
    # An integer expected token is compared as a string: exact for any size, and never within a tolerance.
    if _INT_RE.fullmatch(expected) or not (_NUM_RE.fullmatch(actual) and _NUM_RE.fullmatch(expected)):
        return False
    a, b = float(actual), float(expected)
    if not (math.isfinite(a) and math.isfinite(b)):  # overflowed literals like 1e999 prove nothing
        return False
    diff = abs(a - b)
    return diff <= tol or diff <= tol * max(abs(a), abs(b))


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _line_of_token(text: str, number: int) -> int:
    """The line (from 1) on which the `number`-th token (from 1) of `text` starts."""
    match = next(itertools.islice(_TOKEN_RE.finditer(text), number - 1, None))
    return text.count("\n", 0, match.start()) + 1


def _token_difference(actual: str, expected: str, tol: float) -> str | None:
    got, want = _TOKEN_RE.findall(actual), _TOKEN_RE.findall(expected)
    if got == want:
        return None
    for i, (g, w) in enumerate(zip(got, want, strict=False), 1):
        if not _tokens_match(g, w, tol):
            return f"token {i} (line {_line_of_token(actual, i)}): expected {_short(w)}, got {_short(g)}"
    counts, n = f"expected {len(want)} tokens, got {len(got)}", len(got)
    if n < len(want):
        return f"{counts}: token {n + 1} missing, expected {_short(want[n])}"
    if n > len(want):
        extra = len(want) + 1
        return f"{counts}: unexpected token {extra} (line {_line_of_token(actual, extra)}): {_short(got[extra - 1])}"
    return None


def _lines(text: str) -> list[str]:
    # Split on "\n" only; a trailing "\r" from Windows line ends is removed by rstrip like other trailing space.
    lines = [line.rstrip(_SPACE) for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _line_difference(lineno: int, got: str, want: str, tol: float) -> str | None:
    got_tokens, want_tokens = _TOKEN_RE.findall(got), _TOKEN_RE.findall(want)
    for i, (g, w) in enumerate(zip(got_tokens, want_tokens, strict=False), 1):
        if not _tokens_match(g, w, tol):
            return f"line {lineno}, token {i}: expected {_short(w)}, got {_short(g)}"
    if len(got_tokens) != len(want_tokens):
        return (
            f"line {lineno}: expected {len(want_tokens)} tokens, got {len(got_tokens)} "
            f"(expected {_short(want)}, got {_short(got)})"
        )
    return None


def _lines_difference(actual: str, expected: str, tol: float) -> str | None:
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


def first_difference(actual: str, expected: str, tol: float = DEFAULT_TOLERANCE, mode: str = "tokens") -> str | None:
    """Describe the first mismatch between outputs in one short line (for debugger feedback); None if they match.

    `mode` is "tokens" (whitespace, newlines included, only separates tokens) or "lines" (same line layout too).
    """
    _check_tol(tol)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    return (_token_difference if mode == "tokens" else _lines_difference)(actual, expected, tol)


def stdout_matches(actual: str, expected: str, tol: float = DEFAULT_TOLERANCE, mode: str = "tokens") -> bool:
    """True when the outputs agree token by token (and, with mode="lines", line by line); see the module docstring.

    Integer tokens must be identical; other numbers match within `tol`, absolute or relative.
    """
    return first_difference(actual, expected, tol, mode) is None


def matches_any(actual: str, accepted: list[str], tol: float = DEFAULT_TOLERANCE, mode: str = "tokens") -> bool:
    """True when `actual` matches at least one accepted output (False for an empty list)."""
    return any(stdout_matches(actual, option, tol, mode) for option in accepted)


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


def strict_equal(actual: Any, expected: Any, tol: float = DEFAULT_TOLERANCE) -> bool:
    """Compare a returned value with the expected one using exact builtin types only.

    bool is not int; an expected int needs an int of exactly the same value (whatever the size); an expected float
    accepts a float or an int, and floats and complex numbers use math.isclose with rel_tol=abs_tol=tol; NaN never
    equals anything; a tuple is accepted where a list is expected (JSON has no tuples) but not the reverse. Dict
    keys and set elements compare exactly, type included (hashing cannot honour a tolerance or the int/float rule).
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
    if type(e) is int:
        return type(a) is int and a == e  # exact, whatever the size: 1e9 is not 999999937
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
    """A type-tagged hashable stand-in for a key, so that 1, 1.0 and True (equal in Python) stay different."""
    kind = type(x)
    if depth > MAX_DEPTH or kind not in _ALLOWED:
        raise _Unmatchable
    if kind is float and x != x:  # NaN
        raise _Unmatchable
    if kind is complex and cmath.isnan(x):
        raise _Unmatchable
    if kind is tuple:
        return ("tuple", tuple(_canon(y, depth + 1) for y in x))
    if kind is frozenset:
        return ("frozenset", frozenset(_canon(y, depth + 1) for y in x))
    if kind in _SCALARS:
        return (kind.__name__, x)
    raise _Unmatchable  # unhashable containers cannot be keys anyway
