"""Evidence for the judge (the `evidence` refinement): checks that parsing and execution can make on a red-team test
before the judge prompt is asked, so a test that is wrong on its face is rejected with a reason, not an opinion.

* Call problems: the test's first call of the entry point passes literal arguments of the types the examples pass
  (same count; ints and floats are both numbers; `None` matches anything); a non-literal argument, or a different
  count (default parameters), is not evidence either way. An `assert f(args) == value` whose call is a public
  example's call must expect the example's value.
* Structured call tests (a property over the parameters and `result`): the property must be true of every public
  example's expected result, with the example's arguments bound to the parameter names. It runs in the sandbox.
* Stdin problems: a property check over (stdin, stdout) must accept every public example's expected output. It
  runs in the sandbox as its own program, like any generated check.

Each function returns the reason the test is rejected, or None when the evidence finds nothing wrong; `checkable`
says whether the evidence had anything to check (the `evidence_judge` refinement lets it stand in for the judge
prompt then). None of this checks a call test's expected value beyond the examples' own calls: that is the
judge's part, and what a false alarm is made of.
"""

from __future__ import annotations

import ast
from typing import Any

from solidcoder.parsing import literal, parse_python
from solidcoder.problem import Problem
from solidcoder.stages.live import GeneratedTest, LiveExecutor, Outcome, first_call
from solidcoder.stages.oracle import bindings, parameters


async def contradiction(test: GeneratedTest, problem: Problem, live: LiveExecutor) -> str | None:
    """Why the evidence rejects `test` on `problem`, or None (the sandbox runs awaited on `live`'s executor)."""
    if test.crash_only:
        return None
    if problem.kind == "call":
        return (wrong_argument_types(test, problem) or contradicted_example_value(test, problem)
                or await rejected_example_result(test, problem, live))
    return await rejected_example(test, problem, live)


def checkable(test: GeneratedTest, problem: Problem) -> bool:
    """Whether the checks above had something to compare: a call test's literal arguments against examples with
    as many, or a stdin property against at least one example's expected output."""
    if problem.kind != "call":
        return any(case.kind == "stdio" and case.outputs for case in problem.public_tests)
    return bool(_comparable_calls(test, problem)[2]) or bool(_property_checks(test, problem))


async def rejected_example_result(test: GeneratedTest, problem: Problem, live: LiveExecutor) -> str | None:
    """A structured call test whose property is false of a public example's expected result."""
    for index, script in _property_checks(test, problem):
        run = await live.run_program(script, "evidence", f"the property {test.prop!r} of example {index + 1}")
        if not run.ok:
            why = (run.stderr.strip().splitlines() or [run.status])[-1][:200]
            return f"the property {test.prop[:200]!r} is false of example {index + 1}'s expected result ({why})"
    return None


def _property_checks(test: GeneratedTest, problem: Problem) -> list[tuple[int, str]]:
    """(example index, script asserting the test's property of that example's expected result) for each public
    example whose arguments bind to the entry point's parameters."""
    names = parameters(problem.starter_code + "\n" + problem.statement, problem.entry_point or "")
    found = []
    for index, (call, value) in enumerate(_example_results(problem) if test.prop and names else []):
        bound = bindings(call, names)
        if bound is not None:
            found.append((index, "\n".join([*bound, f"result = {value!r}", f"assert {test.prop}"]) + "\n"))
    return found


def _example_results(problem: Problem) -> list[tuple[ast.Call, Any]]:
    """(call node, expected value) of each public example that states both literally."""
    name, found = (problem.entry_point or "").split(".")[-1], []
    for case in (t for t in problem.public_tests if t.kind == "call"):
        script = f"assert {case.call} == {case.expected!r}" if case.call else (case.script or "")
        for call, value in _asserted_calls(script):
            if getattr(call.func, "id", None) == name:
                found.append((call, value))
    return found


