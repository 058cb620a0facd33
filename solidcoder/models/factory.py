"""Turn a `--model` spec into a `Model`, and give each pipeline role (coder, judge, ...) its own model.

Spec rules:
  none / "local"                 -> embedded llama.cpp with a GGUF found by `llamacpp.find_gguf`
  "PATH.gguf"                    -> embedded llama.cpp with that file
  "hf:NAME" / a checkpoint DIR   -> transformers in-process (a trained model: `OUT/final` of `train coderl+`)
  "openai/NAME" + api_base       -> OpenAI-compatible client (vLLM, llama.cpp server, Ollama's /v1)
  anything else (+ api_base)     -> litellm ("gpt-4o-mini", "anthropic/claude-3-5-sonnet-latest", ...)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from solidcoder.errors import BadInput
from solidcoder.models.base import Budget, Model
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings, SettingsTable, load_settings
from solidcoder.models.transformers_backend import is_transformers_spec

if TYPE_CHECKING:
    from solidcoder.models.llamacpp import Generating

DEFAULT_ROLE = "default"


@dataclass
class ModelOptions:
    """What every model of a run shares: where to connect, how to retry, and one budget for all of them."""

    api_base: str | None = None
    api_key: str | None = None
    gguf: Path | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    budget: Budget = field(default_factory=Budget)
    settings: SettingsTable | None = None
    threads: int | None = None  # the embedded model's CPU threads (--threads); see `embedded_threads`
    on_progress: Callable[[Generating], None] | None = None  # told how a long in-process generation is going

    def table(self) -> SettingsTable:
        if self.settings is None:
            self.settings = load_settings()
        return self.settings


def make_model(spec: str | None, options: ModelOptions | None = None) -> Model:
    """The backend for `spec` (see the module docstring)."""
    options = options or ModelOptions()
    if spec and spec.endswith(".gguf") and not Path(spec).expanduser().is_file():
        raise BadInput(f"--model {spec}: no such GGUF file")
    if not spec or spec == "local" or spec.endswith(".gguf"):
        return _embedded(Path(spec) if spec and spec.endswith(".gguf") else options.gguf, options)
    settings = options.table().get(spec)
    if Path(spec).is_dir() and not is_transformers_spec(spec):
        raise BadInput(f"--model {spec}: a directory, but not a transformers checkpoint (no config.json)")
    if is_transformers_spec(spec):
        return _transformers(spec, settings, options)
    if spec.startswith("openai/") and options.api_base:
        from solidcoder.models.openai_compat import OpenAICompatModel

        name = spec.removeprefix("openai/")
        return OpenAICompatModel(name, options.api_base, settings, options.policy, options.budget, options.api_key)
    from solidcoder.models.litellm_backend import LiteLLMModel

    _check_not_a_path(spec)
    return LiteLLMModel(spec, settings, options.policy, options.budget, options.api_base, options.api_key)


MODEL_FILES = (".gguf", ".bin", ".safetensors", ".pt", ".pth", ".onnx")


def _check_not_a_path(spec: str) -> None:
    """BadInput for a spec that names a file (a model file of another format, or one that is not there)."""
    path = Path(spec).expanduser()
    if path.is_file():
        raise BadInput(f"--model {spec}: a file, but not a GGUF model (.gguf); a transformers checkpoint is a "
                       "directory")
    if spec.startswith((".", "/", "~")) or path.suffix in MODEL_FILES:
        raise BadInput(f"--model {spec}: no such file or directory")


def _embedded(gguf: Path | None, options: ModelOptions) -> Model:
    from solidcoder.models.llamacpp import LlamaCppModel, find_gguf, import_llama_cpp

    path = find_gguf(gguf)
    import_llama_cpp()  # fail now, with install advice, rather than at the first call
    # In-process calls have no transient failures worth retrying.
    policy = RetryPolicy(attempts=1, timeout_s=options.policy.timeout_s)
    settings = options.table().get(path.stem)
    return LlamaCppModel(path, settings, policy, options.budget, n_threads=embedded_threads(options.threads, settings),
                         on_progress=options.on_progress)


def embedded_threads(flag: int | None, settings: ModelSettings) -> int | None:
    """--threads, else $SOLIDCODER_THREADS, else the model's `n_threads` setting; None: the cores free at load time."""
    env = os.environ.get("SOLIDCODER_THREADS", "").strip()
    if flag is None and env:
        if not env.isdigit() or int(env) < 1:
            raise BadInput(f"SOLIDCODER_THREADS={env!r}: expected a count of threads, at least 1")
        flag = int(env)
    return flag or settings.n_threads or None


def _transformers(spec: str, settings, options: ModelOptions) -> Model:
    from solidcoder.models.transformers_backend import TransformersModel

    try:
        import transformers  # noqa: F401 - fail now, with install advice, rather than at the first call
    except ImportError:
        raise BadInput(f"--model {spec}: a transformers checkpoint needs pip install 'solidcoder[train]'") from None
    policy = RetryPolicy(attempts=1, timeout_s=options.policy.timeout_s)
    return TransformersModel(spec, settings, policy, options.budget)


def parse_role_specs(values: list[str]) -> dict[str, str]:
    """["gpt-4o-mini", "judge=gpt-4o"] -> {"default": "gpt-4o-mini", "judge": "gpt-4o"}."""
    specs: dict[str, str] = {}
    for value in values:
        role, sep, spec = value.partition("=")
        role, spec = (role, spec) if sep else (DEFAULT_ROLE, value)
        if not role or not spec:
            raise BadInput(f"--model {value!r}: expected MODEL or ROLE=MODEL")
        specs[role.strip()] = spec.strip()
    return specs


class ModelRoster:
    """Models by pipeline role; a role without its own model uses the default one."""

    def __init__(self, by_role: dict[str, Model]):
        if DEFAULT_ROLE not in by_role:
            raise ValueError("a roster needs a default model")
        self.by_role = by_role

    def for_role(self, role: str) -> Model:
        return self.by_role.get(role, self.by_role[DEFAULT_ROLE])


def as_roster(models: Model | ModelRoster) -> ModelRoster:
    """`models` as a roster: itself when it already has `for_role`, else one model playing every role."""
    return models if hasattr(models, "for_role") else ModelRoster({DEFAULT_ROLE: models})


def is_in_process(spec: str | None) -> bool:
    """The embedded llama.cpp model or a transformers checkpoint: run here, never through --api-base."""
    return not spec or spec == "local" or spec.endswith(".gguf") or is_transformers_spec(spec)


def check_api_base(specs: list[str | None], api_base: str | None) -> None:
    """BadInput for an --api-base that no model would use (it would be ignored silently: the embedded model ran)."""
    if api_base and all(is_in_process(spec) for spec in specs):
        raise BadInput(f"--api-base {api_base} needs --model: openai/NAME for an OpenAI-compatible server's model "
                       "NAME, or an API model; without --model the embedded llama.cpp model runs and takes no URL")


def make_roster(specs: dict[str, str | None], options: ModelOptions | None = None) -> ModelRoster:
    """One model per role; roles naming the same spec share one instance (a local model loads once)."""
    options = options or ModelOptions()
    specs = {DEFAULT_ROLE: None, **specs}
    check_api_base(list(specs.values()), options.api_base)
    built: dict[str | None, Model] = {}
    for spec in specs.values():
        if spec not in built:
            built[spec] = make_model(spec, options)
    return ModelRoster({role: built[spec] for role, spec in specs.items()})
