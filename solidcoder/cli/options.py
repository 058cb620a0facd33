"""Options several commands share, defined once so that each means the same everywhere (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solidcoder.languages import LANGUAGES
from solidcoder.strategies.registry import strategy_help

# `--strategy` help names every strategy `make_strategy` builds (its registry), so it cannot fall behind them.
STRATEGY_HELP = strategy_help()
SOLVE_STRATEGY_HELP = ("solidcoder-routed (default) tries cheap tiers first, solidcoder+ is Algorithm 1 with the "
                       f"recommended refinements, solidcoder the paper's. One of {STRATEGY_HELP}")
PromptsDir = Annotated[Path | None, typer.Option("--prompts", metavar="DIR",
                                                 help="Directory of override templates (wins first).")]
ModelSpecs = Annotated[list[str] | None, typer.Option(
    "--model", metavar="[ROLE=]MODEL",
    help="Repeatable: a spec such as openai/NAME with --api-base, an API model (gpt-4o-mini) or a .gguf file; "
         "ROLE=MODEL for a pipeline role. Default: the embedded llama.cpp engine running --gguf, $SOLIDCODER_GGUF, "
         "a GGUF shipped in a package (extra `tiny`: SmolLM2-135M) or cached, else Qwen2.5-Coder-1.5B-Instruct "
         "Q4_K_M, downloaded once.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", metavar="URL", help="OpenAI-compatible server URL.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", metavar="KEY", envvar="SOLIDCODER_API_KEY",
                                            help="API key (default: $SOLIDCODER_API_KEY).")]
Workers = Annotated[int, typer.Option("--workers", min=1, help="Sandbox workers (programs running at once).")]
MaxCalls = Annotated[int | None, typer.Option("--max-calls", min=1, help="Model calls per problem; then the best "
                                              "code so far is the answer.")]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="Completion tokens per call.")]
Threads = Annotated[int | None, typer.Option("--threads", min=1, envvar="SOLIDCODER_THREADS", show_envvar=True,
                                             help="CPU threads of the embedded llama.cpp model (default: the "
                                             "model's n_threads setting, else the physical cores not already "
                                             "busy: cores less the 1-minute load average, at least 1).")]
DataFile = Annotated[Path | None, typer.Option("--data-file", metavar="FILE",
                                               help="Local copy of the dataset (offline).")]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", help="Optimizer updates.")]
ProgramLanguage = Annotated[str | None, typer.Option("--language", metavar="NAME", help=f"The programs' language: "
                                              f"{', '.join(LANGUAGES)} (default: the problem's, else "
                                              "python); other than Python, stdin/stdout problems only.")]
EXECUTOR_HELP = "Where programs run: local, ray, or ray:ADDRESS (a Ray cluster; extra `dist`)."
ExecutorOption = Annotated[str, typer.Option("--executor", metavar="WHERE", help=EXECUTOR_HELP)]
