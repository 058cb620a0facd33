"""The one way untrusted text becomes a tree: Python source, Python literals, JSON and YAML, each bounded.

Model replies and the programs in them are untrusted input (a degenerate small-model reply is a few thousand `+`
terms; an adversarial one nests or aliases without end). Everything solidcoder parses from them goes through here:

* `parse_python` / `literal`: at most `MAX_SOURCE_CHARS` characters and `MAX_DEPTH` levels of
  syntax-tree nesting. A `RecursionError` or `MemoryError` of the parser and a tree deeper than the bound are
  `UnreadableCode`, a `SyntaxError`: every caller already treats a program that does not parse as unreadable, and
  no recursive walker downstream (`ast.unparse`, `NodeVisitor`, `compile(tree)`, `literal_eval`) can overflow the
  stack on a tree that got through. Time is bounded by size: the parser is linear in practice on 1 MB.
* `compile_source`: whether source compiles, as `python file.py` would say (no nesting bound, since Python runs
  what it compiles), within the size bound; a compiler overflow is `UnreadableCode`.
* `load_json` / `load_yaml`: at most `MAX_TEXT_CHARS`; a nesting overflow is the format's own decode error; YAML
  aliases are refused (the anchors' replies never use them, and each alias level doubles what a few hundred bytes
  expand to, as `yaml.safe_load` would build it).

**The lock (CPython gh-106905).** On CPython 3.11.0-3.11.7 the AST constructor (`ast2obj`, behind `ast.parse`
and `compile(..., PyCF_ONLY_AST)`) keeps its recursion-depth counter in interpreter-wide state. When the collector
runs a finalizer mid-construction and the GIL passes to another thread that builds a tree too, the counter is
corrupted and an ordinary program raises `SystemError: AST constructor recursion depth mismatch`. Fixed in 3.11.8
and 3.12.2 (python/cpython#113476, #113472: a counter per call). Measured here with the issue's reproduction (8
threads, finalizers in cycles, `tests/test_parsing.py`): 3.11.7 and Debian's 3.11.2 fail in 7 of 8 threads;
3.10.13, 3.12.1 and 3.13.0 in none (3.10 has no counter; 3.12 runs the collector only between bytecodes, so the
shared counter of 3.12.0-3.12.1 is not reached this way). So every tree is built under one process-wide lock
(re-entrant: a finalizer of ours that parses cannot deadlock). Bounds and lock together cost 37 us per parse of a
recorded reply (729 characters on average: 100 us against a bare `ast.parse`'s 63 us, measured uncontended,
`benchmarks/results/parse_lock.txt`), against seconds for the model call that wrote it. A third-party library that
calls `ast.parse` in another thread at the same time is outside this lock; none in this process does (ruff runs as a
subprocess).
"""

from __future__ import annotations

import ast
import functools
import json
import threading
from typing import Any

from solidcoder.errors import UnreadableCode, UnreadableText

MAX_SOURCE_CHARS = 1_000_000
MAX_DEPTH = 100
MAX_TEXT_CHARS = 1_000_000
_TREE_LOCK = threading.RLock()


def parse_python(source: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """`ast.parse(source, filename, mode)` within the bounds; `UnreadableCode` (a SyntaxError) past them."""
    _check_size(source, MAX_SOURCE_CHARS, "program")
    try:
        with _TREE_LOCK:
            tree = ast.parse(source, filename, mode)
    except (RecursionError, MemoryError) as exc:
        raise UnreadableCode(f"too deeply nested to read ({type(exc).__name__})") from None
    check_depth(tree)
    return tree


def compile_source(source: str, filename: str, mode: str = "exec"):
    """`compile(source, filename, mode)`, as `python file.py` would judge it (no nesting bound: no tree of AST objects
    is built, so the compiler's own limits apply), within the size bound; its `RecursionError` or `MemoryError` is
    `UnreadableCode`."""
    _check_size(source, MAX_SOURCE_CHARS, "program")
    try:
        return compile(source, filename, mode, dont_inherit=True)
    except (RecursionError, MemoryError) as exc:
        raise UnreadableCode(f"too deeply nested to compile ({type(exc).__name__})") from None


def literal(text: str | ast.AST) -> Any:
    """`ast.literal_eval(text)` (stripped) or of a node, within the bounds: ValueError, TypeError or SyntaxError
    (UnreadableCode past the bounds)."""
    node = parse_python(text.strip(), "eval") if isinstance(text, str) else check_depth(text)
    return ast.literal_eval(node)


def check_depth(tree: ast.AST, limit: int = MAX_DEPTH) -> ast.AST:
    """`tree` when no path from it is deeper than `limit` nodes; `UnreadableCode` otherwise. Iterative."""
    level, depth = [tree], 0
    while level:
        depth += 1
        if depth > limit:
            raise UnreadableCode(f"nested more than {limit} levels deep")
        level = [child for node in level for child in ast.iter_child_nodes(node)]
    return tree


def load_json(text: str, strict: bool = False) -> Any:
    """`json.loads(text, strict=strict)` (lenient by default: raw newlines in strings, as replies have them) within
    the bounds; `UnreadableText` (a ValueError, beside json's own JSONDecodeError) past them."""
    _check_size(text, MAX_TEXT_CHARS, "JSON")
    try:
        return json.loads(text, strict=strict)
    except RecursionError:
        raise UnreadableText("JSON nested too deeply to read") from None


def load_yaml(text: str) -> Any:
    """`yaml.safe_load(text)` within the bounds, aliases refused: `yaml.YAMLError` for any unreadable text."""
    import yaml  # here, not at import: the sandbox side imports this module and never reads YAML

    if len(text) > MAX_TEXT_CHARS:
        raise yaml.YAMLError(f"YAML of {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are read")
    try:
        return yaml.load(text, Loader=_loader(yaml))  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise yaml.YAMLError("YAML nested too deeply to read") from None


@functools.cache
def _loader(yaml):
    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(None, None, "YAML aliases are not read", self.peek_event().start_mark)
            return super().compose_node(parent, index)

    return NoAliasLoader


def _check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise (UnreadableCode if what == "program" else UnreadableText)(
            f"{what} of {len(text):,} characters; at most {limit:,} are read")
