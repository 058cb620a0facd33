"""The standard library's value types that cross the wire as their parts (`wire.py`'s {"o": [name, parts]}): each
with its parts as plain values, and rebuilt from them by the type's own constructor on the other side, which checks
the parts' types (a malformed one is a ValueError, which the decoder reports as WireError)."""

from __future__ import annotations

import array
import collections
import datetime
import decimal
import fractions
from collections.abc import Callable
from typing import Any


def _parts(*names: str) -> Callable[[Any], list]:
    return lambda value: [getattr(value, name) for name in names]


def sendable(value: Any) -> bool:
    """Whether `value` is one of STDLIB's types, as its parts can carry it (a datetime or time with a timezone is
    not: it stays a handle)."""
    return type(value) in STDLIB_TYPES and getattr(value, "tzinfo", None) is None


_FACTORIES = {kind.__name__: kind for kind in (int, float, complex, str, bytes, list, tuple, dict, set, frozenset,
                                                bool)}
# name: (type, its plain parts, the type rebuilt from parts by its own constructor). Sent as {"o": [name, parts]};
# the receiver checks the parts' types through the constructor (anything else is a malformed value).
STDLIB: dict[str, tuple[type, Callable[[Any], Any], Callable[[Any], Any]]] = {
    "Fraction": (fractions.Fraction, _parts("numerator", "denominator"),
                 lambda p: fractions.Fraction(*_ints(p, 2))),
    "Decimal": (decimal.Decimal, str, lambda p: decimal.Decimal(_text(p))),
    "date": (datetime.date, _parts("year", "month", "day"), lambda p: datetime.date(*_ints(p, 3))),
    "datetime": (datetime.datetime, _parts("year", "month", "day", "hour", "minute", "second", "microsecond", "fold"),
                 lambda p: datetime.datetime(*_ints(p, 7, 1))),
    "time": (datetime.time, _parts("hour", "minute", "second", "microsecond", "fold"),
             lambda p: datetime.time(*_ints(p, 4, 1))),
    "timedelta": (datetime.timedelta, _parts("days", "seconds", "microseconds"),
                  lambda p: datetime.timedelta(*_ints(p, 3))),
    "bytearray": (bytearray, bytes, lambda p: bytearray(_typed(p, bytes))),
    "deque": (collections.deque, lambda v: [list(v), v.maxlen],
              lambda p: collections.deque(_typed(p[0], list), _typed(p[1], int, type(None))) if _pair(p) else _bad()),
    "array": (array.array, lambda v: [v.typecode, v.tolist()],
              lambda p: array.array(_text(p[0]), _typed(p[1], list)) if _pair(p) and p[0] in _TYPECODES else _bad()),
    "Counter": (collections.Counter, dict, lambda p: collections.Counter(_typed(p, dict))),
    "OrderedDict": (collections.OrderedDict, dict, lambda p: collections.OrderedDict(_typed(p, dict))),
    "defaultdict": (collections.defaultdict, lambda v: [getattr(v.default_factory, "__name__", None)
                                                       if v.default_factory in _FACTORIES.values() else None, dict(v)],
                    lambda p: collections.defaultdict(_FACTORIES.get(p[0]), _typed(p[1], dict)) if _pair(p)
                    else _bad()),
    "UserList": (collections.UserList, lambda v: list(v.data), lambda p: collections.UserList(_typed(p, list))),
    "UserDict": (collections.UserDict, lambda v: dict(v.data), lambda p: collections.UserDict(_typed(p, dict))),
    "UserString": (collections.UserString, lambda v: str(v.data), lambda p: collections.UserString(_text(p))),
}
STDLIB_TYPES = {kind: name for name, (kind, _, _) in STDLIB.items()}
_TYPECODES = frozenset("bBuhHiIlLqQfd")


def _bad() -> Any:
    raise ValueError("a malformed stdlib value")  # the decoder's WireError


def _typed(value: Any, *kinds: type) -> Any:
    return value if type(value) in kinds else _bad()


def _text(value: Any) -> str:
    return value if type(value) is str and len(value) <= 10_000 else _bad()


def _pair(value: Any) -> bool:
    return type(value) is list and len(value) == 2


def _ints(value: Any, count: int, extra: int = 0) -> list[int]:
    """The first `count` of `value`'s `count + extra` ints (the extra one: the datetime types' `fold`, not kept)."""
    if type(value) is not list or len(value) != count + extra or not all(type(x) is int for x in value):
        _bad()
    return value[:count]


def rebuilt(name: str, parts: Any) -> Any:
    return STDLIB[name][2](parts)
