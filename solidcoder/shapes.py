"""What a run directory's rows must hold to be read: each field that `show` and `report` read, with the type they
read it as, checked before anything reads it.

A run directory is data from disk: a hand edit, another tool or a tampered copy can put a string where a count
belongs. Read through `checked_rows` (a JSONL file) or `checked` (trajectory.json), a field of the wrong type is a
`BadInput` naming the file, the line and the field, e.g. `results.jsonl:3: tests_passed should be a whole number,
not '<script>...'`: one line and exit code 2, never a traceback and never a value that reaches a page or a table
as something it is not. Fields no reader uses are not checked; a field left out is left out (readers default it),
but for those marked `needed`. Numbers must be finite and below 10**15 (JSON allows NaN and Infinity, and a float
cannot hold a larger integer); counts are integers, flags true or false.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.store import ResultRow, numbered_rows

LARGEST = 10**15


@dataclass(frozen=True)
class Leaf:
    """A value of one kind: `kind` is how a message names it."""

    kind: str
    fits: Callable[[Any], bool]

    def problem(self, value: Any, at: str) -> str:
        return "" if self.fits(value) else f"{at} should be {self.kind}, not {_quoted(value)}"


@dataclass(frozen=True)
class Obj:
    """An object whose listed fields, where present, have their shapes; `needed` fields must be present."""

    fields: dict[str, Any]
    needed: tuple[str, ...] = ()

    def problem(self, value: Any, at: str) -> str:
        if not isinstance(value, dict):
            return f"{at or 'the row'} should be an object, not {_quoted(value)}"
        if missing := [name for name in self.needed if name not in value]:
            return f"{_at(at, missing[0])} is missing"
        return _first(shape.problem(value[name], _at(at, name)) for name, shape in self.fields.items() if name in value)


@dataclass(frozen=True)
class ListOf:
    """A list, each item of `item`'s shape; `length` items exactly when it is set."""

    item: Any
    length: int | None = None

    def problem(self, value: Any, at: str) -> str:
        if not isinstance(value, list) or self.length not in (None, len(value)):
            return f"{at} should be a list{f' of {self.length}' if self.length else ''}, not {_quoted(value)}"
        return _first(self.item.problem(item, f"{at}[{i}]") for i, item in enumerate(value))


@dataclass(frozen=True)
class MapOf:
    """An object with any keys, each value of `value`'s shape."""

    value: Any

    def problem(self, value: Any, at: str) -> str:
        if not isinstance(value, dict):
            return f"{at} should be an object, not {_quoted(value)}"
        return _first(self.value.problem(item, _at(at, key)) for key, item in value.items())


@dataclass(frozen=True)
class Either:
    """A value of one of `shapes` (null is `NULL`)."""

    shapes: tuple[Any, ...]

    def problem(self, value: Any, at: str) -> str:
        found = [shape.problem(value, at) for shape in self.shapes]
        return "" if "" in found else found[0]


TEXT = Leaf("text", lambda value: isinstance(value, str))
FLAG = Leaf("true or false", lambda value: isinstance(value, bool))
COUNT = Leaf("a whole number", lambda value: type(value) is int and abs(value) < LARGEST)
NUMBER = Leaf("a number", lambda value: type(value) in (int, float) and abs(value) < LARGEST)  # NaN: not <
NULL = Leaf("null", lambda value: value is None)
ANY = Leaf("anything", lambda value: True)


def _at(at: str, name: object) -> str:
    return f"{at}.{name}" if at else str(name)


def _first(problems) -> str:
    return next((problem for problem in problems if problem), "")


def _quoted(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}..."


def checked(data: Any, shape: Any, where: str) -> Any:
    """`data` when it has `shape`; else BadInput naming `where` and the field."""
    problem = shape.problem(data, "")
    if problem:
        raise BadInput(f"{where}: {problem}")
    return data


