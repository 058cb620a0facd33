"""Training config: the paper defaults, overrides, validation, and the mapping onto TRL's batch arguments."""

from __future__ import annotations

import pytest

from solidcoder.errors import BadInput
from solidcoder.train.config import grpo_batch_geometry, load_config


def test_packaged_defaults_are_the_papers():
    cfg = load_config()
    assert (cfg.learning_rate, cfg.num_generations, cfg.prompt_batch_size, cfg.mini_batch_size) == (1e-6, 8, 128, 64)
    assert cfg.max_completion_length == 8192 and cfg.alpha == 0.4 and cfg.alignment_variant == "paper"


def test_paper_batches_map_to_two_updates_per_generation_batch():
    geometry = grpo_batch_geometry(load_config())
    assert geometry == {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 64,
                        "generation_batch_size": 1024}
    assert grpo_batch_geometry(load_config(), world_size=8)["gradient_accumulation_steps"] == 8


def test_file_then_options_override_and_errors_are_bad_input(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("alpha: 0.25\nmax_steps: 7\n")
    cfg = load_config(path, max_steps=3, alpha=None)
    assert cfg.alpha == 0.25 and cfg.max_steps == 3
    path.write_text("alpah: 0.2\n")
    with pytest.raises(BadInput, match="alpah"):
        load_config(path)
    with pytest.raises(BadInput, match="alpha"):
        load_config(None, alpha=1.5)
    with pytest.raises(BadInput, match="multiple"):
        grpo_batch_geometry(load_config(None, micro_batch_size=7))


def test_the_paper_preset_sets_the_papers_steps_kl_and_loss_form_in_trls_config(tmp_path):
    pytest.importorskip("trl", reason="the trainer is the train extra: pip install 'solidcoder[train]'")
    from solidcoder.train.trainer import grpo_config

    cfg = load_config(preset="paper", out=str(tmp_path))
    trl = grpo_config(cfg)
    assert (trl.max_steps, trl.beta, trl.loss_type) == (1000, 0.001, "grpo")
    assert cfg.buffer_capacity == 20000 and cfg.alpha == 0.4  # the alignment share: the paper's 1 - alpha
    default = grpo_config(load_config(out=str(tmp_path)))
    assert (default.max_steps, default.beta) == (100, 0.0) and default.loss_type != "grpo"


def test_a_config_file_adds_to_the_presets_trl_fields_and_an_unknown_preset_is_bad_input(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("grpo_overrides:\n  epsilon: 0.3\nmax_steps: 5\n")
    cfg = load_config(path, "paper")
    assert cfg.grpo_overrides == {"loss_type": "grpo", "epsilon": 0.3}
    assert cfg.max_steps == 5
    with pytest.raises(BadInput, match="preset 'papr'"):
        load_config(preset="papr")
