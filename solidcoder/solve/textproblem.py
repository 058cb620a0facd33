"""Read a free-text problem statement (`problem.txt`), as pasted from a judge's page, into a `Problem`.

The kind, unless forced with `kind="stdio"` or a `function` name:
  * call, when a stub (`def name(...)`, or a method in `class Solution:` whose entry point is `Solution.name`) has
    call examples: doctests, asserts, arrows or LeetCode "Input: ... Output: ..." examples;
  * else stdio, when the text has Input/Output example sections (Codeforces, AtCoder, markdown fences);
  * else call with no tests when there is a stub; else the text is refused as bad input.
The formats each kind reads are listed in `textexamples.py`. The whole text is the statement, the stub
(its `def` line, under its `class` line for a method) the starter code, and the examples the public tests.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from solidcoder.errors import BadInput
from solidcoder.parsing import parse_python
from solidcoder.problem import Problem, TestCase
from solidcoder.solve.textexamples import CallExamples, leetcode_pairs, read_call_examples, stdio_examples
from solidcoder.wording import plural

_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
_CLASS = re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)\b")
_SIGNATURE_LINES = 8


@dataclass(frozen=True)
class Stub:
    """How a call problem's solution is called: `entry_point`, the call's start, its parameters (None: unknown)."""

    entry_point: str
    call_prefix: str
    params: list[str] | None = None
    source: str = ""


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
    if function is not None and not function.isidentifier():
        raise BadInput(f"{where}: --function {function!r} is not a Python function name")
    stub = None if kind == "stdio" else find_stub(text, function)
    examples = read_call_examples(text, stub.call_prefix, stub.params) if stub else CallExamples([])
    if stub is not None and (examples.tests or function is not None):
        return _call_problem(text, problem_id, stub, examples)
    pairs = stdio_examples(text)
    if kind == "stdio" or pairs:
        tests = [TestCase(kind="stdio", stdin=i, expected_stdout=o) for i, o in pairs]
        return Problem(problem_id, "stdio", text.strip(), public_tests=tests)
    if stub is None:
        raise BadInput(f"{where}: cannot tell how the solution is run: no `def name(...)` stub and no Input/Output "
                       f"examples{_unread(leetcode_pairs(text))}; pass --stdio or --function NAME")
    return _call_problem(text, problem_id, stub, examples)


def _unread(pairs: int) -> str:
    """What the no-stub error says of LeetCode examples: without a function to call, none of them can be read."""
    return f" ({pairs} Input:/Output: {plural(pairs, 'example')} could not be read: no function to call)" \
        if pairs else ""


def _call_problem(text: str, problem_id: str, stub: Stub, examples: CallExamples) -> Problem:
    """A call problem; `meta["unreadable_examples"]` counts the examples that could not be read, when any."""
    meta = {"unreadable_examples": examples.unreadable} if examples.unreadable else {}
    return Problem(problem_id, "call", text.strip(), entry_point=stub.entry_point, starter_code=stub.source,
                   public_tests=examples.tests, meta=meta)


def _problem_id(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem) or "problem"


def find_stub(text: str, function: str | None = None) -> Stub | None:
    """The first `def` (named `function` when given), a method when it sits in a class; a bare name, else None."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        found = _DEF.match(line)
        if found and function in (None, found.group(2)):
            return _stub_at(lines, i, len(found.group(1).expandtabs()), found.group(2))
    return Stub(function, f"{function}(") if function else None


def _stub_at(lines: list[str], i: int, indent: int, name: str) -> Stub:
    signature, node = _signature(lines, i)
    params = [a.arg for a in node.args.posonlyargs + node.args.args] if node else None
    owner = _owner(lines, i, indent)
    if owner is None:
        return Stub(name, f"{name}(", params, textwrap.dedent(signature).rstrip() + "\n")
    source = textwrap.dedent(f"{lines[owner].rstrip()}\n{signature.rstrip()}\n")
    cls = _CLASS.match(lines[owner]).group(1)  # type: ignore[union-attr]
    return Stub(f"{cls}.{name}", f"{cls}().{name}(", params[1:] if params else params, source)


def _signature(lines: list[str], i: int) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef | None]:
    """The `def` line (and its continuation lines, for a signature that spans several) and its parsed form."""
    for end in range(i + 1, min(i + _SIGNATURE_LINES, len(lines)) + 1):
        signature = "\n".join(lines[i:end])
        node = _parsed_def(textwrap.dedent(signature))
        if node is not None:
            return signature, node
    return lines[i], None


def _parsed_def(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for tail in ("", "\n    pass", ":\n    pass"):
        try:
            node = parse_python(source + tail).body[0]
        except (SyntaxError, ValueError, MemoryError, RecursionError, IndexError):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _owner(lines: list[str], i: int, indent: int) -> int | None:
    """The index of the `class` line a `def` indented by `indent` at line `i` belongs to, if any."""
    for j in range(i - 1, -1, -1):
        stripped = lines[j].strip()
        if stripped and len(lines[j].expandtabs()) - len(lines[j].expandtabs().lstrip()) < indent:
            return j if _CLASS.match(lines[j]) else None
    return None
