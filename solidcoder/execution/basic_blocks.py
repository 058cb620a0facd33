"""Basic blocks of a Python program and the recorder of executed blocks; standard library only.

The harness (`mode: blocks`) imports this module before confinement and runs the recorder inside the sandboxed
child; the parent reads its record in `blocks.py`. The split follows staticfg's CFG builder as LDB
(FloridSleeves/LLMDebugger@49ac191, `programming/tracing/staticfg/builder.py`) uses it: straight-line statements
share a block; an `if` (and here `with`, `try`, `match`) ends its block and each body starts a new one; a loop's
header is a block of its own (its guard); `return`, `raise`, `break` and `continue` end a block; the code after a
compound statement starts a new block. Departure: an `ast` splitter instead of the staticfg dependency, and
`with`/`try`/`match` treated like `if` (staticfg has no rule for them).

The recorder cuts a frame's executed lines into blocks: a line that enters another block, or the first line of
its own block again (a loop), ends the block before it, and the frame's variables at that moment are the values
after the block (at a return, with `_ret`, the returned value, as LDB's instrumentation names it).
"""

from __future__ import annotations

import ast
import types
from collections import deque
from typing import Any

from solidcoder.parsing import parse_python

KEEP = 50  # executed blocks kept from the start and from the end of a run (the parent shows 5 of each)
VALUE_CHARS = 100  # a longer value text keeps this many characters at each end (enough for LDB's 50 + 50)
_COMPOUND = (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Splitter:
    """staticfg's block rules over one statement list; nested definitions' bodies become blocks of their own."""

    def __init__(self, blocks: list[list[ast.stmt]]):
        self.blocks = blocks
        self.current: list[ast.stmt] = []

    def new(self) -> None:
        if self.current:
            self.blocks.append(self.current)
        self.current = []

    def body(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, _LOOPS):
            self.new()
        self.current.append(node)
        if isinstance(node, _DEFS):
            split_into(node.body, self.blocks)
        elif isinstance(node, _LOOPS + _COMPOUND):
            for part in _parts(node):
                self.new()
                self.body(part)
            self.new()
        elif isinstance(node, _JUMPS):
            self.new()


def _parts(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds, in source order."""
    if isinstance(node, ast.Match):
        return [case.body for case in node.cases]
    handlers = [handler.body for handler in getattr(node, "handlers", [])]
    return [node.body, *handlers, getattr(node, "orelse", []), getattr(node, "finalbody", [])]


def split_into(statements: list[ast.stmt], blocks: list[list[ast.stmt]]) -> None:
    splitter = _Splitter(blocks)
    splitter.body(statements)
    splitter.new()


def split_blocks(source: str) -> list[list[ast.stmt]]:
    """The program's basic blocks, each a list of statements, ordered by their first line."""
    blocks: list[list[ast.stmt]] = []
    split_into(parse_python(source).body, blocks)
    return sorted(blocks, key=lambda block: block[0].lineno)


def header_lines(node: ast.stmt) -> range:
    """The lines a statement owns in its block: all of a simple statement, a compound statement's header."""
    inner = [part[0].lineno for part in _parts(node) if part] if isinstance(node, _LOOPS + _COMPOUND) else []
    if isinstance(node, _DEFS):
        inner = [node.body[0].lineno]
    last = min(inner) - 1 if inner else (node.end_lineno or node.lineno)
    return range(node.lineno, max(last, node.lineno) + 1)


def line_map(source: str) -> tuple[dict[int, int], set[int]]:
    """(line -> index of its block in `split_blocks`, the first line of each block)."""
    blocks = split_blocks(source)
    owner = {line: index for index, block in enumerate(blocks) for node in block for line in header_lines(node)}
    return owner, {block[0].lineno for block in blocks}


def value_text(value: Any) -> str:
    """str(value) as LDB prints it, its middle cut when long (the ends LDB shows stay exact)."""
    try:
        text = str(value)
    except BaseException:  # noqa: BLE001 - a program's own __str__ may raise
        text = "<unprintable>"
    return text if len(text) <= 2 * VALUE_CHARS else text[:VALUE_CHARS] + "…" + text[-VALUE_CHARS:]


def snapshot(variables: dict[str, Any]) -> list[list[str]]:
    """[name, text] of each variable LDB's `vars()` shows (no dunder names; here no modules, functions, classes)."""
    return [[name, value_text(value)] for name, value in list(variables.items())
            if not name.startswith("__") and not isinstance(value, (types.ModuleType, types.FunctionType, type))]


class BlockRecorder:
    """A settrace hook that records each executed block of the program's frames (file `solution.py`); frames of the
    module are skipped when `skip_module` (a call problem: the trace starts at the call, as LDB's does)."""

    def __init__(self, source: str, skip_module: bool):
        self.owner, self.leaders = line_map(source)
        self.skip_module = skip_module
        self.frames: dict[int, tuple[list[int], list[list[str]]]] = {}
        self.head: list[dict] = []
        self.tail: deque[dict] = deque(maxlen=KEEP)
        self.count = 0

    def global_trace(self, frame, _event, _arg):
        code = frame.f_code
        if code.co_filename != "solution.py" or (self.skip_module and code.co_name == "<module>"):
            return None
        self.frames[id(frame)] = ([], snapshot(frame.f_locals))
        return self.local_trace

    def local_trace(self, frame, event, arg):
        lines, _ = state = self.frames.get(id(frame), ([], []))
        if event == "line":
            if lines and self._cuts(lines[-1], frame.f_lineno):
                state = self._emit(frame, state, snapshot(frame.f_locals))
                lines = state[0]
            if not lines or lines[-1] != frame.f_lineno:
                lines.append(frame.f_lineno)
            self.frames[id(frame)] = state
        elif event == "return":
            returned = {} if frame.f_code.co_name == "<module>" else {"_ret": arg}
            self._emit(frame, state, snapshot({**frame.f_locals, **returned}))
            self.frames.pop(id(frame), None)
        return self.local_trace

    def _cuts(self, previous: int, line: int) -> bool:
        block = self.owner.get(line)
        return block is not None and (block != self.owner.get(previous) or line in self.leaders)

    def _emit(self, frame, state: tuple[list[int], list[list[str]]], after: list[list[str]]) -> tuple:
        lines, before = state
        if lines:
            record = {"function": getattr(frame.f_code, "co_qualname", frame.f_code.co_name), "lines": lines,
                      "before": before, "after": after}
            (self.head if len(self.head) < KEEP else self.tail).append(record)
            self.count += 1
        return [], after

    def record(self) -> dict:
        """What the child reports: the first and last blocks kept, and how many ran."""
        return {"head": self.head, "tail": list(self.tail), "count": self.count}
