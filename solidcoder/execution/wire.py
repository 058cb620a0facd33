"""The plain-data wire format between a candidate's process and the judge's: values, never code or objects.

Only exact builtin types cross: None, bool, int, float, complex, str, bytes, list, tuple, dict, set and frozenset
of those (no subclasses), nested at most MAX_DEPTH deep, at most MAX_MESSAGE bytes encoded. `Handle(n)` names an
object that stays in the candidate's process (an instance of one of its classes). The *decoder* defines what a
value is: the candidate encodes with code it can tamper with, so the judge decodes every reply as hostile bytes
and gets either a plain value or `WireError`, never anything else. Frames are a 4-byte length and the value.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Any

MAX_DEPTH = 100
MAX_MESSAGE = 64 << 20
_LEN = struct.Struct("<I")
_DOUBLE = struct.Struct("<d")
_COMPLEX = struct.Struct("<dd")
_SEQUENCES = {list: b"l", tuple: b"t", set: b"S", frozenset: b"z"}
_BUILDERS = {ord("l"): list, ord("t"): tuple, ord("S"): set, ord("z"): frozenset}


class WireError(ValueError):
    """Bytes that are not a well-formed plain value, or a value that cannot be sent."""


class Handle:
    """A reference to an object living in the candidate's process, by number."""

    __slots__ = ("id",)

    def __init__(self, ident: int) -> None:
        self.id = ident

    def __repr__(self) -> str:
        return f"Handle({self.id})"


def encode(value: Any) -> bytes:
    """The bytes of a plain value; WireError names the first thing that is not plain."""
    out: list[bytes] = []
    _put(value, out, 0)
    data = b"".join(out)
    if len(data) > MAX_MESSAGE:
        raise WireError(f"value too large to send ({len(data)} bytes)")
    return data


def _put(value: Any, out: list[bytes], depth: int) -> None:
    kind = type(value)
    if depth > MAX_DEPTH:
        raise WireError(f"nested deeper than {MAX_DEPTH} (or cyclic)")
    if value is None or kind is bool:
        out.append(b"N" if value is None else (b"T" if value else b"F"))
    elif kind is int:
        raw = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
        out += (b"i", _LEN.pack(len(raw)), raw)
    elif kind is float:
        out += (b"f", _DOUBLE.pack(value))
    elif kind is complex:
        out += (b"c", _COMPLEX.pack(value.real, value.imag))
    elif kind is str or kind is bytes:
        raw = value.encode("utf-8", "surrogatepass") if kind is str else value
        out += (b"s" if kind is str else b"b", _LEN.pack(len(raw)), raw)
    elif kind is Handle:
        out += (b"h", _LEN.pack(value.id))
    else:
        _put_container(value, kind, out, depth)


def _put_container(value: Any, kind: type, out: list[bytes], depth: int) -> None:
    if kind is dict:
        out += (b"d", _LEN.pack(len(value)))
        for key, item in value.items():
            _put(key, out, depth + 1)
            _put(item, out, depth + 1)
        return
    tag = _SEQUENCES.get(kind)
    if tag is None:
        raise WireError(f"a {kind.__name__} is not a plain builtin value")
    out += (tag, _LEN.pack(len(value)))
    for item in value:
        _put(item, out, depth + 1)


def decode(data: bytes) -> Any:
    """The value `data` encodes; WireError for anything malformed, truncated, too deep or with trailing bytes."""
    reader = _Reader(memoryview(data))
    try:
        value = reader.value(0)
    except (struct.error, UnicodeDecodeError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        raise WireError(f"malformed value: {type(exc).__name__}") from None
    if reader.pos != len(data):
        raise WireError("trailing bytes after the value")
    return value


class _Reader:
    """A cursor over untrusted bytes; every length is checked against what is left."""

    def __init__(self, data: memoryview) -> None:
        self.data, self.pos = data, 0

    def take(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.data):
            raise WireError("truncated value")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def length(self) -> int:
        return _LEN.unpack(self.take(4))[0]

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise WireError(f"nested deeper than {MAX_DEPTH}")
        tag = self.take(1)[0]
        simple = _SIMPLE.get(tag)
        if simple is not None:
            return simple(self)
        if tag == ord("d"):
            return self.mapping(depth)
        if tag in _BUILDERS:
            count = self.length()
            if count > len(self.data) - self.pos:  # every item takes at least one byte
                raise WireError("truncated container")
            return _BUILDERS[tag](self.value(depth + 1) for _ in range(count))
        raise WireError(f"unknown tag {tag!r}")

    def mapping(self, depth: int) -> dict:
        count = self.length()
        if 2 * count > len(self.data) - self.pos:
            raise WireError("truncated dict")
        out = {}
        for _ in range(count):
            key = self.value(depth + 1)
            out[key] = self.value(depth + 1)
        return out


_SIMPLE = {
    ord("N"): lambda r: None,
    ord("T"): lambda r: True,
    ord("F"): lambda r: False,
    ord("i"): lambda r: int.from_bytes(r.take(r.length()), "little", signed=True),
    ord("f"): lambda r: _DOUBLE.unpack(r.take(8))[0],
    ord("c"): lambda r: complex(*_COMPLEX.unpack(r.take(16))),
    ord("s"): lambda r: str(r.take(r.length()), "utf-8", "surrogatepass"),
    ord("b"): lambda r: bytes(r.take(r.length())),
    ord("h"): lambda r: Handle(r.length()),
}


def write_frame(fd: int, payload: bytes, _write=os.write) -> None:
    data = memoryview(_LEN.pack(len(payload)) + payload)
    while data:
        data = data[_write(fd, data) :]


def read_frame(fd: int, deadline: float | None = None) -> bytes:
    """One frame from `fd`; TimeoutError past `deadline` (time.monotonic), EOFError when the writer is gone."""
    size = _LEN.unpack(_read_exact(fd, 4, deadline))[0]
    if size > MAX_MESSAGE:
        raise WireError(f"frame of {size} bytes is over the limit")
    return _read_exact(fd, size, deadline)


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, remaining = [], size
    while remaining:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
