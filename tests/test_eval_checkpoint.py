"""A trained checkpoint (a transformers directory) evaluated by `solidcoder bench`, loaded in-process.

The checkpoint is a tiny Qwen2 whose generation config allows only whole-program tokens (see tiny_models), so
every reply is a real program: the test checks that the bench scores exactly what the model wrote.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import PROGRAMS, program_tokenizer, tiny_policy  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from solidcoder.cli import app  # noqa: E402
from solidcoder.models.base import Message  # noqa: E402
from solidcoder.models.factory import make_model  # noqa: E402
from solidcoder.problem import Problem, TestCase, dump_problems  # noqa: E402


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    tokenizer = program_tokenizer()
    model = tiny_policy(tokenizer)
    programs = set(tokenizer.convert_tokens_to_ids(PROGRAMS))
    model.generation_config.suppress_tokens = [i for i in range(len(tokenizer)) if i not in programs]
    path = tmp_path_factory.mktemp("ckpt") / "final"
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_checkpoint_directory_is_a_model_spec(checkpoint):
    model = make_model(str(checkpoint))
    reply = model.complete([Message("user", "Program add")], temperature=0, max_tokens=2)
    assert model.name == str(checkpoint) and reply.completion_tokens == 2 and reply.prompt_tokens > 2
    assert reply.text.replace(" ", "") in {(a + b).replace(" ", "") for a in PROGRAMS for b in PROGRAMS}
    again = model.complete([Message("user", "Program add")], temperature=0, max_tokens=2)
    assert again.text == reply.text  # greedy at temperature 0


def test_bench_scores_what_the_checkpoint_wrote(checkpoint, tmp_path, fixture_data):
    def call(expr, value):
        return TestCase(kind="call", call=expr, expected=value)

    problems = [Problem(f"add{i}", "call", "Return a + b.", entry_point="add", public_tests=[call("add(2, 3)", 5)],
                        hidden_tests=[call("add(2, 3)", 5), call("add(-4, 4)", 0)]) for i in range(2)]
    dump_problems(problems, tmp_path / "add.jsonl")
    common = ["--model", str(checkpoint), "--temperature", "0", "--max-tokens", "1", "--run-dir", str(tmp_path / "r")]
    result = CliRunner().invoke(app, ["bench", "--dataset", "humaneval", "--data-file", str(tmp_path / "add.jsonl"),
                                      "--strategy", "direct", *common])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["calls"] == 1 and r["completion_tokens"] == 1 for r in rows)
    for row in rows:
        written = next(p for p in PROGRAMS if p.split("\n", 1)[1].rsplit("\n", 1)[0].strip() == row["code"].strip())
        assert row["passed"] == (written == PROGRAMS[0])

    result = CliRunner().invoke(app, ["bench", "--dataset", "cruxeval", "--limit", "2", "--data-file",
                                      str(fixture_data / "cruxeval.jsonl"), *common])
    assert result.exit_code == 0, result.output
    crux = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()][2:]
    assert [r["dataset"] for r in crux] == ["cruxeval", "cruxeval"] and not any(r["passed"] for r in crux)
    assert all(r["predicted"] == "<no literal answer>" for r in crux)  # a program is not a literal


def test_a_directory_without_a_checkpoint_is_not_taken_for_one(tmp_path):
    result = CliRunner().invoke(app, ["bench", "--dataset", "humaneval", "--model", str(tmp_path),
                                      "--run-dir", str(tmp_path / "r")])
    assert result.exit_code == 2 and "not a transformers checkpoint" in result.output
    assert not (tmp_path / "r").exists()
