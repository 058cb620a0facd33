"""The block tracer: LDB's blocks of a program's run on one input, with the variables before and after each, as LDB
shows them to its debugger (FloridSleeves/LLMDebugger@49ac191, `programming/tracing/tracer.py`,
`get_code_traces_block`, and `PyGenerator.ldb_debug`).

One sandboxed child (`mode: blocks`) makes LDB's two runs, the program as written under a trace and LDB's
instrumented program under its probes, and cuts them into blocks by LDB's rules (`basic_blocks.py`, which lists
them and where they depart from LDB's). The record arrives on the report descriptor, never on stdout, and is read
here as hostile data (a record of the wrong shape yields no blocks); nothing in it decides a verdict: it is
debugging feedback only. As LDB does: each block shows `# values` before and after its lines, the values
`name=value` pairs joined by tabs, a values text of 100 characters or more shortened to its first 50 and last 50
around `...`; the last block, when the trace outlasts the probes, has no values after it; LDB's test line (the
call, after the program's last line) shows the call and a space; of more than 10 blocks the first 5 and the last 5
are shown (`selected`). LDB shows no blocks (`shown` is False; it gives its one-line feedback) when its tracer
fails on the program, when a run times out, or when the probed run raises anything but an AssertionError; an
unprobed run (LDB's instrumented program does not compile) shows its one block whatever ended it.

Departures from LDB: the traced function is the one the call calls, or the strategy's entry point (LDB's, the
dataset's); a block's lines are those of the program as sent: the problem's header runs first, untraced (LDB
puts its import header, and the prompt's helper functions a program lacks, into the program it traces); a block of
more than 200 lines shows its first and last 100 around a `...` line (LDB shows them all).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import ExecResult, Limits

MAX_BLOCKS = 10  # LDB's max_num_blocks at block level
SHORT = 100  # a values line this long or longer is shortened to its ends
END = 50


def shorten(values: str) -> str:
    """LDB: `values if len(values) < 100 else (values[:50] + "..." + values[-50:])`."""
    return values if len(values) < SHORT else values[:END] + "..." + values[-END:]


@dataclass(frozen=True)
class TracedBlock:
    """One executed block: its function, the lines run in order, the variables before and after (name, text)."""

    index: int  # position among all blocks, from 0
    function: str  # the function of the probe that ended the block ("" for a last block without one)
    lines: tuple[int, ...]  # 0 stands for lines left out
    before: tuple[tuple[str, str], ...]
    after: tuple[tuple[str, str], ...] | None  # None: the last block, the trace outlasting the probes

    @staticmethod
    def values(pairs: tuple[tuple[str, str], ...]) -> str:
        return shorten("\t".join(f"{name}={text}" for name, text in pairs))

    def render(self, code: str) -> str:
        """LDB's text of a block: `# values before`, the source lines, `# values after` (when there are), the
        comments indented to the first and last line (4 spaces a level)."""
        source = code.split("\n")
        text = [source[line - 1] if 0 < line <= len(source) else "..." if line == 0 else "" for line in self.lines]
        after = [] if self.after is None else [_indent(text[-1]) + "# " + self.values(self.after)]
        return "\n".join([_indent(text[0]) + "# " + self.values(self.before), *text, *after])


def _indent(line: str) -> str:
    return "    " * ((len(line) - len(line.lstrip())) // 4)


@dataclass
class BlockTrace:
    """The blocks of a run (the first and last ones the child kept), how many were cut, the error or the sandbox
    status that ended the probed run, why LDB's tracer gives no blocks (`tracer`), and why the run had no probes."""

    blocks: list[TracedBlock] = field(default_factory=list)
    count: int = 0
    error: str | None = None
    status: str = "ok"
    unprobed: str | None = None  # why the run had no probes (LDB's instrumented program does not compile)
    tracer: str | None = None  # why LDB's tracer gives no blocks (staticfg fails, no function, too long a trace)
    test: str = ""  # LDB's test line after the program's last line: the call and a space (`assert CALL == ...` cut)

    @property
    def shown(self) -> bool:
        """Whether LDB would show these blocks: some were cut, its tracer did not fail, and the probed run failed in
        no way but an AssertionError (an unprobed run's trace is shown whatever ended it)."""
        passed = self.error is None or self.error.startswith("AssertionError") or self.unprobed is not None
        return bool(self.blocks) and self.tracer is None and passed

    @property
    def selected(self) -> list[TracedBlock]:
        """LDB's choice: every block when at most 10 ran, else the first 5 and the last 5."""
        if len(self.blocks) <= MAX_BLOCKS:  # the child keeps the run's first and last blocks
            return list(self.blocks)
        half = MAX_BLOCKS // 2
        return self.blocks[:half] + self.blocks[-half:]

    def prompt_text(self, code: str) -> str:
        """The selected blocks as LDB lists them: `[BLOCK-i]` and the block's text, numbered from 0."""
        source = code + "\n" + self.test
        return "".join(f"\n[BLOCK-{i}]\n" + block.render(source) for i, block in enumerate(self.selected))


async def atrace_blocks(pool: Executor, code: str, stdin: str = "", call: str | None = None,
                        limits: Limits | None = None, header: str = "", entry: str | None = None) -> BlockTrace:
    """Run `code` once as LDB instruments it (after the problem's `header`, unrecorded; feeding `stdin`, then
    evaluating `call` if given) and cut the run into LDB's blocks; `entry`, the traced function, defaults to the
    one `call` calls. The run is awaited on the executor (`Executor.arun`)."""
    job = {"mode": "blocks", "code": code, "call": call, "header": header, "entry": entry}
    return read_blocks(await pool.arun(job, stdin, limits), call)


def read_blocks(result: ExecResult, call: str | None) -> BlockTrace:
    """The blocks a run reported (read as hostile data), or what ended the run when it reported none."""
    record = next((r for r in reversed(result.records) if r.get("event") == "blocks"), None)
    if record is None:
        detail = result.detail or (result.stderr.strip().splitlines() or [""])[-1]
        return BlockTrace(error=f"{result.status}: {detail}".rstrip(": "), status=result.status)
    count = record.get("count") if type(record.get("count")) is int else 0
    head, tail = _list(record.get("head")), _list(record.get("tail"))
    numbered = [*enumerate(head), *((count - len(tail) + i, raw) for i, raw in enumerate(tail))]
    blocks = [b for b in (_block(raw, index) for index, raw in numbered) if b is not None]
    error, unprobed, tracer = (_text(record.get(key)) for key in ("error", "unprobed", "tracer"))
    return BlockTrace(blocks, count, error, result.status, unprobed, tracer, f"{call} " if call else "")


def _text(value: Any) -> str | None:
    return value[:500] if isinstance(value, str) else None


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _block(raw: Any, index: int) -> TracedBlock | None:
    """A block of the child's record, `index` its place in the whole run (the tail's blocks are the run's last)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), str):
        return None
    lines = [line for line in _list(raw.get("lines")) if type(line) is int]
    if not lines:
        return None
    after = None if raw.get("after") is None else _pairs(raw.get("after"))
    return TracedBlock(index, raw["function"][:200], tuple(lines), _pairs(raw.get("before")), after)


def _pairs(raw: Any) -> tuple[tuple[str, str], ...]:
    return tuple((p[0][:200], p[1][:1000]) for p in _list(raw)
                 if isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p))
