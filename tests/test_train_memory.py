"""GPU memory of training: the allocator default seen by torch in a fresh train process, the memory model against
real model sizes and against the tensors autograd really saves (CPU), and the fit check's error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solidcoder.errors import BadInput
from solidcoder.problem import Problem, dump_problems
from solidcoder.train.memory import (
    ALLOCATOR_VARIABLES,
    EXPANDABLE_SEGMENTS,
    GIB,
    QWEN25_CODER_7B,
    SMOLLM2_135M,
    ModelShape,
    RunShape,
    activation_bytes,
    check_fits,
    default_allocator,
    estimate,
)

ROOT = Path(__file__).resolve().parents[1]

# Runs a solidcoder command in this fresh process and reports PYTORCH_CUDA_ALLOC_CONF as it was when torch was
# first imported (torch reads it once, when CUDA starts, which is after that), and the command's exit code.
CHILD = """
import importlib.abc, json, os, sys
seen = {}
class FirstTorchImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and "torch" not in seen:
            seen["torch"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
        return None  # the ordinary finders import it
sys.meta_path.insert(0, FirstTorchImport())
from solidcoder.cli import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    seen["exit"] = exc.code
print(json.dumps(seen))
"""


def run_child(args: list[str], user_value: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ALLOCATOR_VARIABLES}
    if user_value is not None:
        env["PYTORCH_CUDA_ALLOC_CONF"] = user_value
    done = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


@pytest.mark.parametrize("user_value", [None, "expandable_segments:False"])
def test_train_coderl_plus_sets_expandable_segments_before_torch_unless_the_user_chose(tmp_path, user_value):
    pytest.importorskip("trl")
    dump_problems([Problem("untested", "call", "Return 1.", entry_point="f")], tmp_path / "data.jsonl")
    args = ["train", "coderl+", "--model", str(tmp_path / "model"), "--data", str(tmp_path / "data.jsonl"),
            "--run-dir", str(tmp_path / "run")]
    seen = run_child(args, user_value)
    assert seen["exit"] == 2 and "no problem with tests" in seen["stderr"]  # got past the trainer's import
    assert seen["torch"] == (user_value or EXPANDABLE_SEGMENTS)


def test_train_orm_sets_expandable_segments_before_torch(tmp_path):
    pytest.importorskip("trl")
    args = ["train", "orm", str(tmp_path / "missing.jsonl"), "--model", str(tmp_path / "model"), "--run-dir",
            str(tmp_path / "orm"), "--dataset", "mbpp", "--data-file", str(ROOT / "tests/fixtures/data/mbpp.jsonl")]
    seen = run_child(args, None)
    assert seen["exit"] == 2 and "missing.jsonl" in seen["stderr"]
    assert seen["torch"] == EXPANDABLE_SEGMENTS


def test_default_allocator_leaves_any_allocator_variable_the_user_set():
    env: dict[str, str] = {}
    assert default_allocator(env) == EXPANDABLE_SEGMENTS and env == {"PYTORCH_CUDA_ALLOC_CONF": EXPANDABLE_SEGMENTS}
    mine = {"PYTORCH_ALLOC_CONF": "max_split_size_mb:128"}
    assert default_allocator(mine) == "max_split_size_mb:128" and list(mine) == ["PYTORCH_ALLOC_CONF"]


@pytest.mark.parametrize(("known", "family", "sizes"), [
    (SMOLLM2_135M, "LlamaConfig", dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                                       num_attention_heads=9, num_key_value_heads=3, head_dim=64, vocab_size=49152,
                                       tie_word_embeddings=True)),
    (QWEN25_CODER_7B, "Qwen2Config", dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                                          num_attention_heads=28, num_key_value_heads=4, vocab_size=152064,
                                          tie_word_embeddings=False)),
])
def test_known_shapes_match_the_models_built_from_their_configs(known, family, sizes):
    torch = pytest.importorskip("torch")
    import transformers

    config = getattr(transformers, family)(**sizes)
    with torch.device("meta"):  # shapes only, no memory
        model = transformers.AutoModelForCausalLM.from_config(config)
    assert ModelShape.from_config(config, sum(p.numel() for p in model.parameters())) == known


def saved_bytes(model, tokens: int, autocast: bool) -> int:
    """Bytes of the distinct storages autograd saves for backward in one forward of 2 sequences, the parameters
    themselves left out (the weights term counts them)."""
    import torch

    ids = torch.randint(0, model.config.vocab_size, (2, tokens))
    mask = torch.ones_like(ids)
    mask[0, :3] = 0  # left padding, as in training
    storages = {}
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}

    def keep(tensor):
        if tensor.untyped_storage().data_ptr() not in parameters:
            storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t), torch.autocast("cpu", enabled=autocast):
        model.model(input_ids=ids, attention_mask=mask)
    return sum(storages.values())


@pytest.mark.parametrize(("param_bytes", "autocast"), [(2, False), (4, False), (4, True)])
def test_activation_term_is_what_autograd_saves_per_layer(param_bytes, autocast):
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    def model(layers):
        torch.manual_seed(0)
        config = LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=layers, num_attention_heads=4,
                             num_key_value_heads=2, head_dim=64, vocab_size=512, attn_implementation="sdpa")
        return LlamaForCausalLM(config).to(torch.bfloat16 if param_bytes == 2 else torch.float32)

    one, three = model(1), model(3)
    measured = saved_bytes(three, 200, autocast) - saved_bytes(one, 200, autocast)  # two layers' worth
    layer_params = sum(p.numel() for p in three.model.layers[0].parameters())
    shape = ModelShape(2 * layer_params, 2, 256, 512, 4 * 64, 2 * 64, 512)
    predicted = activation_bytes(shape, RunShape(2, 2, 100, 100, param_bytes=param_bytes, autocast=autocast))
    assert abs(predicted - measured) / measured < 0.05, (predicted, measured)


def test_estimate_names_the_terms_and_the_fit_check_fails_before_training():
    run = RunShape(generation_batch=256, micro_batch=8, prompt_tokens=244, completion_tokens=512)
    small = estimate(SMOLLM2_135M, run)
    assert small.weights == small.gradients == 4 * SMOLLM2_135M.parameters
    assert small.optimizer == 2 * small.weights and small.largest() == "kv_cache"
    assert estimate(SMOLLM2_135M, RunShape(256, 8, 244, 512, vllm=True)).kv_cache == 0
    checkpointed = estimate(SMOLLM2_135M, RunShape(256, 8, 244, 512, gradient_checkpointing=True))
    assert checkpointed.activations < small.activations / 5
    check_fits(small, 80 * GIB)
    full = estimate(QWEN25_CODER_7B, run)  # float32 weights with AdamW: 16 bytes a parameter
    assert full.weights + full.gradients + full.optimizer == 16 * QWEN25_CODER_7B.parameters
    with pytest.raises(BadInput, match="micro_batch_size.*check_memory: false"):
        check_fits(full, 80 * GIB)
