"""Tests for the problem schema: validation, JSON/JSONL round trips and the BadInput messages of the loaders."""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

import solidcoder
from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase, dump_problems, load_problem, load_problems


def call_problem(pid: str = "add") -> Problem:
    return Problem(
        id=pid,
        kind="call",
        statement="Add two numbers.",
        entry_point="add",
        starter_code="def add(a, b):\n",
        public_tests=[TestCase(kind="call", script="assert add(1, 2) == 3")],
        hidden_tests=[
            TestCase(kind="call", call="add(2, 2)", expected=4, name="small"),
            TestCase(kind="call", call="add(None, None)", expected=None),
            TestCase(kind="call", script="def check(candidate):\n    assert candidate(0, 0) == 0\n", style="check"),
        ],
        source="unit",
        meta={"difficulty": "easy", "tags": ["math"]},
    )


def stdio_problem(pid: str = "echo") -> Problem:
    return Problem(
        id=pid,
        kind="stdio",
        statement="Print any root of x^2 = 1.",
        public_tests=[TestCase(kind="stdio", stdin="", accepted_outputs=["1\n", "-1\n"])],
        hidden_tests=[TestCase(kind="stdio", stdin="5\n", expected_stdout="5\n")],
        time_limit_s=2,
        memory_limit_mb=256,
    )


def write_lines(path, *lines: str):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------- validation


def test_script_style_defaults_to_assert():
    assert TestCase(kind="call", script="assert f() == 1").style == "assert"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"kind": "batch", "call": "f()"}, "'kind'"),
        ({"kind": "call"}, "exactly one of 'script' or 'call'"),
        ({"kind": "call", "script": "assert f()", "call": "f()"}, "exactly one of 'script' or 'call'"),
        ({"kind": "call", "script": "assert f()", "style": "pytest"}, "'style'"),
        ({"kind": "call", "script": "assert f()", "expected": 1}, "'expected'"),
        ({"kind": "call", "call": "f()", "expected": (1, 2)}, "'expected'"),
        ({"kind": "call", "call": "f()", "expected": {1: 2}}, "'expected'"),
        ({"kind": "call", "call": "f()", "expected": float("nan")}, "'expected'"),
        ({"kind": "call", "call": "f()", "stdin": ""}, "'stdin'"),
        ({"kind": "stdio", "expected_stdout": "1"}, "'stdin'"),
        ({"kind": "stdio", "stdin": ""}, "'expected_stdout' or 'accepted_outputs'"),
        ({"kind": "stdio", "stdin": "", "accepted_outputs": []}, "'accepted_outputs'"),
        ({"kind": "stdio", "stdin": "", "accepted_outputs": ["a", 1]}, "'accepted_outputs'"),
        ({"kind": "stdio", "stdin": 3, "expected_stdout": "1"}, "'stdin'"),
        ({"kind": "stdio", "stdin": "", "expected_stdout": "1", "call": "f()"}, "cannot have"),
    ],
)
def test_testcase_validation(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        TestCase(**kwargs)


def test_stdio_outputs_lists_every_acceptable_output():
    test = TestCase(kind="stdio", stdin="", expected_stdout="a", accepted_outputs=("b", "c"))
    assert test.outputs == ["a", "b", "c"]
    assert test.accepted_outputs == ["b", "c"]


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"id": ""}, "'id'"),
        ({"kind": "call", "entry_point": None}, "'entry_point'"),
        ({"kind": "call", "entry_point": "not valid"}, "'entry_point'"),
        ({"kind": "call", "entry_point": "class"}, "'entry_point'"),
        ({"entry_point": "main"}, "'entry_point' must be null"),
        ({"time_limit_s": 0}, "'time_limit_s'"),
        ({"time_limit_s": True}, "'time_limit_s'"),
        ({"time_limit_s": float("inf")}, "'time_limit_s'"),
        ({"memory_limit_mb": 1.5}, "'memory_limit_mb'"),
        ({"output_match": "words"}, "'output_match'"),
        ({"output_match": None}, "'output_match'"),
        ({"float_tolerance": -1e-6}, "'float_tolerance'"),
        ({"float_tolerance": True}, "'float_tolerance'"),
        ({"float_tolerance": float("nan")}, "'float_tolerance'"),
        ({"float_tolerance": float("inf")}, "'float_tolerance'"),
        ({"float_tolerance": "1e-6"}, "'float_tolerance'"),
        ({"statement": None}, "'statement'"),
        ({"meta": {"x": object()}}, "'meta'"),
        ({"hidden_tests": [TestCase(kind="call", call="f()", expected=1)]}, r"hidden_tests\[0\].*does not match"),
        ({"public_tests": ["not a test"]}, r"public_tests\[0\]"),
        ({"language": "cobol"}, "'language' must be one of"),
        ({"language": None}, "'language' must be a string"),
    ],
)
def test_problem_validation(changes, fragment):
    base = stdio_problem().to_dict() | {"public_tests": [], "hidden_tests": []}
    with pytest.raises(ValueError, match=fragment):
        Problem(**(base | changes))


