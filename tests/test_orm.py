"""ORM training and scoring for real, on a tiny Qwen2-architecture model built in the test (CPU, no download)."""

from __future__ import annotations

import asyncio

import pytest

from solidcoder.prompting import PromptLibrary
from solidcoder.verify.orm import OrmScorer, OrmTrainConfig, build_pairs, token_budget_batches, train_orm
from solidcoder.verify.rank import Candidate

pytest.importorskip("torch")
pytest.importorskip("trl")

from tiny_models import tiny_reward_model, tiny_tokenizer  # noqa: E402

ADD = "Add two numbers."
ROWS = [
    {"problem_id": "add", "statement": ADD, "code": "def add(a, b):\n    return a + b", "correct": True},
    {"problem_id": "add", "statement": ADD, "code": "def add(a, b):\n    return b + a", "correct": True},
    {"problem_id": "add", "statement": ADD, "code": "def add(a, b):\n    return a - b", "correct": False},
    {"problem_id": "add", "statement": ADD, "code": "def add(a, b)\n    return a", "correct": False},
    {"problem_id": "neg", "statement": "Negate.", "code": "def neg(a):\n    return -a", "correct": True},
    {"problem_id": "one", "statement": "Only wrong.", "code": "def f():\n    return 0", "correct": False},
]


def test_pairs_only_from_problems_with_both_outcomes_and_no_syntax_errors():
    pairs = build_pairs(ROWS, PromptLibrary.from_env())
    assert len(pairs) == 2  # add: 2 correct x 1 parsable incorrect; neg and one have a single side
    assert all("a - b" in p["rejected"] and "a - b" not in p["chosen"] for p in pairs)


def test_pairs_cap_each_side():
    rows = [{"problem_id": "p", "statement": "s", "code": f"x = {i}", "correct": i % 2 == 0} for i in range(30)]
    pairs = build_pairs(rows, PromptLibrary.from_env(), max_per_side=6)
    assert len(pairs) == 36


def test_token_budget_batches_pack_short_texts_and_isolate_long_ones():
    batches = token_budget_batches([10, 500, 12, 11, 9], max_tokens=40)
    assert sorted(len(b) for b in batches) == [1, 1, 3]
    assert [1] in batches  # the 500-token text runs alone
    assert all(len(b) * max([10, 500, 12, 11, 9][i] for i in b) <= 40 or len(b) == 1 for b in batches)


def test_two_training_steps_then_scoring(tmp_path):
    tokenizer = tiny_tokenizer()
    model = tiny_reward_model(tokenizer)
    pairs = build_pairs(ROWS, PromptLibrary.from_env()) * 4
    config = OrmTrainConfig(batch_size=2, gradient_accumulation_steps=1, max_steps=2, max_length=256,
                            learning_rate=1e-3)
    before = [p.detach().clone() for p in model.parameters()]
    out = train_orm(pairs, model, tokenizer, tmp_path / "orm", config)
    assert any(not (a == b.detach()).all() for a, b in zip(before, model.parameters(), strict=True))
    scorer = OrmScorer(out, max_tokens_per_batch=600, max_length=256)
    from solidcoder.problem import Problem

    problem = Problem(id="add", kind="call", statement="Add two numbers.", entry_point="add")
    candidates = [Candidate(r["code"]) for r in ROWS[:3]]
    scores = asyncio.run(scorer.scores(problem, candidates))
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    # batching must not change a score: one text alone scores the same as inside a packed batch
    alone = scorer.score_texts([scorer.library.render("verify/orm", problem=problem.statement,
                                                      code=candidates[1].code)])
    assert alone[0] == pytest.approx(scores[1], abs=1e-4)


