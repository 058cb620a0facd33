"""Training configuration for `solidcoder train coderl+`: one dataclass, defaults from the CodeRL+ paper.

Batch terms follow the paper (verl): `prompt_batch_size` prompts per generation batch, `num_generations` rollouts
each, one optimizer update per `mini_batch_size` prompts. `grpo_batch_geometry` maps them onto TRL's
generation_batch_size / gradient_accumulation_steps, with `micro_batch_size` completions per device per forward.
The YAML file `configs/coderl_plus.yaml` beside this module holds the same defaults; keys of a user's file
override them, and unknown keys are an error.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.execution.executor import parse_executor

DEFAULT_CONFIG = Path(__file__).resolve().parent / "configs" / "coderl_plus.yaml"


@dataclass
class TrainConfig:
    """Everything one CodeRL+ (or plain GRPO, `alpha=0`) run needs."""

    model: str = ""
    data: str = ""
    out: str = ""
    alpha: float = 0.4  # share of alignment prompts once the buffer has filled
    learning_rate: float = 1e-6
    num_generations: int = 8
    prompt_batch_size: int = 128
    mini_batch_size: int = 64
    micro_batch_size: int = 8
    max_completion_length: int = 8192
    temperature: float = 1.0
    beta: float = 0.0
    max_steps: int = 100
    save_steps: int = 50
    seed: int = 0
    buffer_capacity: int = 1024
    alignment_variant: str = "paper"  # or "released" (module locals, 3 variables, JSON answer, format bonus)
    alignment_include_problem: bool = False
    max_variables: int = 8
    max_container_len: int = 8  # containers of up to this many primitives join V; 0: primitives only (the paper)
    hidden_tests: bool = True
    sandbox_workers: int | None = None  # per node with a Ray executor
    executor: str = "local"  # where rewards run programs: local, ray or ray:ADDRESS (solidcoder.execution.executor)
    max_problems: int | None = None
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_gpu_memory_utilization: float = 0.3
    bf16: bool = False
    gradient_checkpointing: bool = False
    check_memory: bool = True  # on a GPU, stop before training when the memory model says the run cannot fit
    gguf_file: str | None = None
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    grpo_overrides: dict[str, Any] = field(default_factory=dict)  # any other GRPOConfig field, passed through

    def validate(self) -> TrainConfig:
        if not 0.0 <= self.alpha < 1.0:
            raise BadInput(f"alpha must be in [0, 1), got {self.alpha}")
        if self.prompt_batch_size % self.mini_batch_size:
            raise BadInput("prompt_batch_size must be a multiple of mini_batch_size")
        parse_executor(self.executor)
        if self.alignment_variant not in ("paper", "released"):
            raise BadInput(f"alignment_variant must be 'paper' or 'released', got {self.alignment_variant!r}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# `--preset`: `default` is the packaged YAML (the paper's batch geometry and lengths, 100 steps, no KL term, TRL's
# default loss aggregation); `paper` changes what the CodeRL+ paper and its released recipe (recipe/coderlplus.sh)
# set otherwise: 1000 updates, a KL term with β = 0.001 against the reference model, the GRPO objective's per-sequence
# 1/|p_i| loss (TRL's loss_type "grpo"; the recipe itself keeps verl's token mean, TRL's default "dapo"), a 20,000-task
# alignment buffer, V as every primitive-typed variable (no containers, no cap). (The recipe's 1024-token prompt cap
# has no TRL 1.x field: prompts are not cut.) `alpha` stays
# 0.4 in both: the project's alpha is the share of alignment prompts (the recipe's rollout_integration.ratio), the
# paper's B_mixed formula's 1 - α (docs/training.md).
PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "paper": {"max_steps": 1000, "beta": 0.001, "buffer_capacity": 20000, "max_container_len": 0, "max_variables": 0,
              "grpo_overrides": {"loss_type": "grpo"}},
}


def load_config(path: str | Path | None = None, preset: str = "default", **overrides: Any) -> TrainConfig:
    """Packaged defaults, then the preset's keys, then `path`'s keys, then non-None `overrides` (the command-line
    options)."""
    if preset not in PRESETS:
        raise BadInput(f"unknown --preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    values = {**_read_yaml(DEFAULT_CONFIG), **PRESETS[preset]}
    if path is not None:
        mine = _read_yaml(Path(path))
        passed = {**values.get("grpo_overrides", {}), **mine.get("grpo_overrides", {})}  # merged, not replaced
        values.update(mine, **({"grpo_overrides": passed} if passed else {}))
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise BadInput(f"unknown training config key {unknown[0]!r}")
    return TrainConfig(**values).validate()


def grpo_batch_geometry(cfg: TrainConfig, world_size: int = 1) -> dict[str, int]:
    """TRL batch arguments reproducing the paper's prompt batch / mini-batch with `world_size` processes."""
    completions_per_update = cfg.mini_batch_size * cfg.num_generations
    per_forward = cfg.micro_batch_size * world_size
    if completions_per_update % per_forward:
        raise BadInput(f"mini_batch_size x num_generations ({completions_per_update}) must be a multiple of "
                       f"micro_batch_size x processes ({per_forward})")
    return {"per_device_train_batch_size": cfg.micro_batch_size,
            "gradient_accumulation_steps": completions_per_update // per_forward,
            "generation_batch_size": cfg.prompt_batch_size * cfg.num_generations}


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise BadInput(f"{path}: cannot read training config ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"{path}: invalid YAML ({exc})") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: a training config is a mapping of keys to values")
    return data
