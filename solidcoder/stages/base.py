"""Reading model replies (code blocks, the program, a final verdict word) and the public examples as prompts show
them. Every strategy reads replies with these; none talks to a model here (that is `core.context.ask`).
"""

from __future__ import annotations

import ast
import codeop
import re
import textwrap
from dataclasses import dataclass

from solidcoder.languages import PYTHON, language
from solidcoder.parsing import compile_source, parse_python
from solidcoder.problem import Problem, TestCase

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*)\Z", re.DOTALL)
PYTHON_TAGS = PYTHON.fence_tags  # a test script's block (tests are Python whatever the program's language)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order; last, a Python block the reply opened and never closed (it ran
    into the completion cap), cut back to its longest prefix of whole lines that compiles."""
    closed = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
    cut = cut_off_block(text)
    return closed + ([("python", cut)] if cut else [])


def cut_off_block(text: str) -> str | None:
    """The compiling part of a Python (or untagged) block left open at the end of a reply, or None."""
    tail = _FENCE.sub("", text)
    found = _OPEN_FENCE.search(tail)
    if not found or found.group(1).lower() not in PYTHON_TAGS:
        return None
    lines = found.group(2).splitlines()
    prefixes = ("\n".join(lines[:n]).strip("\n") for n in range(len(lines), 0, -1))
    return next((prefix + "\n" for prefix in prefixes if prefix.strip() and _compiles(prefix)), None)


def extract_code(text: str, program_language: str = PYTHON.name) -> str:
    """The program in a reply: the longest block tagged as `program_language` (a problem's `language`; untagged
    blocks count) that compiles, else the longest such block; a block cut off by the completion cap only when no
    closed block compiles; with no such block, code written without a fence (`unfenced_code`)."""
    entry = language(program_language)
    if entry.native:
        return native_code(text, entry.fence_tags)
    blocks = [body for tag, body in _FENCE.findall(text) if tag.lower() in entry.fence_tags]
    if not any(map(_compiles, blocks)) and (cut := cut_off_block(text)):
        return cut
    if not blocks:
        return unfenced_code(text)
    ranked = sorted(blocks, key=lambda body: (_compiles(body), len(body)), reverse=True)
    return ranked[0].strip("\n") + "\n"


def native_code(text: str, tags: tuple[str, ...]) -> str:
    """The program in a reply in a language other than Python (no parser here: its build judges it): the longest
    closed block tagged with one of `tags`, else the longest untagged one, else a tagged block cut off by the
    completion cap, else "" (such a reply is never read as prose)."""
    closed = _FENCE.findall(text)
    for wanted in (lambda tag: tag in tags, lambda tag: tag == ""):
        bodies = [body for tag, body in closed if wanted(tag.lower())]
        if bodies:
            return max(bodies, key=len).strip("\n") + "\n"
    found = _OPEN_FENCE.search(_FENCE.sub("", text))
    return found.group(2).strip("\n") + "\n" if found and found.group(1).lower() in tags else ""


def unfenced_code(text: str) -> str:
    """The program in a reply that fenced none: its longest run of whole lines that compiles (dedented) and defines a
    function or class or reads standard input, less the bare expressions and annotations at the run's ends (prose
    such as `Solution` or `Complexity: O(n)` compiles too); "" when there is none. Fenced blocks are never read."""
    lines = _FENCE.sub("\n```\n", text).splitlines()
    found, start = [], 0
    while start < len(lines):
        size = _compiling_run(lines, start) if _may_start(lines[start]) else 0
        found.append(_program_in(textwrap.dedent("\n".join(lines[start:start + size]))) if size else "")
        start += max(size, 1)
    return max(found, key=len, default="")


def _may_start(line: str) -> bool:
    """Whether a statement can begin on `line`: the cheap test before compiling the lines from it."""
    try:
        codeop.compile_command(line.strip(), symbol="exec")
    except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
        return False
    return bool(line.strip())


def _compiling_run(lines: list[str], start: int) -> int:
    """How many lines from `start`, none indented less than it, make the longest run that compiles once dedented
    (0: none); a syntax error cuts the run back to the line before it."""
    end = _block_end(lines, start)
    while end > start:
        try:
            compile_source(textwrap.dedent("\n".join(lines[start:end])), "<reply>")
            return end - start
        except (SyntaxError, ValueError) as exc:
            end = min(end - 1, start + (getattr(exc, "lineno", None) or end - start) - 1)
    return 0


def _block_end(lines: list[str], start: int) -> int:
    """The index of the first line after `start` that is indented less than it (blank lines do not count)."""
    depth = _indent(lines[start])
    return next((i for i in range(start, len(lines)) if lines[i].strip() and _indent(lines[i]) < depth), len(lines))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _program_in(source: str) -> str:
    """`source` (which compiles) from its first to its last statement that is not prose-like, when those define a
    function or class or read standard input; else ""."""
    body = parse_python(source).body
    kept = [i for i, stmt in enumerate(body) if not _prose_like(stmt)]
    if not kept or not _defines_or_reads(body[kept[0]:kept[-1] + 1]):
        return ""
    first, last = body[kept[0]], body[kept[-1]]
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    return "\n".join(source.splitlines()[start - 1:last.end_lineno]).strip("\n") + "\n"


def _prose_like(stmt: ast.stmt) -> bool:
    """A statement a sentence can parse as: a bare expression that calls nothing (`Solution`, `Yes`) or an
    annotation without a value (`Note: x`)."""
    if isinstance(stmt, ast.AnnAssign):
        return stmt.value is None
    return isinstance(stmt, ast.Expr) and not isinstance(stmt.value, ast.Call)


def _defines_or_reads(stmts: list[ast.stmt]) -> bool:
    """Whether the statements define a function or class, or read standard input (`input`, `stdin`, `open(0)`)."""
    if any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for stmt in stmts):
        return True
    return any(map(_reads_stdin, (node for stmt in stmts for node in ast.walk(stmt))))


def _reads_stdin(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open" and node.args:
        return isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
    return isinstance(node, ast.Name) and node.id in ("input", "stdin") or isinstance(node, ast.Attribute) and \
        node.attr == "stdin"


def _compiles(source: str) -> bool:
    try:
        compile_source(source, "<reply>")
    except (SyntaxError, ValueError):
        return False
    return True


def last_verdict(text: str, *words: str) -> str | None:
    """The last of `words` appearing as a whole word in `text` (so VALID never matches inside INVALID)."""
    pattern = r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")\b"
    found = re.findall(pattern, text)
    return found[-1] if found else None


@dataclass(frozen=True)
class Sample:
    """One public example as the prompts show it."""

    input: str
    output: str


def describe_test(test: TestCase) -> Sample:
    """A public test as input / expected text for simulation and debug prompts."""
    if test.kind == "stdio":
        return Sample(test.stdin or "", test.outputs[0])
    if test.call is not None:
        return Sample(test.call, repr(test.expected))
    return Sample(test.script or "", "every assertion in the script above holds")


def first_sample(problem: Problem) -> Sample | None:
    return describe_test(problem.public_tests[0]) if problem.public_tests else None
