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

A row of results.jsonl or errors.jsonl is a `ResultRow`: bench writes one per unit and `show`, the metrics and
`report` read them, all through `to_dict` / `from_dict`, so no other module reads a row's field by its key. What the
strategy recorded is its `Notes` (also a `solve` run's `outcome.notes`): routing's `Route` and Algorithm 1's
`OracleRounds` are typed fields, the strategy's other figures (`figures`) are written as they are and read by
nothing. `from_dict` reads every row shape committed under benchmarks/results/, and `to_dict` writes the keys those
rows have, so a row read and written again is the same JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

RESULTS, ERRORS, CALLS, EXECUTIONS = "results.jsonl", "errors.jsonl", "calls.jsonl", "executions.jsonl"
RUNS = "runs.jsonl"  # one row per `bench` command run into the directory: its options, settings and label


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

    def add_result(self, row: ResultRow) -> None:
        self.results.append(row.to_dict())
        self.finished.add(row.key)

    def add_error(self, row: ResultRow) -> None:
        self.errors.append(row.to_dict())

    def fsync(self) -> None:
        """Flush results and errors to the disk (blocking: call it from a thread in async code)."""
        self.results.fsync()
        self.errors.fsync()
        self.executions.fsync()

    def close(self) -> None:
        for log in (self.results, self.errors, self.calls, self.executions):
            log.close()


# --- the result row ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeptTest:
    """A test the strategy accumulated (a failing oracle test kept to check later programs), as a row holds it."""

    kind: str
    source: str
    stdin: str | None = None
    crash_only: bool = False
    origin: str = ""
    prop: str = ""  # a structured call test's property (stages/live.py: `GeneratedTest`); written when set

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "source": self.source, "stdin": self.stdin, "crash_only": self.crash_only,
                "origin": self.origin, **({"prop": self.prop} if self.prop else {})}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> KeptTest:
        return cls(**{name: value for name, value in row.items() if name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class TierCost:
    """What one of routing's tiers cost: its model calls, tokens and seconds."""

    tier: int
    calls: int = 0
    tokens: int = 0
    s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "calls": self.calls, "tokens": self.tokens, "s": self.s}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> TierCost:
        return cls(row["tier"], row.get("calls", 0), row.get("tokens", 0), row.get("s", 0.0))


@dataclass(frozen=True)
class Route:
    """`solidcoder-routed`'s record: the tier the problem ended in, what each tier cost, in order, and what tier 0's
    guard found ("" without a guard)."""

    tier: int | None
    tiers: tuple[TierCost, ...] = ()
    guard: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**({"tier": self.tier} if self.tier is not None else {}),
                "tiers": [cost.to_dict() for cost in self.tiers], **({"guard": self.guard} if self.guard else {})}

    @classmethod
    def from_dict(cls, notes: Mapping[str, Any]) -> Route | None:
        if "tier" not in notes and "tiers" not in notes:
            return None
        return cls(notes.get("tier"), tuple(TierCost.from_dict(t) for t in notes.get("tiers", [])),
                   notes.get("guard", ""))


@dataclass(frozen=True)
class OracleRounds:
    """Algorithm 1's record: each oracle round's outcome (malformed, rejected, "executed, passed", ...) and the
    judge's (or the evidence's) reason for each test it rejected, in order."""

    outcomes: tuple[str, ...] = ()
    rejections: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"oracle_rounds": list(self.outcomes), "judge_rejections": list(self.rejections)}

    @classmethod
    def from_dict(cls, notes: Mapping[str, Any]) -> OracleRounds | None:
        if "oracle_rounds" not in notes and "judge_rejections" not in notes:
            return None
        return cls(tuple(notes.get("oracle_rounds", ())), tuple(notes.get("judge_rejections", ())))


_NOTES_KEYS = {"stages", "verified", "stopped", "kept_tests", "kept", "tier", "tiers", "guard", "oracle_rounds",
               "judge_rejections"}


@dataclass(frozen=True, kw_only=True)
class Notes:
    """What a strategy recorded of one problem (a row's `notes`): the stages it ran in order (None: it names none),
    whether its own tests verified the answer (None: it ran none), the cap that stopped it, the tests it kept (None:
    it keeps none), routing's `route` and Algorithm 1's `oracle` rounds (None for other strategies), and `figures`,
    the strategy's other counts (AlphaCodium's fixes, best-of-n's picks, LDB's rounds, ...): written as they are,
    read by nothing."""

    stages: tuple[str, ...] | None = None
    verified: bool | None = None
    stopped: str | None = None
    kept: tuple[KeptTest, ...] | None = None
    route: Route | None = None
    oracle: OracleRounds | None = None
    figures: Mapping[str, Any] = field(default_factory=dict)
    # rows from before 2026-12-03 wrote `stages` as stage -> [calls, prompt tokens, completion tokens]; `stages` then
    # holds its keys, and this the object, to be written back as it was
    stage_usage: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        notes = {**self.figures, **(self.route.to_dict() if self.route else {}),
                 **(self.oracle.to_dict() if self.oracle else {})}
        stages = self.stages if self.stage_usage is None else self.stage_usage
        notes |= {"stages": _plain(stages)} if stages is not None else {}
        notes |= {"verified": self.verified} if self.verified is not None else {}
        notes |= {"stopped": self.stopped} if self.stopped is not None else {}
        if self.kept is not None:
            notes |= {"kept_tests": len(self.kept), "kept": [test.to_dict() for test in self.kept]}
        return notes

    @classmethod
    def from_dict(cls, notes: Mapping[str, Any]) -> Notes:
        stages, kept = notes.get("stages"), notes.get("kept")
        return cls(stages=None if stages is None else tuple(stages), verified=notes.get("verified"),
                   stopped=notes.get("stopped"),
                   kept=None if kept is None else tuple(KeptTest.from_dict(test) for test in kept),
                   route=Route.from_dict(notes), oracle=OracleRounds.from_dict(notes),
                   figures={name: value for name, value in notes.items() if name not in _NOTES_KEYS},
                   stage_usage=dict(stages) if isinstance(stages, Mapping) else None)


