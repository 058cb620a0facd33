"""Real GRPO steps on a tiny Qwen2-architecture model built in the test (CPU, no download), real sandbox.

The tokenizer's vocabulary holds a few whole programs as single tokens, so a one-token completion is a program:
right, wrong-but-running (semantic failures, the alignment builder's input) or crashing. A random policy then
produces every kind of rollout in the first step.
"""

from __future__ import annotations

import ast
import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("trl")

from tiny_models import PROGRAMS, program_tokenizer, tiny_policy  # noqa: E402

from solidcoder.problem import Problem, TestCase, dump_problems  # noqa: E402


def problems() -> list[Problem]:
    def call(expr, value):
        return TestCase(kind="call", call=expr, expected=value)

    return [
        Problem("add", "call", "Return a + b.", entry_point="add", public_tests=[call("add(2, 3)", 5)]),
        Problem("add1", "call", "Return a + b + 1.", entry_point="add", public_tests=[call("add(4, 3)", 8)]),
    ]


def only_programs(tokenizer) -> dict:
    """Generation kwargs that let the policy emit nothing but program tokens."""
    programs = set(tokenizer.convert_tokens_to_ids(PROGRAMS))
    return {"generation_kwargs": {"suppress_tokens": [i for i in range(len(tokenizer)) if i not in programs]}}


def tiny_config(tmp_path, tokenizer, **changes):
    from solidcoder.train.config import TrainConfig

    values = dict(grpo_overrides=only_programs(tokenizer), model="tiny", data="", out=str(tmp_path / "run"),
                  alpha=0.5, learning_rate=1e-3, num_generations=2, prompt_batch_size=4, mini_batch_size=4,
                  micro_batch_size=8, max_completion_length=1, max_steps=2, save_steps=1000, temperature=1.0, seed=0)
    values.update(changes)
    return TrainConfig(**values).validate()


