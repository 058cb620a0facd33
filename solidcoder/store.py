"""The run directory: append-only JSONL files that survive Ctrl-C and kill -9.

* `results.jsonl` - one scored row per (problem, sample) and configuration; never rewritten.
* `errors.jsonl`  - infrastructure errors (model, sandbox); such keys are retried on resume and not scored.
* `calls.jsonl`   - every model reply, keyed by its request; a resumed run replays them instead of paying again.
* `executions.jsonl` - every program a unit judged (core/executions.py): the unit's key, its try (`attempt`: a unit
  rerun after an error writes under a new one), and the tests, verdicts and first failure. Apart from results.jsonl
  because it is written as the unit runs (a unit that fails part-way still shows what it ran, as calls.jsonl does)
  and read only by `solidcoder show` and the report's problem pages, never to score or resume; apart from
  calls.jsonl because that one is the replay cache, read whole into memory on every resume. Runs from before
  issue 31 have none.

Each row is one `os.write` of a whole line to an O_APPEND descriptor: once written it survives Ctrl-C and kill -9
(it is in the kernel's page cache). `fsync` (against power loss) is separate so that the asyncio runner can do it in
a worker thread instead of blocking its event loop. A kill can at worst leave a torn last line, which `open` cuts
off before appending again (the row it belonged to was not finished).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS, ERRORS, CALLS, EXECUTIONS = "results.jsonl", "errors.jsonl", "calls.jsonl", "executions.jsonl"


def repair_tail(path: Path) -> int:
    """Cut a torn last line (no trailing newline) off `path`; return the bytes removed."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep < len(data):
        with open(path, "r+b") as fh:
            fh.truncate(keep)
    return len(data) - keep


def read_rows(path: Path) -> list[dict]:
    """Every complete row of a JSONL file (a torn or corrupt line is skipped)."""
    return [row for _, row in numbered_rows(path)]


def numbered_rows(path: Path) -> list[tuple[int, dict]]:
    """(line number, row) of every complete row of a JSONL file, numbered from 1 (a torn or corrupt line is
    skipped)."""
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        try:
            row = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):  # not JSON, a number too long to read, or nested too deep
            continue
        if isinstance(row, dict):
            rows.append((number, row))
    return rows


class AppendLog:
    """One append-only JSONL file, written a whole line at a time."""

    def __init__(self, path: Path, sync: bool = True):
        self.path = path
        self.sync = sync  # fsync after every append (else call `fsync` when it suits)
        repair_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def append(self, row: dict[str, Any]) -> None:
        data = (json.dumps(row, ensure_ascii=False) + "\n").encode()
        written = os.write(self._fd, data)
        while written < len(data):  # regular files take the whole write; this is belt and braces
            written += os.write(self._fd, data[written:])
        if self.sync:
            os.fsync(self._fd)

    def fsync(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


class ResultStore:
    """The four logs of a run directory and the set of keys already finished."""

    def __init__(self, run_dir: Path):
        run_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir = run_dir
        self.results = AppendLog(run_dir / RESULTS, sync=False)  # the runner fsyncs them off the event loop
        self.errors = AppendLog(run_dir / ERRORS, sync=False)
        self.calls = AppendLog(run_dir / CALLS, sync=False)  # replies are a cache: losing the last costs one call
        self.executions = AppendLog(run_dir / EXECUTIONS, sync=False)  # for readers; fsynced with the results
        self.finished = {row["key"] for row in read_rows(run_dir / RESULTS) if "key" in row}
        self.replies = {row["id"]: row for row in read_rows(run_dir / CALLS) if "id" in row}

    def done(self, key: str) -> bool:
        return key in self.finished

    def add_result(self, row: dict) -> None:
        self.results.append(row)
        self.finished.add(row["key"])

    def add_error(self, row: dict) -> None:
        self.errors.append(row)

    def fsync(self) -> None:
        """Flush results and errors to the disk (blocking: call it from a thread in async code)."""
        self.results.fsync()
        self.errors.fsync()
        self.executions.fsync()

    def close(self) -> None:
        for log in (self.results, self.errors, self.calls, self.executions):
            log.close()