# ---------------------------------------------------------------- dicts and files


def test_dict_round_trip_and_dropped_none_fields():
    problem = call_problem()
    data = problem.to_dict()
    json.dumps(data)  # the dict form must be plain JSON
    assert Problem.from_dict(data) == problem
    hidden = data["hidden_tests"]
    assert hidden[0] == {"kind": "call", "call": "add(2, 2)", "expected": 4, "name": "small"}
    # expected=None is a real expected return value, so it survives; other None fields are dropped
    assert hidden[1] == {"kind": "call", "call": "add(None, None)", "expected": None}
    assert "stdin" not in data["public_tests"][0]


def test_stdio_outputs_compare_as_tokens_by_default():
    assert stdio_problem().output_match == "tokens"


def test_comparison_fields_round_trip_through_dicts():
    problem = stdio_problem()
    problem.output_match, problem.float_tolerance = "lines", 1e-4
    assert Problem.from_dict(json.loads(json.dumps(problem.to_dict()))) == problem


def test_comparison_fields_default_when_absent_from_the_file():
    data = {k: v for k, v in stdio_problem().to_dict().items() if k not in ("output_match", "float_tolerance")}
    assert Problem.from_dict(data) == stdio_problem()


def test_a_problem_without_a_language_is_python_and_its_json_is_what_it_was():
    data = call_problem().to_dict()
    assert "language" not in data  # the field's old value is left out, so keys hashed from this JSON stay
    loaded = Problem.from_dict(data)
    assert loaded.language == "python" and loaded == Problem.from_dict(data | {"language": "python"})


def test_tolerance_comes_from_the_statement_when_unset():
    problem = stdio_problem()
    problem.statement = "Print x. Your answer is correct if its absolute or relative error does not exceed 10^{-4}."
    assert problem.tolerance == pytest.approx(1e-4)


def test_float_tolerance_overrides_the_statement():
    problem = stdio_problem()
    problem.statement, problem.float_tolerance = "The absolute error must not exceed 10^{-4}.", 1e-9
    assert problem.tolerance == 1e-9


def test_tolerance_defaults_to_1e_6():
    assert stdio_problem().tolerance == 1e-6


def test_jsonl_round_trip(tmp_path):
    problems = [call_problem("a"), stdio_problem("b"), call_problem("c")]
    path = tmp_path / "set.jsonl"
    dump_problems(problems, path)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 3
    assert load_problems(path) == problems
    assert os.listdir(tmp_path) == ["set.jsonl"]  # no temp file left behind


def test_dump_replaces_existing_file_and_keeps_unicode(tmp_path):
    path = tmp_path / "p.jsonl"
    dump_problems([call_problem("old")], path)
    fancy = stdio_problem("new")
    fancy.statement = "Grüße \u2028 line separator"
    dump_problems([fancy], path)
    assert [p.id for p in load_problems(path)] == ["new"]
    assert load_problem(path).statement == fancy.statement


def test_dump_failure_leaves_old_file_intact(tmp_path):
    path = tmp_path / "p.jsonl"
    dump_problems([call_problem("keep")], path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="duplicate"):
        dump_problems([call_problem("x"), call_problem("x")], path)
    with pytest.raises(BadInput, match=r"\.jsonl"):
        dump_problems([call_problem("y")], tmp_path / "p.json")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["p.jsonl"]


def test_dump_into_missing_directory_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="cannot write"):
        dump_problems([call_problem()], tmp_path / "nope" / "p.jsonl")


def test_json_file_with_one_object_or_a_list(tmp_path):
    single = tmp_path / "one.json"
    single.write_text(json.dumps(call_problem().to_dict(), indent=2), encoding="utf-8")
    assert load_problem(single) == call_problem()
    many = tmp_path / "many.json"
    many.write_text(json.dumps([call_problem("a").to_dict(), stdio_problem("b").to_dict()]), encoding="utf-8")
    assert [p.id for p in load_problems(many)] == ["a", "b"]
    with pytest.raises(BadInput, match="exactly one problem, found 2"):
        load_problem(many)


def test_tests_inherit_problem_kind_and_blank_lines_are_skipped(tmp_path):
    row = {"id": "p", "kind": "stdio", "statement": "", "public_tests": [{"stdin": "1", "expected_stdout": "1"}]}
    path = write_lines(tmp_path / "p.jsonl", "", json.dumps(row), "   ")
    (problem,) = load_problems(path)
    assert problem.public_tests[0].kind == "stdio"


# ---------------------------------------------------------------- BadInput messages


def test_duplicate_ids_name_the_id_and_both_lines(tmp_path):
    a, b = json.dumps(call_problem("dup").to_dict()), json.dumps(stdio_problem("other").to_dict())
    path = write_lines(tmp_path / "p.jsonl", a, b, "", a)
    with pytest.raises(BadInput, match=r"duplicate problem id 'dup' \(line 1 and line 4\)") as info:
        load_problems(path)
    assert str(path) in str(info.value)


