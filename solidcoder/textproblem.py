"""Read a free-text problem statement (`problem.txt`) into a `Problem`.

Recognised shapes, in this order unless forced with `kind`/`function`:
  * stdio: example sections headed "Input" / "Output" (e.g. "Sample Input 1", "Example Output:"), whose bodies
    are fenced blocks or the lines up to the next heading. A bare "Input" heading followed by prose (the input
    format description) is only taken as an example when its body is a fenced block.
  * call: a function stub (`def name(...)`) with examples as doctests (`>>> f(1, 2)` then the result line), asserts
    (`assert f(1, 2) == 3`) or arrows (`f(1, 2) -> 3`, `f(1, 2) == 3`, `f(1, 2) => 3`).
The whole text is the statement; the stub is the starter code; examples become public tests.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase, _json_ok

_DEF = re.compile(r"^[ \t]*def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)
_HEADING = re.compile(r"^[ \t#*]*(?P<tag>(?:sample|example)s?)?[ \t]*(?P<io>input|output)[ \t]*(?:#?\d+)?[ \t]*:?"
                      r"[ \t*]*$", re.IGNORECASE | re.MULTILINE)
_FENCED = re.compile(r"^\s*```[^\n]*\n(.*?)^\s*```", re.DOTALL | re.MULTILINE)


def read_problem_text(path: Path, kind: str | None = None, function: str | None = None) -> Problem:
    """Parse `path`; `kind="stdio"` or a `function` name forces the problem kind."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read problem file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        raise BadInput(f"{path}: the problem file is empty")
    return parse_problem_text(text, _problem_id(path), kind, function, where=str(path))


def parse_problem_text(text: str, problem_id: str, kind: str | None = None, function: str | None = None,
                       where: str = "problem") -> Problem:
    pairs = stdio_examples(text)
    stub = function or _first_def(text)
    if kind == "stdio" or (function is None and kind is None and pairs):
        tests = [TestCase(kind="stdio", stdin=i, expected_stdout=o) for i, o in pairs]
        return Problem(problem_id, "stdio", text.strip(), public_tests=tests)
    if stub is None:
        raise BadInput(f"{where}: cannot tell how the solution is run: no `def name(...)` stub and no Input/Output "
                       "examples; pass --stdio or --function NAME")
    if not stub.isidentifier():
        raise BadInput(f"{where}: --function {stub!r} is not a Python function name")
    tests = call_examples(text, stub)
    return Problem(problem_id, "call", text.strip(), entry_point=stub, starter_code=_stub_source(text, stub),
                   public_tests=tests)


def _problem_id(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem) or "problem"


def _first_def(text: str) -> str | None:
    found = _DEF.search(text)
    return found.group(1) if found else None


def _stub_source(text: str, name: str) -> str:
    """The stub's `def` line (with its indentation removed), or "" when the function is only named."""
    match = re.search(rf"^[ \t]*(def[ \t]+{re.escape(name)}[ \t]*\(.*)$", text, re.MULTILINE)
    return match.group(1).rstrip() + "\n" if match else ""


def stdio_examples(text: str) -> list[tuple[str, str]]:
    """(input, output) pairs from example sections, in order."""
    headings = list(_HEADING.finditer(text))
    pairs = []
    for here, after in zip(headings, headings[1:], strict=False):
        if here.group("io").lower() != "input" or after.group("io").lower() != "output":
            continue
        following = headings[headings.index(after) + 1] if after is not headings[-1] else None
        given = _section_body(text, here.end(), after.start(), bool(here.group("tag")))
        wanted = _section_body(text, after.end(), following.start() if following else len(text),
                               bool(after.group("tag")))
        if given is not None and wanted is not None:
            pairs.append((given, wanted))
    return pairs


def _section_body(text: str, start: int, end: int, tagged: bool) -> str | None:
    """A fenced block's content, else (for a Sample/Example heading) the lines up to the next blank line."""
    body = text[start:end]
    fenced = _FENCED.search(body)
    if fenced:
        return fenced.group(1)
    if not tagged:
        return None
    lines = body.strip("\n").split("\n")
    taken = []
    for line in lines:
        if not line.strip():
            break
        taken.append(line.strip())
    return "\n".join(taken) + "\n" if taken else None


def call_examples(text: str, name: str) -> list[TestCase]:
    """Call tests from doctest, assert and arrow examples of `name(...)`."""
    tests: list[TestCase] = []
    lines = text.split("\n")
    for i, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith(">>>"):
            call = line[3:].strip()
            result = lines[i + 1].strip() if i + 1 < len(lines) else ""
            _add(tests, name, call, result)
            continue
        line = line.removeprefix("assert ").strip()
        for arrow in ("==", "->", "=>", "→"):
            if line.startswith(f"{name}(") and arrow in line:
                call, result = line.rsplit(arrow, 1)
                _add(tests, name, call.strip(), result.strip().rstrip(".,;"))
                break
    return tests


def _add(tests: list[TestCase], name: str, call: str, result: str) -> None:
    if not call.startswith(f"{name}(") or not result or result.startswith(">>>"):
        return
    try:
        compile(call, "<example>", "eval")
        expected = ast.literal_eval(result)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    if _json_ok(expected):
        tests.append(TestCase(kind="call", call=call, expected=expected))
    else:  # tuples, sets, non-string keys: compare in Python instead
        tests.append(TestCase(kind="call", script=f"assert {call} == {result}"))
