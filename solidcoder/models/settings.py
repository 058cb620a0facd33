"""Per-model settings: context window, system-role support, default temperature, token prices.

The packaged `models.yaml` holds known models; a user file (`$SOLIDCODER_MODELS`, else
`~/.config/solidcoder/models.yaml`) is merged over it key by key, so a user can fix one price without copying
the whole table.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from solidcoder.errors import BadInput
from solidcoder.models.base import Message

PACKAGED = Path(__file__).with_name("models.yaml")


@dataclass(frozen=True)
class ModelSettings:
    """How to talk to one model and what it costs."""

    context_window: int = 8192
    system_role: bool = True
    temperature: float = 0.2
    max_tokens: int = 2048
    cost_per_input_token: float = 0.0
    cost_per_output_token: float = 0.0
    # llama.cpp in-process only: a RAM cache of this many MB holding the model state after each call, so a later
    # call whose prompt starts like an earlier one (not only the last one) skips evaluating that prefix. 0 is off.
    prompt_cache_mb: int = 1024
    # llama.cpp in-process only: CPU threads for generation; 0 picks the physical cores not already busy
    # (`llamacpp.free_cores`: cores less the 1-minute load average, at least 1). `--threads` and
    # $SOLIDCODER_THREADS win over it. On a busy machine fewer threads than cores can be many times faster.
    n_threads: int = 0
    # Servers only: one request may ask for several choices (`n`), as OpenAI and vLLM allow. llama.cpp's server
    # refuses n > 1: set false for it, and n choices become n requests.
    sends_n: bool = True
    # Servers and API providers: how many stop strings one request may carry (OpenAI's API takes 4; vLLM and
    # llama.cpp any number). The rest are still applied, by cutting the reply (models/backend.py).
    max_stop: int = 16

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.cost_per_input_token + completion_tokens * self.cost_per_output_token

    def adapt(self, messages: list[Message]) -> list[Message]:
        """Fold system messages into the first user message for models whose chat template rejects them."""
        if self.system_role:
            return list(messages)
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        rest = [m for m in messages if m.role != "system"]
        if not system:
            return rest
        if rest and rest[0].role == "user":
            return [Message("user", f"{system}\n\n{rest[0].content}"), *rest[1:]]
        return [Message("user", system), *rest]


class SettingsTable:
    """Looks up `ModelSettings` by model name: exact name, name without provider prefix, then patterns."""

    def __init__(self, defaults: dict[str, Any], models: dict[str, dict[str, Any]]):
        self._defaults = _to_settings(ModelSettings(), defaults, "defaults")
        self._models = models

    def get(self, name: str) -> ModelSettings:
        entry = self._find(name)
        return _to_settings(self._defaults, entry, name) if entry else self._defaults

    def _find(self, name: str) -> dict[str, Any] | None:
        bare = name.split("/", 1)[1] if "/" in name else name
        for key in (name, bare):
            if key in self._models:
                return self._models[key]
        for pattern, entry in self._models.items():
            if any(fnmatch.fnmatchcase(k.lower(), pattern.lower()) for k in (name, bare)):
                return entry
        return None


def user_settings_path() -> Path:
    env = os.environ.get("SOLIDCODER_MODELS")
    if env:
        return Path(env)
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "solidcoder" / "models.yaml"


def load_settings(user_file: Path | None = None) -> SettingsTable:
    """The packaged table with the user's file merged over it (the user file may be absent)."""
    base = _read_yaml(PACKAGED)
    user_file = user_file or user_settings_path()
    user = _read_yaml(user_file) if user_file.is_file() else {}
    if os.environ.get("SOLIDCODER_MODELS") and not user_file.is_file():
        raise BadInput(f"SOLIDCODER_MODELS points to {user_file}, which does not exist")
    defaults = {**base.get("defaults", {}), **user.get("defaults", {})}
    models = {k: dict(v) for k, v in base.get("models", {}).items()}
    for key, entry in user.get("models", {}).items():
        models[key] = {**models.get(key, {}), **entry}
    return SettingsTable(defaults, models)


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml  # pyyaml is a core dependency; imported here so `solidcoder --help` does not pay for it

    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise BadInput(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or not all(isinstance(data.get(k, {}), dict) for k in ("defaults", "models")):
        raise BadInput(f"{path}: expected a mapping with optional 'defaults' and 'models' mappings")
    return data


def _to_settings(base: ModelSettings, entry: dict[str, Any], where: str) -> ModelSettings:
    known = {f.name: f.type for f in fields(ModelSettings)}
    unknown = sorted(set(entry) - set(known))
    if unknown:
        raise BadInput(f"model settings for {where!r}: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return replace(base, **entry)
