"""Oracle assertions, read from a red-team reply: one test against the candidate's weakest assumption (the judge
prompt that rejects invalid tests is asked by the strategy, `strategies/algorithm1.py`).

A call test is an assert script calling the entry point; a stdin test is an `input` block plus a Python
`check(stdin, stdout)` asserting a property of the output. A reply that does not contain a well-formed test is
dropped without asking the judge. With `crash_only` (no oracle) the test's input is kept but its assertions are
ignored. The structured form asks for the test's fields as JSON (`ORACLE_SCHEMAS`) and assembles them here.
"""

from __future__ import annotations

import ast
import re

from solidcoder.parsing import compile_source, load_json, parse_python
from solidcoder.stages.base import PYTHON_TAGS, code_blocks
from solidcoder.stages.live import GeneratedTest


def parse_test(reply: str, kind: str, entry_point: str, origin: str = "") -> GeneratedTest | None:
    """The test in a red-team reply, or None when it holds no well-formed one."""
    blocks = code_blocks(reply)
    python = [body for tag, body in blocks if tag in PYTHON_TAGS and _compiles(body)]
    if kind == "call":
        name = entry_point.split(".")[0]
        scripts = [stripped for body in python if (stripped := _without_definition(body, name))]
        return GeneratedTest("call", scripts[0], origin=origin) if scripts else None
    inputs = [body for tag, body in blocks if tag in ("input", "text", "stdin", "txt")]
    checks = [body for body in python if "def check" in body]
    if not inputs or not checks:
        return None
    stdin = inputs[0] if inputs[0].endswith("\n") else inputs[0] + "\n"
    return GeneratedTest("stdio", checks[0].strip() + "\n", stdin=stdin, origin=origin)


def _field(maximum: int) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": maximum}


# Structured red-team replies: small fields the harness assembles into a test (a call and a property of its result,
# or an input and a property of the output), so a small model never writes the test's scaffolding itself.
ORACLE_SCHEMAS = {
    kind: {"type": "object", "additionalProperties": False, "required": ["assumption", subject, "property"],
           "properties": {"assumption": _field(300), subject: _field(1000), "property": _field(300)}}
    for kind, subject in (("call", "call"), ("stdio", "stdin"))
}
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_structured_test(reply: str, kind: str, entry_point: str, origin: str = "",
                          parameters: tuple[str, ...] = ()) -> GeneratedTest | None:
    """The test in a structured red-team reply (lenient JSON: raw newlines in strings are fine), else the free-text
    reading of `parse_test`, else None. A call test binds the call's arguments to `parameters` (the entry point's
    parameter names) before its property is asserted, so the property may name them."""
    fields = _fields(reply)
    test = _assembled(fields, kind, entry_point, origin, parameters) if fields else None
    return test or parse_test(reply, kind, entry_point, origin)


def structured_call(reply: str, entry_point: str, origin: str = "",
                    parameters: tuple[str, ...] = ()) -> GeneratedTest | None:
    """A structured call reply's call alone, crash-only (`crash_fallback` when its property is unusable), or None
    when the reply holds no call expression of the entry point."""
    call = _fields(reply).get("call", "")
    if not isinstance(call, str) or not _is_expression(call.strip()):
        return None
    script = _call_lines(call.strip(), parameters)
    name = entry_point.split(".")[0]
    calls = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(parse_python(script)))
    return GeneratedTest("call", script, crash_only=True, origin=origin) if name and calls else None


def _fields(reply: str) -> dict:
    """The first JSON object in a reply, read leniently (raw newlines in strings are fine); {} when there is none."""
    found = _OBJECT.search(reply)
    try:
        fields = load_json(found.group(0)) if found else None
    except ValueError:
        fields = None
    return fields if isinstance(fields, dict) else {}


def _call_lines(call: str, names: tuple[str, ...]) -> str:
    """`name = argument` lines binding the call's arguments to the parameter names (where they can be), then
    `result = CALL`."""
    parsed = parse_python(call, "eval").body
    bound = (bindings(parsed, names) if isinstance(parsed, ast.Call) else None) or []
    return "\n".join([*bound, f"result = {call}"]) + "\n"


def parameters(statement: str, entry_point: str) -> tuple[str, ...]:
    """The parameter names of `def entry_point(...)` in the statement or starter code (() when it has none)."""
    name = re.escape(entry_point.split(".")[-1])
    found = re.search(rf"def\s+{name}\s*\((.*?)\)\s*(?:->[^:]*)?:", statement, re.DOTALL)
    try:
        tree = parse_python(f"def f({found.group(1)}): pass") if found else None
    except SyntaxError:
        return ()
    args = tree.body[0].args if tree else None
    return tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg != "self") if args else ()


def bindings(call: ast.Call, names: tuple[str, ...]) -> list[str] | None:
    """`name = argument` lines binding a call's arguments to the parameter names, or None when they cannot be
    (starred arguments, more arguments than names, an unknown keyword)."""
    if len(call.args) > len(names) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    pairs = [*zip(names, call.args, strict=False), *((k.arg, k.value) for k in call.keywords)]
    if any(name not in names for name, _ in pairs):
        return None
    return [f"{name} = {ast.unparse(value)}" for name, value in pairs]


def _assembled(fields: dict, kind: str, entry_point: str, origin: str,
               names: tuple[str, ...] = ()) -> GeneratedTest | None:
    values = {k: v.strip() for k, v in fields.items() if isinstance(v, str) and v.strip()}
    subject, why = ("call" if kind == "call" else "stdin"), repr(values.get("assumption", "generated test"))
    if subject not in values or "property" not in values or not _is_expression(values["property"]):
        return None
    if kind != "call":
        check = f"def check(stdin, stdout):\n    assert {values['property']}, {why}\n"
        return GeneratedTest("stdio", check, stdin=values["stdin"] + "\n", origin=origin) if _compiles(check) else None
    if not _is_expression(values["call"]):
        return None
    lines = _call_lines(values["call"], names) + f"assert {values['property']}, {why}\n"
    script = _without_definition(lines, entry_point.split(".")[0])
    return GeneratedTest("call", script, origin=origin, prop=values["property"]) if script else None


def input_only(test: GeneratedTest) -> GeneratedTest | None:
    """A structured call test without its property: the call alone, crash-only (`crash_fallback`); None for any
    other test (a free-text script's asserts cannot be told from its setup)."""
    if test.kind != "call" or not test.prop or not test.source.splitlines()[-1].startswith("assert "):
        return None
    return GeneratedTest("call", "\n".join(test.source.splitlines()[:-1]) + "\n", crash_only=True, origin=test.origin)


def _is_expression(text: str) -> bool:
    try:
        parse_python(text, "eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _without_definition(script: str, name: str) -> str | None:
    """The script minus any top-level definition of `name` (which would shadow the candidate under test), or
    None when what is left does not both call `name` and assert something."""
    tree = parse_python(script)
    drop = {line for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name
            for line in range(node.lineno - len(node.decorator_list), node.end_lineno + 1)}
    kept = "\n".join(line for i, line in enumerate(script.splitlines(), 1) if i not in drop).strip()
    if not name or not _compiles(kept):
        return None
    calls = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(parse_python(kept)))
    asserts = any(isinstance(n, ast.Assert) for n in ast.walk(parse_python(kept)))
    return kept + "\n" if calls and asserts else None


def _compiles(source: str) -> bool:
    try:
        compile_source(source, "<test>")
    except (SyntaxError, ValueError):
        return False
    return True
