"""GPU memory of a CodeRL+ run: the allocator default, and a model of what one training process holds at its peak.

`default_allocator()` turns on torch's expandable segments (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`)
unless the user set an allocator variable; the train commands call it before anything imports torch, since torch
reads the variable once, when CUDA starts. With the default caching allocator the generation batch's growing KV
cache leaves blocks that no later request fits: on an H200 a run that used 25.5 GiB held 78.8 GiB after 2 steps.

`estimate(model, run)` adds up the terms of docs/training.md ("Memory model"): weights, gradients and optimizer
state; the KV cache of the generation batch (transformers' `generate`); a micro-batch's activations and log-prob
tiles. The peak is the larger of the generation phase and the training phase. Activation bytes per token and layer
were measured on CPU by counting the tensors autograd saves for Llama/Qwen2 layers (`saved_tensors_hooks`), with
SDPA attention; GPU kernels may save a little more or less. No torch import here: the train commands use this
module before torch starts.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass, fields

from solidcoder.errors import BadInput

ALLOCATOR_VARIABLES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")
EXPANDABLE_SEGMENTS = "expandable_segments:True"
GIB = 2**30
# Bytes autograd saves per token and layer, measured on CPU for Llama/Qwen2 layers with SDPA attention, as
# (x hidden, x (attention width + intermediate)) per precision: bfloat16 weights, float32 weights, and bfloat16
# autocast over float32 weights (whose residual stream and norms stay float32). Each layer also keeps its
# attention mask as a sequence x sequence tensor in the compute dtype.
ACTIVATION_COEFFICIENTS = {"bf16": (16, 8), "fp32": (24, 16), "autocast": (26, 8)}
KV_PAIR_BYTES = {"bf16": 4, "fp32": 8, "autocast": 6}  # under autocast rotary embedding leaves keys float32
LOGPROB_TILE = (4096, 32768)  # TRL's fused LM head projects [tokens x vocabulary] tiles of at most this shape


def default_allocator(environ: MutableMapping[str, str] | None = None) -> str:
    """Sets PYTORCH_CUDA_ALLOC_CONF to expandable segments unless one of torch's allocator variables is set (a user's
    value always wins); returns the setting in force. Call it before torch initialises CUDA."""
    env = os.environ if environ is None else environ
    chosen = next((name for name in ALLOCATOR_VARIABLES if name in env), None)
    if chosen is not None:
        return env[chosen]
    env["PYTORCH_CUDA_ALLOC_CONF"] = EXPANDABLE_SEGMENTS
    return EXPANDABLE_SEGMENTS


@dataclass(frozen=True)
class ModelShape:
    """The sizes of a decoder-only transformer that memory depends on."""

    parameters: int
    layers: int
    hidden: int
    intermediate: int
    attention_width: int  # query heads x head dimension
    kv_width: int  # key/value heads x head dimension
    vocab: int

    @classmethod
    def from_config(cls, config, parameters: int) -> ModelShape:
        """From a transformers config (Llama, Qwen2, Mistral and the like) and the model's parameter count."""
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        kv_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        return cls(parameters, config.num_hidden_layers, config.hidden_size, config.intermediate_size,
                   config.num_attention_heads * head_dim, kv_heads * head_dim, config.vocab_size)


SMOLLM2_135M = ModelShape(134_515_008, 30, 576, 1536, 9 * 64, 3 * 64, 49_152)
QWEN25_CODER_7B = ModelShape(7_615_616_512, 28, 3584, 18_944, 28 * 128, 4 * 128, 152_064)


