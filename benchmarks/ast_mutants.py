"""Deterministic AST mutants of a program, for checking that two judges agree on wrong programs too.

Operators (each mutant applies one of them at one site):
  compare      flip a comparison operator (< and <=, > and >=, == and !=, in and not in, is and is not)
  off-by-one   an integer constant n becomes n + 1 or n - 1
  bool         swap `and` / `or`
  return-none  `return X` becomes `return None`
  arith        swap + / - (binary operators and augmented assignments)
  drop         drop one statement other than a def or class (a body left empty gets `pass`)
Mutants that do not compile, or that unparse to the same text as the original, are skipped. The choice of sites
is seeded per program, so the same (seed, program) always gives the same mutants.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator

_COMPARE_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                 ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BODY_FIELDS = ("body", "orelse", "finalbody")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # dropping a whole definition says little


def _compare_sites(node: ast.AST) -> Iterator[int]:
    if isinstance(node, ast.Compare):
        yield from (i for i, op in enumerate(node.ops) if type(op) in _COMPARE_FLIP)


def _compare_apply(node: ast.Compare, i: int, _rng: random.Random) -> None:
    node.ops[i] = _COMPARE_FLIP[type(node.ops[i])]()


def _int_sites(node: ast.AST) -> Iterator[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        yield 0


def _int_apply(node: ast.Constant, _i: int, rng: random.Random) -> None:
    node.value += rng.choice((1, -1))


def _bool_sites(node: ast.AST) -> Iterator[int]:
    if isinstance(node, ast.BoolOp):
        yield 0


def _bool_apply(node: ast.BoolOp, _i: int, _rng: random.Random) -> None:
    node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()


def _return_sites(node: ast.AST) -> Iterator[int]:
    if isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
        yield 0


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _return_apply(node: ast.Return, _i: int, _rng: random.Random) -> None:
    node.value = ast.Constant(value=None)


def _arith_sites(node: ast.AST) -> Iterator[int]:
    if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
        yield 0


def _arith_apply(node: ast.BinOp | ast.AugAssign, _i: int, _rng: random.Random) -> None:
    node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()


def _drop_sites(node: ast.AST) -> Iterator[tuple[str, int]]:
    for name in _BODY_FIELDS:
        body = getattr(node, name, None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            yield from ((name, i) for i, stmt in enumerate(body) if not isinstance(stmt, _DEFINITIONS))


def _drop_apply(node: ast.AST, site: tuple[str, int], _rng: random.Random) -> None:
    name, i = site
    body = getattr(node, name)
    del body[i]
    if not body and name == "body":
        body.append(ast.Pass())


Sites = Callable[[ast.AST], Iterator]
Apply = Callable[[ast.AST, object, random.Random], None]
OPERATORS: dict[str, tuple[Sites, Apply]] = {
    "compare": (_compare_sites, _compare_apply),
    "off-by-one": (_int_sites, _int_apply),
    "bool": (_bool_sites, _bool_apply),
    "return-none": (_return_sites, _return_apply),
    "arith": (_arith_sites, _arith_apply),
    "drop": (_drop_sites, _drop_apply),
}


def sites(tree: ast.AST, operator: str) -> list[tuple[int, object]]:
    """(node ordinal in ast.walk order, site within the node) of every place `operator` applies."""
    find = OPERATORS[operator][0]
    return [(n, site) for n, node in enumerate(ast.walk(tree)) for site in find(node)]


def apply(source: str, operator: str, where: tuple[int, object], rng: random.Random) -> str | None:
    """The mutant's source text, or None when it does not compile."""
    tree = ast.parse(source)
    ordinal, site = where
    node = next(node for n, node in enumerate(ast.walk(tree)) if n == ordinal)
    OPERATORS[operator][1](node, site, rng)
    try:
        text = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
        compile(text, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return text


def _candidates(tree: ast.AST, rng: random.Random) -> list[tuple[str, tuple[int, object]]]:
    """Every (operator, site), shuffled per operator, then interleaved so that the operators alternate."""
    per_operator = []
    for operator in OPERATORS:
        found = sites(tree, operator)
        rng.shuffle(found)
        per_operator.append([(operator, where) for where in found])
    rng.shuffle(per_operator)
    longest = max((len(found) for found in per_operator), default=0)
    return [group[i] for i in range(longest) for group in per_operator if i < len(group)]


def mutants(source: str, count: int, seed: str) -> list[tuple[str, str]]:
    """Up to `count` distinct (operator, mutant source) of `source`, compiling and differing from it."""
    rng = random.Random(seed)
    tree = ast.parse(source)
    original = ast.unparse(tree) + "\n"
    seen, out = {original}, []
    for operator, where in _candidates(tree, rng):
        if len(out) >= count:
            break
        text = apply(source, operator, where, rng)
        if text is not None and text not in seen:
            seen.add(text)
            out.append((operator, text))
    return out