IDENTITY = ("key", "dataset", "id", "sample", "strategy", "model", "config_hash")
TemplateUsage = Mapping[str, tuple[float, float, float]]  # template -> (answered calls, prompt, completion tokens)


@dataclass(frozen=True, kw_only=True)
class ResultRow:
    """One unit's row: in results.jsonl with its verdict (`passed`), or in errors.jsonl with `error` and no verdict.

    A field that is None is not in the row (a trace task's row has no `code`, an old row no `template_usage`). The
    identity (`IDENTITY`) is the run's (`RunSpec`), the verdict and the fields of its kind (a code task's hidden
    tests, answer and notes; a trace task's variable and values) the task's, the usage the unit's model's. `run` is
    set in memory only, by `report`, where two directories hold the same configuration."""

    key: str = ""
    dataset: str = ""
    id: str = ""
    sample: int = 0
    strategy: str = ""
    model: str = ""
    config_hash: str = ""
    passed: bool | None = None
    tests_passed: int | None = None
    tests_total: int | None = None
    first_failure: str | None = None
    first_status: str | None = None  # its verdict (fail, error, timeout, compile_error ...); rows before 12-06: None
    code: str | None = None
    language: str | None = None  # the program's (`languages.py`); None in a trace task's row and rows before 12-06
    notes: Notes | None = None
    kept_tests: int | None = None  # tests the strategy kept, judged on an answer the hidden tests accept ...
    false_alarms: int | None = None  # ... and how many of them reject it (None: not judged)
    alternatives_passed: Mapping[str, bool] | None = None  # best-of-n: its pick among the first k samples, by k;
    # since issue 53 also each sample's own verdict ("sample 1" ...)
    variable: str | None = None
    expected: str | None = None
    predicted: str | None = None
    calls: int = 0
    replayed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    model_s: float = 0.0
    template_usage: TemplateUsage | None = None
    stage_usage: TemplateUsage | None = None  # rows before 2026-12-03: keyed by the template name's last part
    error_kind: str | None = None  # model, sandbox or internal
    error: str | None = None
    wall_s: float = 0.0
    run: str = ""

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def usage(self) -> TemplateUsage:
        """Tokens by template: `template_usage`, else an old row's `stage_usage`."""
        return self.template_usage or self.stage_usage or {}

    def of_unit(self, unit: ResultRow) -> ResultRow:
        """This row's findings under `unit`'s identity."""
        return replace(self, **{name: getattr(unit, name) for name in IDENTITY})

    def to_dict(self) -> dict[str, Any]:
        row = {}
        for name in _ROW_FIELDS:
            value = getattr(self, name)
            if value is not None and (value or name != "run"):
                row[name] = _plain(value)
        return row

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> ResultRow:
        found = {name: row[name] for name in _ROW_FIELDS if name in row}
        if "notes" in found:
            found["notes"] = Notes.from_dict(found["notes"]) if isinstance(found["notes"], Mapping) else None
        for name in ("template_usage", "stage_usage"):
            if isinstance(found.get(name), Mapping):
                found[name] = {template: tuple(counts) for template, counts in found[name].items()}
        return cls(**found)


_ROW_FIELDS = tuple(f.name for f in fields(ResultRow))


def _plain(value: Any) -> Any:
    """A row's value as JSON holds it: typed records as their objects, tuples as lists."""
    if isinstance(value, Notes):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {name: _plain(item) for name, item in value.items()}
    return [_plain(item) for item in value] if isinstance(value, (tuple, list)) else value


def read_results(path: Path) -> list[ResultRow]:
    """Every complete row of a results.jsonl or errors.jsonl, unchecked (`shapes.checked_results` checks them)."""
    return [ResultRow.from_dict(row) for row in read_rows(path)]


def run_labels(runs: list[dict[str, Any]]) -> dict[str, str]:
    """Configuration hash -> the label `bench --label` gave it, from runs.jsonl's rows (the latest label wins)."""
    return {row.get("config_hash", ""): row["label"] for row in runs if row.get("label")}
