"""The common problem schema that every dataset loader produces, and its JSON / JSONL form.

A `Problem` is either a *call* problem (the candidate defines a function named `entry_point`) or a *stdio* problem
(the candidate is a program reading stdin). Its tests are `TestCase`s of the same kind. The on-disk format is
described in docs/problem-schema.md; files are `.json` (one object or a list) or `.jsonl` (one problem per line).
"""

from __future__ import annotations

import contextlib
import json
import keyword
import math
import os
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from solidcoder import languages
from solidcoder.errors import BadInput
from solidcoder.matching import MODES, problem_tolerance
from solidcoder.parsing import literal, load_json

KINDS = ("call", "stdio")
STYLES = ("assert", "check")
_STR_FIELDS = ("script", "style", "call", "stdin", "expected_stdout", "name")
# Fields added after problems were hashed into recorded keys (solve's run key): name -> the value at which `to_dict`
# leaves the field out, what every problem was before it existed, so those keys stay (the rule of core/keys.py).
LATER_FIELDS = {"language": languages.DEFAULT}


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)


def _json_ok(value: Any) -> bool:
    """True when `value` survives a JSON round trip unchanged (so no tuples, non-string keys, NaN or objects)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False)) == value
    except (TypeError, ValueError, RecursionError):
        return False


@dataclass(frozen=True)
class TestCase:
    """One test: a call test (`script`, or `call` + `expected`) or a stdio test (`stdin` + expected output(s))."""

    __test__ = False  # keeps pytest from collecting this class when tests import it

    kind: str
    script: str | None = None
    style: str | None = None
    call: str | None = None
    expected: Any = None
    stdin: str | None = None
    expected_stdout: str | None = None
    accepted_outputs: list[str] | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field 'kind' must be one of {KINDS}, got {self.kind!r}")
        for name in _STR_FIELDS:
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise ValueError(f"field {name!r} must be a string")
        if self.kind == "call":
            self._validate_call()
        else:
            self._validate_stdio()

    def _validate_call(self) -> None:
        if self.stdin is not None or self.expected_stdout is not None or self.accepted_outputs is not None:
            raise ValueError("a call test cannot have 'stdin', 'expected_stdout' or 'accepted_outputs'")
        if (self.script is None) == (self.call is None):
            raise ValueError("a call test needs exactly one of 'script' or 'call'")
        if self.script is not None:
            if self.style is None:
                object.__setattr__(self, "style", "assert")  # plain assert scripts are the common case
            if self.style not in STYLES:
                raise ValueError(f"field 'style' must be one of {STYLES}, got {self.style!r}")
            if self.expected is not None:
                raise ValueError("field 'expected' only goes with 'call', not with 'script'")
        elif self.style is not None:
            raise ValueError("field 'style' only goes with 'script'")
        elif not _json_ok(self.expected):
            raise ValueError("field 'expected' must be JSON-compatible (lists not tuples, string keys, no NaN)")

    def _validate_stdio(self) -> None:
        if self.script is not None or self.call is not None or self.style is not None or self.expected is not None:
            raise ValueError("a stdio test cannot have 'script', 'style', 'call' or 'expected'")
        if self.stdin is None:
            raise ValueError("a stdio test needs field 'stdin'")
        if self.accepted_outputs is not None:
            outs = self.accepted_outputs
            if not isinstance(outs, (list, tuple)) or not outs or not all(isinstance(o, str) for o in outs):
                raise ValueError("field 'accepted_outputs' must be a non-empty list of strings")
            object.__setattr__(self, "accepted_outputs", list(outs))
        elif self.expected_stdout is None:
            raise ValueError("a stdio test needs 'expected_stdout' or 'accepted_outputs'")

    @property
    def outputs(self) -> list[str]:
        """Every acceptable stdout of a stdio test (`expected_stdout` first)."""
        first = [self.expected_stdout] if self.expected_stdout is not None else []
        return first + list(self.accepted_outputs or [])

    def to_dict(self) -> dict[str, Any]:
        """JSON form; None fields are dropped, except `expected` of a `call` test (None is a real return value)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        if self.call is not None:
            out["expected"] = self.expected
        return out

    @classmethod
    def from_dict(cls, data: Any, default_kind: str | None = None) -> TestCase:
        """Build from a JSON object; raises ValueError naming the field. `kind` defaults to `default_kind`."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        _reject_unknown(data, cls)
        if "call" in data and "expected" not in data:
            raise ValueError("missing required field 'expected' (needed with 'call')")
        return cls(**{"kind": default_kind, **data})


def _reject_unknown(data: dict, cls: type) -> None:
    # Unknown keys are almost always typos ("pubic_tests"); silently ignoring them would drop tests.
    known = {f.name for f in fields(cls)}
    for key in data:
        if key not in known:
            raise ValueError(f"unknown field {key!r}")


@dataclass
class Problem:
    """A programming problem with public tests (shown to the model) and hidden tests (used for the verdict)."""

    id: str
    kind: str
    statement: str
    entry_point: str | None = None
    starter_code: str = ""
    public_tests: list[TestCase] = field(default_factory=list)
    hidden_tests: list[TestCase] = field(default_factory=list)
    time_limit_s: float = 5.0
    memory_limit_mb: int = 1024
    source: str = ""
    meta: dict = field(default_factory=dict)
    output_match: str = "tokens"
    float_tolerance: float | None = None
    # Code the dataset's own harness runs before the program (HumanEval's and MBPP's prompt header: its imports and
    # helper definitions). The program is judged after it, so a definition the program repeats replaces its own.
    header: str = ""
    # The language the program is written in (`languages.py`): where that decision lives. Call problems are Python.
    language: str = languages.DEFAULT

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError("field 'id' must be a non-empty string")
        if self.kind not in KINDS:
            raise ValueError(f"field 'kind' must be one of {KINDS}, got {self.kind!r}")
        for name in ("statement", "starter_code", "source", "header", "language"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"field {name!r} must be a string")
        if languages.language(self.language).native and self.kind == "call":
            raise ValueError(f"field 'language': {self.language!r} programs are judged on standard input and output "
                             "only (call tests are Python: no dataset here brings tests in that language)")
        self._validate_entry_point()
        self._validate_limits()
        self._validate_comparison()
        for name in ("public_tests", "hidden_tests"):
            self._validate_tests(name)
        if not isinstance(self.meta, dict) or not _json_ok(self.meta):
            raise ValueError("field 'meta' must be a JSON-compatible object")

    def _validate_entry_point(self) -> None:
        ep = self.entry_point
        if self.kind == "stdio" and ep is not None:
            raise ValueError("field 'entry_point' must be null for a stdio problem")
        if self.kind == "call" and not (isinstance(ep, str) and all(_is_name(part) for part in ep.split(".", 1))):
            raise ValueError(f"field 'entry_point' must be a function name or Class.method, got {ep!r}")

    def _validate_limits(self) -> None:
        t = self.time_limit_s
        # math.isfinite overflows on huge ints, so only floats go through it.
        number = isinstance(t, (int, float)) and not isinstance(t, bool)
        if not (number and t > 0 and (isinstance(t, int) or math.isfinite(t))):
            raise ValueError(f"field 'time_limit_s' must be a positive number, got {t!r}")
        m = self.memory_limit_mb
        if isinstance(m, bool) or not isinstance(m, int) or m <= 0:
            raise ValueError(f"field 'memory_limit_mb' must be a positive integer, got {m!r}")

    def _validate_comparison(self) -> None:
        if self.output_match not in MODES:
            raise ValueError(f"field 'output_match' must be one of {MODES}, got {self.output_match!r}")
        tol = self.float_tolerance
        number = isinstance(tol, (int, float)) and not isinstance(tol, bool)
        if tol is not None and not (number and tol >= 0 and (isinstance(tol, int) or math.isfinite(tol))):
            raise ValueError(f"field 'float_tolerance' must be null or a number >= 0, got {tol!r}")

    def _validate_tests(self, name: str) -> None:
        tests = getattr(self, name)
        if not isinstance(tests, list):
            raise ValueError(f"field {name!r} must be a list")
        for i, test in enumerate(tests):
            if not isinstance(test, TestCase):
                raise ValueError(f"{name}[{i}] must be a TestCase")
            if test.kind != self.kind:
                raise ValueError(f"{name}[{i}]: test kind {test.kind!r} does not match problem kind {self.kind!r}")

    @property
    def all_tests(self) -> list[TestCase]:
        return self.public_tests + self.hidden_tests

    @property
    def tolerance(self) -> float:
        """The float tolerance to judge with: `float_tolerance`, else the statement's, else 1e-6."""
        return problem_tolerance(self.float_tolerance, self.statement)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: plain dicts, lists, strings and numbers; a `LATER_FIELDS` field at its old value is left
        out."""
        out = {f.name: getattr(self, f.name) for f in fields(self)
               if not (f.name in LATER_FIELDS and getattr(self, f.name) == LATER_FIELDS[f.name])}
        out["public_tests"] = [t.to_dict() for t in self.public_tests]
        out["hidden_tests"] = [t.to_dict() for t in self.hidden_tests]
        out["meta"] = json.loads(json.dumps(self.meta))  # a deep copy, so callers cannot alias our meta
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str = "problem") -> Problem:
        """Build from a JSON object; any problem becomes BadInput prefixed with `where` (file and line)."""
        try:
            return cls._from_dict(data)
        except ValueError as exc:
            pid = data.get("id") if isinstance(data, dict) else None
            label = f"{where} (problem {pid!r})" if isinstance(pid, str) else where
            raise BadInput(f"{label}: {exc}") from None

    @classmethod
    def _from_dict(cls, data: Any) -> Problem:
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        _reject_unknown(data, cls)
        for key in ("id", "kind", "statement"):
            if key not in data:
                raise ValueError(f"missing required field {key!r}")
        if data["kind"] not in KINDS:  # checked first: the tests inherit this kind
            raise ValueError(f"field 'kind' must be one of {KINDS}, got {data['kind']!r}")
        kwargs = dict(data)
        for name in ("public_tests", "hidden_tests"):
            kwargs[name] = _tests_from(data.get(name, []), name, data["kind"])
        return cls(**kwargs)


def _tests_from(items: Any, name: str, kind: str) -> list[TestCase]:
    if not isinstance(items, list):
        raise ValueError(f"field {name!r} must be a list")
    tests = []
    for i, item in enumerate(items):
        try:
            tests.append(TestCase.from_dict(item, default_kind=kind))
        except ValueError as exc:
            raise ValueError(f"{name}[{i}]: {exc}") from None
    return tests


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: problem file is not valid UTF-8") from None
    except OSError as exc:  # missing file, a directory, no permission...
        raise BadInput(f"{path}: cannot read problem file ({exc.strerror or exc})") from None


def _entries(path: Path, text: str) -> list[tuple[str, Any]]:
    """(location label, decoded JSON value) for each problem in the file."""
    if path.suffix == ".jsonl":
        out = []
        # split on "\n" only: splitlines() would also split on U+2028 inside JSON strings.
        for lineno, line in enumerate(text.split("\n"), 1):
            if line.strip():
                out.append((f"line {lineno}", _decode(line, f"{path}, line {lineno}")))
        return out
    if path.suffix == ".json":
        value = _decode(text, str(path), whole_file=True)
        if isinstance(value, list):
            return [(f"item {i}", v) for i, v in enumerate(value, 1)]
        return [("", value)]
    raise BadInput(f"{path}: unsupported extension {path.suffix!r}, expected .json or .jsonl")


def _decode(text: str, where: str, whole_file: bool = False) -> Any:
    try:
        return load_json(text, strict=True)
    except json.JSONDecodeError as exc:
        # For a JSONL line `where` already names the line, so only the column adds information.
        at = f"line {exc.lineno} column {exc.colno}" if whole_file else f"column {exc.colno}"
        raise BadInput(f"{where}: invalid JSON ({exc.msg} at {at})") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise BadInput(f"{where}: invalid JSON ({exc})") from None


def load_problems(path: str | os.PathLike) -> list[Problem]:
    """Load every problem of a `.json` (object or list) or `.jsonl` file; duplicate ids are BadInput."""
    path = Path(path)
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for loc, data in _entries(path, _read_text(path)):
        problem = Problem.from_dict(data, where=f"{path}, {loc}" if loc else str(path))
        if problem.id in seen:
            raise BadInput(f"{path}: duplicate problem id {problem.id!r} ({seen[problem.id]} and {loc})")
        seen[problem.id] = loc
        problems.append(problem)
    return problems


def load_problem(path: str | os.PathLike) -> Problem:
    """Load a file that must hold exactly one problem."""
    problems = load_problems(path)
    if len(problems) != 1:
        raise BadInput(f"{path}: expected exactly one problem, found {len(problems)}")
    return problems[0]


def dump_problems(problems: list[Problem], path: str | os.PathLike) -> None:
    """Write problems as JSONL atomically: a temp file in the same directory, then os.replace."""
    path = Path(path)
    if path.suffix != ".jsonl":
        raise BadInput(f"{path}: problems are written as JSONL, use a .jsonl path")
    ids = [p.id for p in problems]
    if len(set(ids)) != len(ids):
        raise ValueError("dump_problems: duplicate problem ids")
    # Serialise everything before touching the disk so a bad problem cannot leave a partial file behind.
    body = "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in problems)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())  # the data must be on disk before the rename makes it visible
        os.replace(tmp, path)
    except BaseException as exc:  # including KeyboardInterrupt: never leave the temp file behind
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise BadInput(f"{path}: cannot write ({exc.strerror or exc})") from None
        raise


def argument_lines_test(entry_point: str, input_text: str, output: Any) -> TestCase:
    """A call test from APPS-style samples: one argument per input line, each a literal or else a raw string.

    `output` is the upstream one-element list (or the bare value). The call is written out as source so that the
    test is self-describing in the debugger's feedback.
    """
    args = [_literal_or_text(line) for line in input_text.split("\n")] if input_text != "" else []
    expected = output[0] if isinstance(output, list) and len(output) == 1 else output
    return TestCase(kind="call", call=f"{entry_point}(*{args!r})", expected=expected)


def _literal_or_text(line: str) -> Any:
    try:
        return literal(line)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return line