@dataclass(frozen=True)
class RunShape:
    """What one training process does: batch sizes, lengths, precision and where the optimizer state lives."""

    generation_batch: int  # completions one process generates at once (prompts x rollouts / processes)
    micro_batch: int  # completions per forward and backward
    prompt_tokens: int  # the longest prompt (prompts are left-padded to it)
    completion_tokens: int  # the completion cap
    param_bytes: int = 4  # 4: float32 weights (with --bf16: bfloat16 autocast over them); 2: bfloat16 weights
    autocast: bool = True  # bfloat16 autocast over float32 weights (--bf16 with a float32 model)
    master_weights: bool = False  # float32 master weights and moments beside bfloat16 weights (DeepSpeed)
    optimizer_offload: bool = False  # optimizer state (and master weights) in host memory (DeepSpeed offload)
    shards: int = 1  # ZeRO-3 processes sharing weights, gradients and optimizer state
    reference_model: bool = False  # a KL term (beta > 0) keeps a frozen copy of the weights
    gradient_checkpointing: bool = False
    vllm: bool = False  # generation in vLLM: its KV cache lives in vLLM's own share of the card

    @property
    def sequence(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def precision(self) -> str:
        if self.param_bytes == 2:
            return "bf16"
        return "autocast" if self.autocast else "fp32"


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes of each term; `peak` is the larger of the generation and the training phase."""

    weights: int
    gradients: int
    optimizer: int
    kv_cache: int
    activations: int
    logprob_tiles: int

    @property
    def generation_phase(self) -> int:  # gradients are freed after each update; the optimizer state stays
        return self.weights + self.optimizer + self.kv_cache

    @property
    def training_phase(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations + self.logprob_tiles

    @property
    def peak(self) -> int:
        return max(self.generation_phase, self.training_phase)

    def largest(self) -> str:
        return max((f.name for f in fields(self)), key=lambda name: getattr(self, name))

    def describe(self) -> str:
        terms = ", ".join(f"{f.name} {getattr(self, f.name) / GIB:.1f}" for f in fields(self))
        return f"peak {self.peak / GIB:.1f} GiB ({terms} GiB)"


def estimate(model: ModelShape, run: RunShape) -> MemoryEstimate:
    """The memory model of docs/training.md for one process."""
    n, copies = model.parameters, 2 if run.reference_model else 1
    return MemoryEstimate(weights=copies * n * run.param_bytes // run.shards,
                          gradients=n * run.param_bytes // run.shards,
                          optimizer=0 if run.optimizer_offload else n * optimizer_bytes(run) // run.shards,
                          kv_cache=0 if run.vllm else kv_cache_bytes(model, run),
                          activations=activation_bytes(model, run),
                          logprob_tiles=logprob_tile_bytes(model, run))


def optimizer_bytes(run: RunShape) -> int:
    """AdamW per parameter: two moments in the weights' dtype (torch), or float32 moments plus float32 master
    weights (DeepSpeed's mixed precision)."""
    return 12 if run.master_weights else 2 * run.param_bytes


def kv_cache_bytes(model: ModelShape, run: RunShape) -> int:
    """Keys and values of every layer for the whole generation batch at full length (transformers' `generate`
    keeps finished rows to the end)."""
    return run.generation_batch * run.sequence * model.layers * model.kv_width * KV_PAIR_BYTES[run.precision]


def activation_bytes_per_token(model: ModelShape, run: RunShape) -> int:
    """Bytes autograd keeps per token of one sequence for the backward pass: `ACTIVATION_COEFFICIENTS` and the
    attention mask per layer. With gradient checkpointing only each layer's input stays, and one layer at a time is
    recomputed."""
    per_hidden, per_width = ACTIVATION_COEFFICIENTS[run.precision]
    mask = run.sequence * (4 if run.precision == "fp32" else 2)
    layer = per_hidden * model.hidden + per_width * (model.attention_width + model.intermediate) + mask
    if run.gradient_checkpointing:
        residual = 2 if run.precision == "bf16" else 4
        return model.layers * model.hidden * residual + layer
    return model.layers * layer


def activation_bytes(model: ModelShape, run: RunShape) -> int:
    """A micro-batch's saved activations; under autocast also the bfloat16 copies of the weights it keeps."""
    copies = 2 * model.parameters if run.precision == "autocast" else 0
    return run.micro_batch * run.sequence * activation_bytes_per_token(model, run) + copies


def logprob_tile_bytes(model: ModelShape, run: RunShape) -> int:
    """TRL's fused LM head never holds a micro-batch's [tokens x vocabulary] logits, only one tile of them (in the
    compute dtype) and its gradient."""
    tokens = min(run.micro_batch * run.completion_tokens, LOGPROB_TILE[0])
    return 2 * tokens * min(model.vocab, LOGPROB_TILE[1]) * (4 if run.precision == "fp32" else 2)


def full_logits_bytes(model: ModelShape, run: RunShape) -> int:
    """What a micro-batch's float32 logits over the completion would take if they were materialized (TRL before
    the fused LM head, or a custom loss): micro-batch x completion tokens x vocabulary x 4."""
    return run.micro_batch * run.completion_tokens * model.vocab * 4


def check_fits(memory: MemoryEstimate, card_bytes: int) -> None:
    """BadInput before training when the estimate exceeds what the card leaves the trainer."""
    if memory.peak > card_bytes:
        raise BadInput(f"this run needs about {memory.peak / GIB:.1f} GiB of GPU memory but the card leaves training "
                       f"{card_bytes / GIB:.1f} GiB: {memory.describe()}. Lower micro_batch_size (activations), "
                       "prompt_batch_size or max_completion_length (KV cache), turn on gradient_checkpointing or "
                       "--vllm, or set check_memory: false to try anyway (docs/training.md, Memory model)")
