"""Dropping a call program's own self-test: the top-level code a model appends to check its function.

Small models often end a function with `check()` or `print(f(...))` and an expected value of their own, which is
wrong as often as the function is right: the module-level assert then fails the program on every test, although
the function itself is correct (HumanEval/26's `check_solution()` is one case; `benchmarks/sanitize_replay.py`
counts them). For a call problem only the definitions matter, so `strip_self_tests` keeps imports, functions,
classes and module constants, and drops everything else at the top level: bare expressions, asserts, loops,
`if __name__ == "__main__":` blocks, and assignments whose value calls a function the program defines.

A stdin program's top level is the program, so this never applies to one. A program that does not parse is
returned unchanged (the syntax verdict is the sandbox's to give), and so is one that defines no function or class.
"""

from __future__ import annotations

import ast

from solidcoder.parsing import parse_python

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_KEPT = (ast.Import, ast.ImportFrom, *_DEFINITIONS)


def strip_self_tests(code: str) -> str:
    """`code` without its top-level self-test statements; unchanged when there are none or it does not parse."""
    try:
        module = parse_python(code)
    except (SyntaxError, ValueError):
        return code
    defined = {node.name for node in module.body if isinstance(node, _DEFINITIONS)}
    dropped = [node for node in module.body if not _kept(node, defined)]
    if not dropped or not defined:  # nothing to drop, or nothing but top-level code: not a self-test
        return code
    return _without(code, dropped, [node for node in module.body if node not in dropped])


def _kept(node: ast.stmt, defined: set[str]) -> bool:
    if isinstance(node, _KEPT):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        return not _calls_any(node, defined)
    return False


def _calls_any(node: ast.AST, names: set[str]) -> bool:
    """Whether `node` calls one of `names` by its bare name."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names for n in ast.walk(node))


def _lines(node: ast.stmt) -> range:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return range(first - 1, node.end_lineno or node.lineno)


def _without(code: str, dropped: list[ast.stmt], kept: list[ast.stmt]) -> str:
    """The source without the lines of `dropped`, but for a line it shares with a kept statement (`x = 1; f()`)."""
    lines = code.splitlines(keepends=True)
    gone = {i for node in dropped for i in _lines(node)} - {i for node in kept for i in _lines(node)}
    return "".join(line for i, line in enumerate(lines) if i not in gone).rstrip("\n") + "\n"


def reachable_definitions(code: str, entry_point: str) -> str:
    """EvalPlus's sanitizer (evalplus/sanitize.py, `sanitize(code, entrypoint)`), which the Qwen2.5-Coder evaluation
    runs on every reply, written over Python's own parser: the longest run of whole lines that parses; then its
    imports, followed by the top-level definitions `entry_point` reaches through the names they use: classes,
    functions with a `return` somewhere in them, and assignments to one plain name (the first definition of a name
    wins). Everything else at the top level goes, decorated definitions included, as EvalPlus has it (its parser
    sees them as another kind of node). An `entry_point` the code does not define leaves the imports alone."""
    code = longest_parsing_run(code)
    module = parse_python(code)
    imports = [node for node in module.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    definitions = _first_definitions(module)
    names = {name: _identifiers(node) for name, node in definitions}
    wanted = _reached(entry_point, names)
    kept = [*imports, *(node for name, node in definitions if name in wanted)]
    return "\n".join(ast.get_source_segment(code, node) or "" for node in kept)


# A reply that does not parse whole is searched for its longest parsing run among its first lines only: the search
# parses every run of lines (cubic in their count: about a second at 300 lines), and a reply is untrusted input.
MAX_RUN_LINES = 300


def longest_parsing_run(code: str) -> str:
    """The run of whole lines with the most non-blank lines that parses (the earliest among equals); the code
    itself when it parses. EvalPlus's `code_extract`, over the first `MAX_RUN_LINES` lines of code that does not
    parse whole (EvalPlus searches them all)."""
    if _parses(code):
        return code
    lines, best, most = code.split("\n")[:MAX_RUN_LINES], (0, 0), 0
    for first in range(len(lines)):
        for last in range(first + 1, len(lines)):
            size = sum(1 for line in lines[first:last + 1] if line.strip())
            if size > most and _parses("\n".join(lines[first:last + 1])):
                best, most = (first, last), size
    return "\n".join(lines[best[0]:best[1] + 1])


def _parses(code: str) -> bool:
    try:
        parse_python(code)
    except (SyntaxError, ValueError, MemoryError):
        return False
    return True


def _first_definitions(module: ast.Module) -> list[tuple[str | None, ast.stmt]]:
    found: list[tuple[str | None, ast.stmt]] = []
    for node in module.body:
        name = _defined_name(node)
        if name is not _NOT_A_DEFINITION and name not in {seen for seen, _ in found}:
            found.append((name, node))
    return found


_NOT_A_DEFINITION = object()


def _defined_name(node: ast.stmt) -> object:
    """The name a kept top-level statement defines (None: an assignment to something else than one plain name)."""
    if isinstance(node, ast.ClassDef) and not node.decorator_list:
        return node.name
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.decorator_list:
        return node.name if any(isinstance(n, ast.Return) for n in ast.walk(node)) else _NOT_A_DEFINITION
    if isinstance(node, ast.Assign):
        return node.targets[0].id if isinstance(node.targets[0], ast.Name) else None
    if isinstance(node, ast.AnnAssign):
        return node.target.id if isinstance(node.target, ast.Name) else None
    return _NOT_A_DEFINITION


def _identifiers(node: ast.AST) -> set[str]:
    """Every identifier written in `node`: names, attribute names, parameters, keywords, the defined name."""
    found: set[str] = set()
    for child in ast.walk(node):
        for field in ("id", "attr", "arg", "name"):
            value = getattr(child, field, None)
            if isinstance(value, str):
                found.add(value)
    return found


def _reached(entry_point: str, uses: dict[str | None, set[str]]) -> set[str]:
    reached, queue = {entry_point}, [entry_point]
    while queue:
        for name in uses.get(queue.pop(0), ()):
            if name not in reached:
                reached.add(name)
                queue.append(name)
    return reached
