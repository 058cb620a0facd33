"""`solidcoder train`: CodeRL+ and the outcome reward model (extra `train`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solidcoder.cli.help import Command, Commands
from solidcoder.cli.options import EXECUTOR_HELP, DataFile, MaxSteps
from solidcoder.errors import BadInput
from solidcoder.wording import counted

train_app = typer.Typer(cls=Commands, no_args_is_help=True,
                        help="Train local models with execution feedback (extra `train`).\n\n"
                        "Example: solidcoder train coderl+ --model Qwen/Qwen2.5-Coder-0.5B-Instruct --data "
                        "train.jsonl --run-dir runs/coderl")


@train_app.command("coderl+", cls=Command)
def train_coderl_plus(
    model: Annotated[str, typer.Option("--model", metavar="MODEL", help="Hub name, model directory or GGUF file to "
                                       "train.")],
    data: Annotated[Path, typer.Option("--data", metavar="FILE", help="Problems with tests (JSON/JSONL, "
                                       "docs/problem-schema.md).")],
    run_dir: Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Run directory: checkpoints, final model, "
                                          "metrics.jsonl.")],
    config: Annotated[Path | None, typer.Option("--config", metavar="FILE", help="YAML overriding the preset.")]
    = None,
    preset: Annotated[str, typer.Option("--preset", help="default (100 steps, no KL term) or paper (the CodeRL+ "
                                        "paper's 1000 steps, beta and loss form: docs/training.md).")] = "default",
    alpha: Annotated[float | None, typer.Option("--alpha", help="Share of alignment prompts (the paper's 1 - alpha); "
                                                "0 = plain GRPO.")] = None,
    max_steps: MaxSteps = None,
    variant: Annotated[str | None, typer.Option("--alignment-variant", help="paper or released.")] = None,
    max_problems: Annotated[int | None, typer.Option("--max-problems", help="Use the first N problems.")] = None,
    vllm: Annotated[bool | None, typer.Option("--vllm/--no-vllm", help="vLLM colocated generation (GPU).")] = None,
    bf16: Annotated[bool | None, typer.Option("--bf16/--no-bf16", help="bfloat16 training (GPU).")] = None,
    executor: Annotated[str | None, typer.Option("--executor", metavar="WHERE", help=EXECUTOR_HELP)] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Sandbox workers (programs running at "
                                                "once).")] = None,
) -> None:
    """CodeRL+: GRPO on code generation plus execution-semantics alignment on the policy's failed programs.

    Example: solidcoder train coderl+ --model Qwen/Qwen2.5-Coder-0.5B-Instruct --data train.jsonl --run-dir runs/rl
    """
    from solidcoder.train.config import load_config
    from solidcoder.train.memory import default_allocator

    default_allocator()  # before anything imports torch: torch reads the allocator setting once

    cfg = load_config(config, preset, model=model, data=str(data), out=str(run_dir), alpha=alpha, max_steps=max_steps,
                      alignment_variant=variant, max_problems=max_problems, use_vllm=vllm, bf16=bf16,
                      executor=executor, sandbox_workers=workers)
    try:
        from solidcoder.train.trainer import run_training
    except ImportError as exc:
        raise BadInput(f"training needs the train extra: pip install 'solidcoder[train]' ({exc})") from None
    metrics = run_training(cfg)
    typer.echo(f"trained {counted(cfg.max_steps, 'step')}; model: {run_dir / 'final'}; metrics: {metrics}")


@train_app.command("orm", cls=Command)
def train_orm_command(
    samples: Annotated[Path, typer.Argument(help="JSONL of judged samples ({problem_id, code, passed} per line) "
                                            "or a bench results.jsonl.")],
    model: Annotated[str, typer.Option("--model", metavar="MODEL", help="Backbone: hub name or model directory.")],
    run_dir: Annotated[Path, typer.Option("--run-dir", metavar="DIR", help="Directory for the trained ORM.")],
    dataset: Annotated[str, typer.Option("--dataset", metavar="NAME", help="Dataset the samples answer.")]
    = "humaneval",
    data_file: DataFile = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="Optimizer updates (-1: whole epochs).")]
    = None,
    learning_rate: Annotated[float | None, typer.Option("--lr", help="Learning rate.")] = None,
    preset: Annotated[str, typer.Option("--preset", help="default (quick) or paper (the ORM paper's training: "
                                        "docs/training.md); --max-steps and --lr override it.")] = "default",
) -> None:
    """Train an outcome reward model on correct/incorrect candidate pairs (TRL RewardTrainer).

    Example: solidcoder train orm runs/bench/results.jsonl --model Qwen/Qwen2.5-Coder-0.5B --run-dir runs/orm
    """
    from solidcoder.datasets import DataOptions, load_dataset
    from solidcoder.train.memory import default_allocator

    default_allocator()  # before anything imports torch: torch reads the allocator setting once

    problems, _ = load_dataset(dataset, DataOptions(data_file=data_file))
    try:
        from solidcoder.verify.orm import orm_preset, run_train_orm
    except ImportError as exc:
        raise BadInput(f"training needs the train extra: pip install 'solidcoder[train]' ({exc})") from None
    config = orm_preset(preset, max_steps=max_steps, learning_rate=learning_rate)
    pairs = run_train_orm(samples, {p.id: p.statement for p in problems}, model, run_dir, config)
    typer.echo(f"trained an ORM on {pairs} pairs: {run_dir}")


# --- commands added by later work go above this line ---
