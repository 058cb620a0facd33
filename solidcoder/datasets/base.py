"""What every dataset loader shares: reading source rows, selecting problems, and the load report.

A loader turns rows (from Hugging Face `datasets` when online, or from a local JSONL file) into `Problem`s.
Public tests are what the solver may see (the examples of the statement); hidden tests are the whole evaluation set
of the source, and are only used for the final verdict. Duplicate ids are removed (first one kept) and reported.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.problem import Problem, load_problems
from solidcoder.wording import counted

_SPACE = re.compile(r"\s+")


@dataclass
class LoadReport:
    """What the loader did besides returning problems: duplicates dropped, rows skipped, selection applied."""

    source: str
    rows: int = 0
    duplicates: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    selected: int = 0
    left_out: str = ""  # problems the run's language cannot be judged on, and why (`in_language`)

    def lines(self) -> list[str]:
        out = [f"{self.source}: {counted(self.rows, 'row')}, {counted(self.selected, 'problem')} selected"]
        if self.duplicates:
            shown = ", ".join(sorted(set(self.duplicates))[:8])
            out.append(f"removed {counted(len(self.duplicates), 'duplicate row')} "
                       f"({counted(len(set(self.duplicates)), 'id')}: {shown}...)")
        if self.left_out:
            out.append(self.left_out)
        if self.skipped:
            out.append(f"skipped {len(self.skipped)} unusable rows: {'; '.join(self.skipped[:3])}")
        return out


def read_jsonl_rows(path: Path) -> list[dict]:
    """Raw JSON objects of a JSONL file, with one-line BadInput errors naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--data-file {path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    rows = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInput(f"{path}, line {lineno}: invalid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise BadInput(f"{path}, line {lineno}: expected a JSON object")
        rows.append(row)
    return rows


def is_schema_file(path: Path) -> bool:
    """True when the file is in the project's own problem schema (first row has `kind` and `statement`)."""
    if path.suffix == ".json":
        return True
    rows = read_jsonl_rows(path)
    return bool(rows) and "kind" in rows[0] and "statement" in rows[0]


def load_schema_file(path: Path) -> list[Problem]:
    return load_problems(path)


def dedupe(problems: list[Problem], report: LoadReport) -> list[Problem]:
    """Keep the first problem of each id; record the others in the report."""
    seen: set[str] = set()
    out = []
    for problem in problems:
        if problem.id in seen:
            report.duplicates.append(problem.id)
            continue
        seen.add(problem.id)
        out.append(problem)
    return out


def squash(text: str) -> str:
    return _SPACE.sub("", text)


def shown_in_statement(statement: str, texts: list[str]) -> bool:
    """True when every text (ignoring whitespace) appears in the statement: the test is one of its examples."""
    flat = squash(statement)
    return all(squash(t) in flat for t in texts if t.strip())


def first_function_name(code: str) -> str | None:
    """`f` for `def f(...)`, `Solution.f` for a method of a top-level class (LeetCode-style starter code)."""
    cls = re.search(r"^class\s+(\w+)", code, re.MULTILINE)
    fn = re.search(r"^\s*def\s+(\w+)", code, re.MULTILINE)
    if fn is None:
        return None
    return f"{cls.group(1)}.{fn.group(1)}" if cls and fn.start() > cls.start() else fn.group(1)


def stdout_text(value: Any) -> str:
    """APPS / CodeContests outputs are sometimes one-element lists; a longer list is one line per element."""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


MIRROR_ENV = "SOLIDCODER_HF_MIRROR"


def hub_mirror() -> Path | None:
    """The local mirror of hub datasets named by $SOLIDCODER_HF_MIRROR, if any (for machines without network)."""
    value = os.environ.get(MIRROR_ENV)
    return Path(value) if value else None


def hub_rows(path: str, split: str, name: str | None = None) -> list[dict]:
    """Rows of a Hugging Face hub dataset (cached by `datasets`); needs network the first time.

    With $SOLIDCODER_HF_MIRROR set, `path` is read from MIRROR/path instead: a copy of the dataset repository
    (its data files, and its README when it defines configs), loaded by the same `datasets.load_dataset` call.
    """
    try:
        import datasets  # heavy and optional: only the online path needs it
    except ImportError:
        raise BadInput(f"loading {path} online needs `pip install datasets`; or give --data-file PATH") from None
    mirror = hub_mirror()
    source = str(mirror / path) if mirror else path
    if mirror and not (mirror / path).is_dir():
        raise BadInput(f"{MIRROR_ENV}={mirror}: no copy of {path} there (expected the directory {mirror / path})")
    try:
        return [dict(row) for row in datasets.load_dataset(source, name, split=split)]
    except Exception as exc:  # noqa: BLE001 - network, auth, missing split: all mean "cannot load"
        where = f"the mirror {source}" if mirror else "the Hugging Face hub"
        raise BadInput(f"cannot load {path} from {where} ({type(exc).__name__}: {str(exc)[:200]}); "
                       "give --data-file PATH for an offline copy") from None