def test_train_orm_command_from_bench_rows(tmp_path, humaneval_file):
    import json
    import subprocess
    import sys

    tokenizer = tiny_tokenizer()
    base = tmp_path / "base"
    tiny_reward_model(tokenizer).save_pretrained(base)
    tokenizer.save_pretrained(base)
    row = json.loads(humaneval_file.read_text().splitlines()[0])
    good = row["prompt"] + row["canonical_solution"]
    bench_rows = [{"id": row["task_id"], "code": good, "passed": True},
                  {"id": row["task_id"], "code": row["prompt"] + "    return False\n", "passed": False},
                  {"id": row["task_id"], "code": row["prompt"] + "    return True\n", "passed": False}]
    data = tmp_path / "results.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in bench_rows))
    out = tmp_path / "orm"
    command = [sys.executable, "-m", "solidcoder", "train", "orm", str(data), "--model", str(base),
               "--run-dir", str(out), "--data-file", str(humaneval_file), "--max-steps", "2", "--lr", "1e-3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "on 2 pairs" in done.stdout
    scorer = OrmScorer(out)
    assert len(scorer.score_texts(["a", "bb"])) == 2
    paper = tmp_path / "orm-paper"  # the paper preset trains one ORM per seed
    command[command.index(str(out))] = str(paper)
    done = subprocess.run([*command, "--preset", "paper"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(d.name for d in paper.iterdir()) == ["seed-0", "seed-1", "seed-2"]
    assert len(OrmScorer(paper / "seed-2").score_texts(["a"])) == 1


def test_the_paper_preset_sets_the_papers_training(tmp_path):
    from solidcoder.verify.orm import orm_preset, reward_args

    config = orm_preset("paper")
    args = reward_args(config, tmp_path)
    assert (args.learning_rate, args.lr_scheduler_type.value, args.warmup_steps, args.num_train_epochs) == (
        5e-6, "cosine", 0.1, 2.0)  # a warmup_steps float below 1 is a share of the steps
    assert args.per_device_train_batch_size * args.gradient_accumulation_steps == 64
    assert (config.max_per_side, config.seeds) == (6, (0, 1, 2))
    default = reward_args(orm_preset("default"), tmp_path)
    assert (default.learning_rate, default.lr_scheduler_type.value, default.warmup_steps) == (1e-5, "linear", 0)


def test_training_on_a_cpu_runs_in_float32(tmp_path):
    """TRL defaults to bfloat16, which a CPU without bfloat16 units runs 10x slower; this machine has no GPU."""
    import torch

    from solidcoder.verify.orm import orm_preset, reward_args

    assert not torch.cuda.is_available()
    args = reward_args(orm_preset("default"), tmp_path)
    assert (args.bf16, args.fp16, args.use_cpu) == (False, False, True)


def test_flags_override_a_preset_and_an_unknown_preset_is_bad_input():
    from solidcoder.errors import BadInput
    from solidcoder.verify.orm import orm_preset

    config = orm_preset("paper", learning_rate=1e-4, max_steps=None)
    assert (config.learning_rate, config.epochs, config.max_steps) == (1e-4, 2.0, -1)
    with pytest.raises(BadInput, match="--preset"):
        orm_preset("paperr")


def test_train_orm_command_rejects_unknown_problem(tmp_path, humaneval_file):
    import subprocess
    import sys

    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": "Nope/1", "code": "x = 1", "passed": true}\n')
    command = [sys.executable, "-m", "solidcoder", "train", "orm", str(data), "--model", "unused",
               "--run-dir", str(tmp_path / "o"), "--data-file", str(humaneval_file)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "Nope/1" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def _orm_preferring(good: str, bad: str, statement: str, out):
    """A tiny ORM trained until it scores `good` above `bad` for `statement` (checked here, not assumed)."""
    library = PromptLibrary.from_env()
    tokenizer = tiny_tokenizer()
    pairs = [{"chosen": library.render("verify/orm", problem=statement, code=good),
              "rejected": library.render("verify/orm", problem=statement, code=bad)}] * 8
    config = OrmTrainConfig(batch_size=2, gradient_accumulation_steps=1, max_steps=8, max_length=512,
                            learning_rate=1e-2)
    path = train_orm(pairs, tiny_reward_model(tokenizer), tokenizer, out, config)
    chosen, rejected = OrmScorer(path, max_length=512).score_texts([pairs[0]["chosen"], pairs[0]["rejected"]])
    assert chosen > rejected
    return path


def test_routings_orm_selector_answers_with_the_survivor_the_orm_prefers_over_the_majoritys(scripted_server,
                                                                                           sandbox_pool, tmp_path):
    from stage_router import BAD, GOOD, StageRouter
    from test_algorithm1 import ZERO_BUG
    from test_routed import ADD0, GENERATED, routed

    from solidcoder.stages.base import extract_code

    orm = _orm_preferring(extract_code(GOOD), extract_code(ZERO_BUG), ADD0.statement, tmp_path / "my-orm")
    # tier 0 fails; of the five samples, three ZERO_BUG (the majority's pick) and two GOOD pass the public test
    router = StageRouter(scripted_server).queue("strategies/direct", BAD, ZERO_BUG, ZERO_BUG, GOOD, ZERO_BUG, GOOD)
    row = routed(scripted_server, sandbox_pool, tmp_path, (ADD0,), strategy=f"solidcoder-routed:selector=orm,orm={orm}")
    assert row["passed"] and row["notes"]["tier"] == 1 and "if a else 0" not in row["code"]
    assert GENERATED not in router.seen and row["calls"] == 2  # the ORM costs no model call