def test_duplicate_ids_in_json_list_name_the_items(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps([stdio_problem("x").to_dict()] * 2), encoding="utf-8")
    with pytest.raises(BadInput, match=r"duplicate problem id 'x' \(item 1 and item 2\)"):
        load_problems(path)


def test_malformed_jsonl_line_names_the_line(tmp_path):
    path = write_lines(tmp_path / "p.jsonl", json.dumps(call_problem().to_dict()), '{"id": "b",')
    with pytest.raises(BadInput, match=r"p\.jsonl, line 2: invalid JSON") as info:
        load_problems(path)
    assert "\n" not in str(info.value)


def test_malformed_json_file_names_the_line(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{\n  "id": "a",\n  oops\n}', encoding="utf-8")
    with pytest.raises(BadInput, match=r"invalid JSON .*line 3"):
        load_problems(path)


def test_missing_file_and_unsupported_extension(tmp_path):
    with pytest.raises(BadInput, match=r"missing\.jsonl: cannot read"):
        load_problems(tmp_path / "missing.jsonl")
    with pytest.raises(BadInput, match=r"unsupported extension '\.yaml'"):
        load_problems(write_lines(tmp_path / "p.yaml", "{}"))
    with pytest.raises(BadInput, match="not valid UTF-8"):
        (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
        load_problems(tmp_path / "bin.jsonl")


def test_empty_jsonl_has_no_problems(tmp_path):
    path = write_lines(tmp_path / "p.jsonl", "")
    assert load_problems(path) == []
    with pytest.raises(BadInput, match="found 0"):
        load_problem(path)


def _row(**changes):
    return {k: v for k, v in (call_problem().to_dict() | changes).items() if v is not ...}


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        (_row(statement=...), "missing required field 'statement'"),
        (_row(id=...), "missing required field 'id'"),
        (_row(id=7), "field 'id'"),
        (_row(kind="batch"), "field 'kind'"),
        (_row(pubic_tests=[]), "unknown field 'pubic_tests'"),
        (_row(time_limit_s="5"), "'time_limit_s'"),
        (_row(public_tests={"call": "f()"}), "field 'public_tests' must be a list"),
        (_row(hidden_tests=[{"call": "add(1, 1)"}]), r"hidden_tests\[0\]: missing required field 'expected'"),
        (_row(hidden_tests=[{"call": "add()", "expected": 1, "bogus": 1}]), r"hidden_tests\[0\]: unknown field"),
        (_row(hidden_tests=["assert add(1, 1) == 2"]), r"hidden_tests\[0\]: expected a JSON object"),
        (["not", "an", "object"], "expected a JSON object, got list"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path, row, fragment):
    good = json.dumps(stdio_problem().to_dict())
    path = write_lines(tmp_path / "p.jsonl", good, json.dumps(row))
    with pytest.raises(BadInput, match=fragment) as info:
        load_problems(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line 2")
    assert "\n" not in message


def test_schema_doc_examples_load(tmp_path):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "problem-schema.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", doc, re.S)
    assert len(blocks) == 2
    path = write_lines(tmp_path / "doc.jsonl", *(json.dumps(json.loads(b)) for b in blocks))
    call, stdio = load_problems(path)
    assert call.hidden_tests[0].expected == 9 and call.public_tests[0].style == "assert"
    assert stdio.hidden_tests[0].outputs == ["1\n", "-1\n"]


# The schema layer: what every other part of the package builds on. It imports only from itself (and the standard
# library), never from execution/ or any other part above it.
SCHEMA = ("solidcoder.errors", "solidcoder.languages", "solidcoder.matching", "solidcoder.parsing",
          "solidcoder.problem", "solidcoder.wording")  # wording: plurals, imports nothing


def imported_modules(module: str) -> set[str]:
    """Every name `module` imports, at any depth (imports inside functions too), as dotted names."""
    path = Path(solidcoder.__file__).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(filter(None, ["solidcoder" if node.level else "", node.module or ""]))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def in_schema(name: str) -> bool:
    return name == "solidcoder" or any(name == m or name.startswith(m + ".") for m in SCHEMA)


@pytest.mark.parametrize("module", SCHEMA)
def test_the_schema_imports_nothing_from_the_layers_above_it(module):
    upward = sorted(n for n in imported_modules(module) if n.startswith("solidcoder.") and not in_schema(n))
    assert upward == []


def test_execution_reads_the_matching_rules_from_the_schema():
    assert {"solidcoder.matching.MODES", "solidcoder.matching.DEFAULT_TOLERANCE"} <= imported_modules(
        "solidcoder.execution.inside.compare")
    assert not in_schema("solidcoder.execution.inside.compare") and in_schema("solidcoder.problem.TestCase")


def test_a_call_problem_in_another_language_is_refused_and_a_stdio_one_is_taken():
    with pytest.raises(ValueError, match="standard input and output only"):
        Problem(id="p", kind="call", statement="s", entry_point="f", language="cpp")
    assert Problem(id="p", kind="stdio", statement="s", language="cpp").language == "cpp"
