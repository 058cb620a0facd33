"""CodeRL+ training with TRL's GRPOTrainer: code generation plus execution-semantics alignment in one run.

Two reward functions share the batch: `CodeReward` scores code rows (Eq. 4) and feeds the policy's failed
programs to the alignment task builder; `AlignmentReward` scores alignment rows (Eq. 5); each returns None for
the other task's rows. `CodeRLPlusTrainer` adds three small hooks to GRPOTrainer: it lets the `PromptMixer`
swap alignment groups into each generation batch right before generation, and it times generation and reward
computation and counts the completion tokens generated for the metrics log. With `alpha=0` no alignment prompt is
ever mixed in: plain GRPO.

`run_training(cfg)` does it all: load problems and model, start the sandbox executor (`cfg.executor`: the local
pool, or Ray actors across a cluster, the same rewards either way), train, save checkpoints under
`OUT/checkpoints`, the final model under `OUT/final` and the metrics under `OUT/metrics.jsonl`. On a GPU it first
estimates the run's peak memory (`solidcoder.train.memory`) and stops with BadInput when that exceeds the card, so
a batch that cannot fit fails before the first step rather than with an out-of-memory error mid-run.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trl import GRPOConfig, GRPOTrainer

from solidcoder.errors import BadInput
from solidcoder.execution.executor import Executor
from solidcoder.execution.judge import Judge
from solidcoder.problem import Problem, load_problems
from solidcoder.prompting import PromptLibrary
from solidcoder.train.alignment import (
    AlignmentTaskBuilder,
    BufferFeeder,
    TaskBuffer,
    TaskBufferConfig,
    TaskBuilderConfig,
)
from solidcoder.train.alignment_reward import AlignmentReward, AlignmentRewardConfig, AlignmentScorer
from solidcoder.train.code_reward import CodeReward, CodeRewardConfig
from solidcoder.train.config import TrainConfig, grpo_batch_geometry
from solidcoder.train.memory import ModelShape, RunShape, check_fits, estimate
from solidcoder.train.metrics import MetricsLogger, StepTimer
from solidcoder.train.mixing import MixConfig, PromptMixer, PromptRenderer, code_prompt_stream

log = logging.getLogger("solidcoder.train")


class CodeRLPlusTrainer(GRPOTrainer):
    """GRPOTrainer whose generation batches pass through the prompt mixer, with phase timing."""

    def __init__(self, *args: Any, mixer: PromptMixer, timer: StepTimer, **kwargs: Any) -> None:
        self.mixer, self.timer = mixer, timer
        super().__init__(*args, **kwargs)

    def _generate_and_score_completions(self, inputs):
        if self.model.training:
            inputs = self.mixer.mix(list(inputs), self.num_generations)
        return super()._generate_and_score_completions(inputs)

    def _generate(self, prompts):
        with self.timer.measure("generation"):
            generated = super()._generate(prompts)
        self.timer.add_tokens(sum(len(ids) for ids in generated[1]))  # (prompt_ids, completion_ids, ...)
        return generated

    def _calculate_rewards(self, *args, **kwargs):
        with self.timer.measure("reward"):
            return super()._calculate_rewards(*args, **kwargs)


@dataclass
class Components:
    """The non-model parts of a run, wired together."""

    problems: dict[str, Problem]
    buffer: TaskBuffer
    feeder: BufferFeeder
    code_reward: CodeReward
    alignment_reward: AlignmentReward
    renderer: PromptRenderer
    mixer: PromptMixer

    def live_figures(self) -> dict[str, Any]:
        code, align = self.code_reward.stats, self.alignment_reward.last_batch
        batch = code.last_batch
        return {"buffer_size": len(self.buffer), "tasks_built": self.feeder.built,
                "alignment_fraction": self.mixer.stats.last_fraction,
                "alignment_groups_total": self.mixer.stats.alignment_groups, "groups_total": self.mixer.stats.groups,
                "code_pass_rate": batch["code_passed"] / batch["code_rows"] if batch.get("code_rows") else None,
                "alignment_reward": align.get("alignment_reward") if align.get("alignment_rows") else None,
                "sandbox_errors_total": code.sandbox_errors}


def build_components(cfg: TrainConfig, pool: Executor, problems: list[Problem],
                     library: PromptLibrary | None = None) -> Components:
    by_id = {p.id: p for p in problems}
    released = cfg.alignment_variant == "released"
    builder_cfg = TaskBuilderConfig(max_variables=3 if released else cfg.max_variables, module_only=released,
                                    max_container_len=cfg.max_container_len)
    buffer = TaskBuffer(TaskBufferConfig(cfg.buffer_capacity, cfg.seed))
    feeder = BufferFeeder(AlignmentTaskBuilder(pool, builder_cfg), buffer)
    observers = [feeder] if cfg.alpha > 0 else []  # plain GRPO builds no tasks
    code_reward = CodeReward(Judge(pool), by_id, observers, CodeRewardConfig(hidden_tests=cfg.hidden_tests))
    scorer = AlignmentScorer(AlignmentRewardConfig(variant=cfg.alignment_variant))
    renderer = PromptRenderer(library or PromptLibrary.from_env(), cfg.alignment_variant, cfg.alignment_include_problem)
    mixer = PromptMixer(buffer, renderer, by_id, MixConfig(alpha=cfg.alpha, seed=cfg.seed))
    return Components(by_id, buffer, feeder, code_reward, AlignmentReward(scorer), renderer, mixer)


def grpo_config(cfg: TrainConfig, world_size: int = 1) -> GRPOConfig:
    """TRL arguments for `cfg` (paper batch geometry, logging every step, no shuffling of the stream)."""
    args = dict(output_dir=str(Path(cfg.out) / "checkpoints"), learning_rate=cfg.learning_rate,
                num_generations=cfg.num_generations, max_completion_length=cfg.max_completion_length,
                temperature=cfg.temperature, beta=cfg.beta, max_steps=cfg.max_steps, save_steps=cfg.save_steps,
                seed=cfg.seed, logging_steps=1, report_to=[], shuffle_dataset=False, remove_unused_columns=False,
                bf16=cfg.bf16, gradient_checkpointing=cfg.gradient_checkpointing, use_vllm=cfg.use_vllm,
                vllm_mode=cfg.vllm_mode, vllm_gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
                **grpo_batch_geometry(cfg, world_size))
    args.update(cfg.grpo_overrides)
    return GRPOConfig(**args)


def make_trainer(cfg: TrainConfig, model, tokenizer, parts: Components, timer: StepTimer) -> CodeRLPlusTrainer:
    dataset = code_prompt_stream(list(parts.problems.values()), parts.renderer, cfg.seed)
    logger = MetricsLogger(Path(cfg.out) / "metrics.jsonl", timer, parts.live_figures)
    return CodeRLPlusTrainer(model=model, processing_class=tokenizer, args=grpo_config(cfg, _world_size()),
                             train_dataset=dataset, reward_funcs=[parts.code_reward, parts.alignment_reward],
                             callbacks=[logger], mixer=parts.mixer, timer=timer)


def load_model(cfg: TrainConfig):
    """Model and left-padding tokenizer from a hub name, a directory, or a GGUF file (dequantized to float)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, gguf = cfg.model, cfg.gguf_file
    if gguf is None and source.endswith(".gguf"):
        source, gguf = str(Path(source).parent), Path(source).name
    extra = {"gguf_file": gguf} if gguf else {}
    tokenizer = AutoTokenizer.from_pretrained(source, **extra)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(source, **extra, **cfg.model_kwargs)
    return (_as_dense(model) if gguf else model), tokenizer