def checked_rows(path: Path, shape: Any) -> list[dict]:
    """Every complete row of a JSONL file (a torn line is skipped, as `store.read_rows` skips it), each checked
    against `shape`; BadInput naming the file and line of the first that does not fit, or a file that cannot be
    read."""
    try:
        rows = numbered_rows(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read it: {exc}") from None
    return [checked(row, shape, f"{path}:{number}") for number, row in rows]


# --- the run directory's shapes ---------------------------------------------------------------------------------

USAGE = MapOf(ListOf(NUMBER, length=3))  # template -> [calls, prompt tokens, completion tokens]
TIER = Obj({"tier": COUNT, "calls": COUNT, "tokens": NUMBER, "s": NUMBER}, needed=("tier", "tokens"))
KEPT = Obj({"kind": TEXT, "source": TEXT, "stdin": Either((TEXT, NULL)), "origin": TEXT, "crash_only": FLAG})
NOTES = Obj({"tier": COUNT, "tiers": ListOf(TIER), "oracle_rounds": ListOf(TEXT), "judge_rejections": ListOf(TEXT),
             "stages": Either((ListOf(TEXT), MapOf(ANY))), "kept": ListOf(KEPT), "stopped": TEXT})
_ROW = {"key": TEXT, "id": TEXT, "dataset": TEXT, "strategy": TEXT, "model": TEXT, "config_hash": TEXT, "run": TEXT,
        "sample": COUNT, "calls": COUNT, "prompt_tokens": COUNT, "completion_tokens": COUNT, "cost_usd": NUMBER,
        "wall_s": NUMBER, "error": TEXT, "code": TEXT, "language": TEXT, "notes": NOTES, "template_usage": USAGE,
        "stage_usage": USAGE}
RESULT = Obj({**_ROW, "passed": FLAG, "tests_passed": COUNT, "tests_total": COUNT, "first_failure": TEXT,
              "first_status": TEXT,
              "kept_tests": Either((COUNT, NULL)), "false_alarms": Either((COUNT, NULL)),
              "alternatives_passed": MapOf(FLAG)}, needed=("key", "id", "passed"))
ERROR = Obj(_ROW, needed=("key", "id"))
RUN = Obj({"config_hash": TEXT, "label": TEXT})
CALL = Obj({"id": TEXT, "template": TEXT, "completion": Obj({"prompt_tokens": COUNT, "completion_tokens": COUNT,
                                                             "latency_s": NUMBER, "text": TEXT})})
TEST_RUN = Obj({name: TEXT for name in ("kind", "status", "input", "expected", "actual", "detail", "name")}
               | {"wall_s": NUMBER})
EXECUTION = Obj({"key": TEXT, "attempt": TEXT, "n": COUNT, "purpose": TEXT, "program": TEXT, "tests": ListOf(TEST_RUN),
                 "passed": COUNT, "total": COUNT, "after_call": COUNT, "first_failure": Either((TEST_RUN, NULL)),
                 "trace": TEXT})
STEP = Obj({**EXECUTION.fields, "type": TEXT, "template": TEXT, "prompt_tokens": COUNT, "completion_tokens": COUNT,
            "latency_s": NUMBER, "reply": TEXT, "error": TEXT, "replayed": FLAG,
            "messages": ListOf(Obj({"role": TEXT, "content": TEXT}))})
TRAJECTORY = Obj({"problem": Obj({"id": TEXT}), "strategy": TEXT, "elapsed_s": NUMBER, "steps": ListOf(STEP),
                  "usage": Obj({"calls": COUNT, "tokens": COUNT}),
                  "outcome": Obj({"status": TEXT, "reason": TEXT, "code": TEXT, "notes": NOTES})})


def checked_results(path: Path, shape: Obj) -> list[ResultRow]:
    """Every row of a results.jsonl (`shape` RESULT) or errors.jsonl (ERROR), checked, as a `ResultRow`."""
    return [ResultRow.from_dict(row) for row in checked_rows(path, shape)]
