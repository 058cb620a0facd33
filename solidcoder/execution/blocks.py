"""The block tracer: a program's executed basic blocks on one input, with the variables before and after each, as
LDB shows them to its debugger (FloridSleeves/LLMDebugger@49ac191, `programming/tracing/tracer.py`).

The program runs once in the sandbox (`mode: blocks`, `basic_blocks.py` in the child); the record arrives on the
report descriptor, never on stdout, and is read here as hostile data (a record of the wrong shape yields no
blocks). As LDB does: each block shows `# name=value` pairs joined by tabs before and after its source lines, a
value text of 100 characters or more shortened to its first 50 and last 50 around `...`, and of more than 10
executed blocks the first 5 and the last 5 are shown (`selected`).

Departures from LDB: every function of the program is traced in its own frames (LDB instruments only the entry
function, so a helper's lines show inside the caller's block); a stdin program's module frame is traced too (LDB
has only call problems); the values before a block are its own frame's (LDB's are the last values printed); a
block's lines are those of the program as sent, without LDB's import header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import Limits

MAX_BLOCKS = 10  # LDB's max_num_blocks at block level
SHORT = 100  # a values line this long or longer is shortened to its ends
END = 50


def shorten(values: str) -> str:
    """LDB: `values if len(values) < 100 else (values[:50] + "..." + values[-50:])`."""
    return values if len(values) < SHORT else values[:END] + "..." + values[-END:]


@dataclass(frozen=True)
class TracedBlock:
    """One executed block: its function, the lines run in order, the variables before and after (name, text)."""

    index: int  # position among all executed blocks, from 0
    function: str
    lines: tuple[int, ...]
    before: tuple[tuple[str, str], ...]
    after: tuple[tuple[str, str], ...]

    @staticmethod
    def values(pairs: tuple[tuple[str, str], ...]) -> str:
        return shorten("\t".join(f"{name}={text}" for name, text in pairs))

    def render(self, code: str) -> str:
        """LDB's text of a block: `# values before`, the source lines, `# values after`, the comments indented to
        the first and last line (4 spaces a level)."""
        source = code.split("\n")
        text = [source[line - 1] if 0 < line <= len(source) else "" for line in self.lines]
        return "\n".join([_indent(text[0]) + "# " + self.values(self.before), *text,
                          _indent(text[-1]) + "# " + self.values(self.after)])


def _indent(line: str) -> str:
    return "    " * ((len(line) - len(line.lstrip())) // 4)


@dataclass
class BlockTrace:
    """The blocks a run executed (the first and last ones the child kept), how many ran, and the error or the
    sandbox status that ended the run."""

    blocks: list[TracedBlock] = field(default_factory=list)
    count: int = 0
    error: str | None = None
    status: str = "ok"

    @property
    def selected(self) -> list[TracedBlock]:
        """LDB's choice: every block when at most 10 ran, else the first 5 and the last 5."""
        if len(self.blocks) <= MAX_BLOCKS:  # the child keeps the run's first and last blocks
            return list(self.blocks)
        half = MAX_BLOCKS // 2
        return self.blocks[:half] + self.blocks[-half:]

    def prompt_text(self, code: str) -> str:
        """The selected blocks as LDB lists them: `[BLOCK-i]` and the block's text, numbered from 0."""
        return "".join(f"\n[BLOCK-{i}]\n" + block.render(code) for i, block in enumerate(self.selected))


def trace_blocks(pool: Executor, code: str, stdin: str = "", call: str | None = None,
                 limits: Limits | None = None, header: str = "") -> BlockTrace:
    """Run `code` once (after the problem's `header`, unrecorded; feeding `stdin`, then evaluating `call` if given)
    and record its executed blocks."""
    result = pool.run({"mode": "blocks", "code": code, "call": call, "header": header}, stdin, limits)
    record = next((r for r in reversed(result.records) if r.get("event") == "blocks"), None)
    if record is None:
        detail = result.detail or (result.stderr.strip().splitlines() or [""])[-1]
        return BlockTrace(error=f"{result.status}: {detail}".rstrip(": "), status=result.status)
    count = record.get("count") if type(record.get("count")) is int else 0
    head, tail = _list(record.get("head")), _list(record.get("tail"))
    numbered = [*enumerate(head), *((count - len(tail) + i, raw) for i, raw in enumerate(tail))]
    blocks = [b for b in (_block(raw, index) for index, raw in numbered) if b is not None]
    error = record.get("error") if isinstance(record.get("error"), str) else None
    return BlockTrace(blocks=blocks, count=count, error=error and error[:500], status=result.status)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _block(raw: Any, index: int) -> TracedBlock | None:
    """A block of the child's record, `index` its place in the whole run (the tail's blocks are the run's last)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), str):
        return None
    lines = [line for line in _list(raw.get("lines")) if type(line) is int]
    if not lines:
        return None
    return TracedBlock(index, raw["function"][:200], tuple(lines), _pairs(raw.get("before")), _pairs(raw.get("after")))


def _pairs(raw: Any) -> tuple[tuple[str, str], ...]:
    return tuple((p[0][:200], p[1][:1000]) for p in _list(raw)
                 if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p))
