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