def wrong_argument_types(test: GeneratedTest, problem: Problem) -> str | None:
    call, mine, comparable = _comparable_calls(test, problem)
    if not comparable or any(_compatible(mine, types) for types in comparable):
        return None
    return f"the test calls {call[:200]} with ({', '.join(mine)}); the examples pass ({', '.join(comparable[0])})"


def contradicted_example_value(test: GeneratedTest, problem: Problem) -> str | None:
    """An `assert CALL == VALUE` on a public example's very call, expecting another value than the example's."""
    expected = {_normal(t.call): t.expected for t in problem.public_tests if t.kind == "call" and t.call}
    for case in problem.public_tests:  # examples given as assert scripts (HumanEval's) name their values too
        expected.update(_asserted_values(case.script or "") if case.kind == "call" and not case.call else [])
    for call, value in _asserted_values(test.source):  # both sides normalised by ast.dump
        if call in expected and value != expected[call]:
            return f"the test expects {value!r} from an example whose expected value is {expected[call]!r}"
    return None


async def rejected_example(test: GeneratedTest, problem: Problem, live: LiveExecutor) -> str | None:
    """A stdin property check that rejects a public example's expected output."""
    for index, case in enumerate(problem.public_tests):
        if case.kind != "stdio" or not case.outputs:
            continue
        output = case.outputs[0] if case.outputs[0].endswith("\n") else case.outputs[0] + "\n"
        example = GeneratedTest("stdio", test.source, case.stdin or "", origin=test.origin)
        outcome = await live.check_output(Outcome(f"example-{index}", False, "fail"), example, output)
        if not outcome.passed and outcome.status != "sandbox_error":
            return f"the property check rejects example {index + 1}'s expected output ({outcome.detail[:200]})"
    return None


def _comparable_calls(test: GeneratedTest, problem: Problem) -> tuple[str | None, tuple[str, ...] | None, list]:
    """The test's first call of the entry point, its literal argument types, and the argument types of the
    examples that pass as many arguments (empty when there is nothing to compare)."""
    call = first_call(test.source, problem)
    mine = _argument_types(call) if call else None
    examples = [types for types in map(_argument_types, _public_calls(problem)) if types is not None]
    return call, mine, [types for types in examples if mine is not None and len(types) == len(mine)]


def _public_calls(problem: Problem) -> list[str]:
    calls = [t.call if t.call else first_call(t.script or "", problem) for t in problem.public_tests
             if t.kind == "call"]
    return [c for c in calls if c]


def _argument_types(call: str) -> tuple[str, ...] | None:
    """The type names of a call's literal arguments; None when it is not a plain call of literals."""
    try:
        node = parse_python(call.strip(), "eval").body
        if not isinstance(node, ast.Call) or node.keywords:
            return None
        return tuple(_type_name(literal(arg)) for arg in node.args)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def _compatible(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    return all(a == b or "NoneType" in (a, b) for a, b in zip(mine, theirs, strict=True))


def _asserted_values(script: str) -> list[tuple[str, Any]]:
    """(normalised call, literal) for each `assert CALL == LITERAL` (or `LITERAL == CALL`) in a script."""
    return [(ast.dump(call), value) for call, value in _asserted_calls(script)]


def _asserted_calls(script: str) -> list[tuple[ast.Call, Any]]:
    """(call node, literal) for each `assert CALL == LITERAL` (or `LITERAL == CALL`) in a script."""
    try:
        tree = parse_python(script)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            for call, literal in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
                if isinstance(call, ast.Call) and (value := _literal(literal)) is not _NOT_LITERAL:
                    found.append((call, value))
    return found


_NOT_LITERAL = object()


def _literal(node: ast.AST) -> Any:
    try:
        return literal(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL


def _normal(call: str) -> str:
    """A call's source as the AST compares it (spacing and quotes do not matter)."""
    try:
        return ast.dump(parse_python(call.strip(), "eval").body)
    except SyntaxError:
        return call