def test_two_grpo_steps_mix_alignment_prompts_after_failed_rollouts(tmp_path, sandbox_pool, capsys):
    from solidcoder.train.metrics import StepTimer
    from solidcoder.train.trainer import build_components, make_trainer

    tokenizer = program_tokenizer()
    cfg = tiny_config(tmp_path, tokenizer)
    parts = build_components(cfg, sandbox_pool, problems())
    seen = []
    original = parts.mixer.mix

    def recording_mix(rows, num_generations):  # record exactly what went to generation
        out = original(rows, num_generations)
        seen.append((len(parts.buffer), [dict(r) for r in out]))
        return out

    parts.mixer.mix = recording_mix
    trainer = make_trainer(cfg, tiny_policy(tokenizer), tokenizer, parts, StepTimer())
    trainer.train()

    assert len(seen) == 2
    (buffer_before_1, batch1), (buffer_before_2, batch2) = seen
    assert buffer_before_1 == 0 and {r["task"] for r in batch1} == {"code"}  # nothing to align yet
    assert parts.code_reward.stats.judged >= 8 and buffer_before_2 >= 2  # step 1's failures built tasks
    for batch in (batch1, batch2):  # groups: 2 consecutive rows with one prompt and one task
        groups = [batch[i:i + 2] for i in range(0, len(batch), 2)]
        assert all(g[0]["prompt"] == g[1]["prompt"] and g[0]["task"] == g[1]["task"] for g in groups)
    tasks2 = [batch2[i]["task"] for i in range(0, len(batch2), 2)]
    assert tasks2.count("alignment") == 2 and tasks2.count("code") == 2  # alpha = 0.5 of 4 groups
    payload = json.loads(next(r["payload"] for r in batch2 if r["task"] == "alignment"))
    assert payload["problem_id"] in {"add", "add1"} and payload["truth"]
    assert "[ANSWER]" in next(r for r in batch2 if r["task"] == "alignment")["prompt"][-1]["content"]

    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    assert records[1]["alignment_fraction"] == 0.5 and records[1]["buffer_size"] >= 2
    assert all(r["generation_s"] > 0 and r["reward_s"] > 0 and r["update_s"] > 0 for r in records)
    assert records[1]["alignment_reward"] is not None and records[0]["code_pass_rate"] is not None
    generated = cfg.prompt_batch_size * cfg.num_generations * cfg.max_completion_length  # one program token each
    assert all(r["generation_tokens_per_s"] * r["generation_s"] == pytest.approx(generated) for r in records)
    import torch

    on_gpu = torch.cuda.is_available() and torch.cuda.is_initialized()
    for key in ("gpu_mem_allocated_gib", "gpu_mem_reserved_gib"):
        assert all((r[key] > 0) if on_gpu else (key in r and r[key] is None) for r in records)
    printed = [ast.literal_eval(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{'loss'")]
    assert len(printed) == 2 and all(p["gpu_mem_allocated_gib"] is None or on_gpu for p in printed)  # progress lines
    assert all(float(p["generation_tokens_per_s"]) == pytest.approx(r["generation_tokens_per_s"], rel=0.01)
               for p, r in zip(printed, records, strict=True))


def test_step_timer_rates_the_tokens_of_the_generation_it_timed():
    import time

    from solidcoder.train.metrics import StepTimer

    timer = StepTimer()
    with timer.measure("generation"):
        time.sleep(0.05)
    timer.add_tokens(300)
    with timer.measure("reward"):
        time.sleep(0.01)
    first, second = timer.lap(), timer.lap()
    assert first["generation_tokens_per_s"] == pytest.approx(300 / first["generation_s"])
    assert first["generation_s"] >= 0.05 and first["update_s"] < first["step_s"]
    assert second["generation_tokens_per_s"] is None and second["generation_s"] == 0.0  # a step that only updated


def test_plain_grpo_baseline_from_the_command_line(tmp_path):
    """`--alpha 0` through the CLI: a saved model directory, a problem file, checkpoints and metrics written."""
    from typer.testing import CliRunner

    from solidcoder.cli import app

    tokenizer = program_tokenizer()
    tiny_policy(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    dump_problems(problems(), tmp_path / "train.jsonl")
    cfg_file = tmp_path / "tiny.yaml"
    cfg_file.write_text("num_generations: 2\nprompt_batch_size: 2\nmini_batch_size: 2\nmicro_batch_size: 4\n"
                        "max_completion_length: 1\nsave_steps: 1\nsandbox_workers: 1\n")
    args = ["train", "coderl+", "--model", str(tmp_path / "model"), "--data", str(tmp_path / "train.jsonl"),
            "--run-dir", str(tmp_path / "out"), "--config", str(cfg_file), "--alpha", "0", "--max-steps", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "out" / "metrics.jsonl").read_text().splitlines()[0])
    assert record["alignment_groups_total"] == 0 and record["buffer_size"] == 0 and record["tasks_built"] == 0
    assert (tmp_path / "out" / "final" / "config.json").is_file()
    assert (tmp_path / "out" / "checkpoints" / "checkpoint-1").is_dir()


def test_the_memory_check_sees_the_runs_batches_and_longest_prompt(tmp_path, sandbox_pool):
    """The shape the GPU memory check estimates from (it checks nothing on a CPU, so it is built here directly)."""
    from solidcoder.train.memory import estimate
    from solidcoder.train.trainer import build_components, check_gpu_memory, model_shape, run_shape

    tokenizer, cfg = program_tokenizer(), tiny_config(tmp_path, program_tokenizer(), max_completion_length=3)
    parts, model = build_components(cfg, sandbox_pool, problems()), tiny_policy(tokenizer)
    shape = run_shape(cfg, model, tokenizer, parts)
    texts = [tokenizer.apply_chat_template(parts.renderer.code_messages(p), add_generation_prompt=True, tokenize=False)
             for p in problems()]
    longest = max(len(tokenizer(text, add_special_tokens=False)["input_ids"]) for text in texts)
    assert (shape.generation_batch, shape.micro_batch, shape.completion_tokens) == (8, 8, 3)
    assert shape.prompt_tokens == longest + 3 and shape.param_bytes == 4  # alignment prompts quote a program
    assert model_shape(model).parameters == sum(p.numel() for p in model.parameters())
    assert estimate(model_shape(model), shape).peak > 16 * model_shape(model).parameters
    check_gpu_memory(cfg, model, tokenizer, parts)  # a CPU run is never refused