def _as_dense(model):
    """A GGUF model unpacked into float weights is an ordinary dense model: drop the quantizer so it can train."""
    import torch

    packed = [name for name, p in model.named_parameters() if not torch.is_floating_point(p)]
    if packed:
        raise BadInput(f"GGUF weights left packed ({packed[0]}, ...); load with dequantization to train")
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)  # what transformers does itself for dequantize=True configs
    model.is_quantized = False
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    return model


def load_training_problems(cfg: TrainConfig) -> list[Problem]:
    problems = [p for p in load_problems(cfg.data) if p.all_tests]
    if not problems:
        raise BadInput(f"{cfg.data}: no problem with tests to train on")
    return problems[: cfg.max_problems] if cfg.max_problems else problems


def run_training(cfg: TrainConfig, model=None, tokenizer=None) -> Path:
    """Train per `cfg`; returns the metrics log path."""
    from solidcoder.execution.executor import make_executor
    from solidcoder.execution.sandbox import SandboxConfig

    problems = load_training_problems(cfg)
    if model is None:
        model, tokenizer = load_model(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
    hidden = (cfg.data,) if cfg.data else ()  # the training data holds the tests and references: no run may read it
    with make_executor(cfg.executor, SandboxConfig(workers=cfg.sandbox_workers, hidden_paths=hidden)) as pool:
        parts = build_components(cfg, pool, problems)
        if cfg.check_memory:
            check_gpu_memory(cfg, model, tokenizer, parts)
        trainer = make_trainer(cfg, model, tokenizer, parts, StepTimer())
        trainer.train()
        trainer.save_model(str(out / "final"))
    return out / "metrics.jsonl"


def check_gpu_memory(cfg: TrainConfig, model, tokenizer, parts: Components) -> None:
    """BadInput when the memory model says this run cannot fit the GPU it is about to use (nothing on a CPU, and
    nothing under DeepSpeed, whose sharding and offload the check does not see)."""
    import os

    import torch

    if not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_DEEPSPEED", "").lower() == "true":
        return
    card = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    share = 1.0 - cfg.vllm_gpu_memory_utilization if cfg.use_vllm and cfg.vllm_mode == "colocate" else 1.0
    check_fits(estimate(model_shape(model), run_shape(cfg, model, tokenizer, parts)), int(card * share))


def model_shape(model) -> ModelShape:
    return ModelShape.from_config(model.config.get_text_config(), sum(p.numel() for p in model.parameters()))


def run_shape(cfg: TrainConfig, model, tokenizer, parts: Components) -> RunShape:
    """The run as the memory model sees it. The longest prompt is the longest code prompt, plus the completion cap
    when alignment prompts (which quote a generated program) are mixed in."""
    longest = max(len(tokenizer.apply_chat_template(parts.renderer.code_messages(p), add_generation_prompt=True,
                                                    tokenize=True, return_dict=True)["input_ids"])
                  for p in parts.problems.values())
    param_bytes = next(model.parameters()).element_size()
    return RunShape(generation_batch=cfg.prompt_batch_size * cfg.num_generations // _world_size(),
                    micro_batch=cfg.micro_batch_size,
                    prompt_tokens=longest + (cfg.max_completion_length if cfg.alpha > 0 else 0),
                    completion_tokens=cfg.max_completion_length, param_bytes=param_bytes,
                    autocast=cfg.bf16 and param_bytes == 4, reference_model=cfg.beta > 0,
                    gradient_checkpointing=cfg.gradient_checkpointing, vllm=cfg.use_vllm)


def _world_size() -> int:
    import os

    return int(os.environ.get("WORLD_SIZE", "1"))
