"""Configuration keys: what names a configuration in resume keys, and the one rule that keeps recorded keys valid.

A run directory finds its finished units and paid calls again by key (docs/benchmarks.md, "resuming"), so a key
must not change when the code gains a setting. The rule, in one place: a setting added after runs were recorded is
declared in a table of *later* settings, name -> the value it is left out at (the value that does what the code did
before the setting existed). At that value the setting is absent, so every key recorded before it existed is kept;
at any other value it is present, so the new configuration gets a key of its own. A value is "at" its declared one
when both are written the same as JSON (`False` is not `0`, `0.0` is not `0`).

`without_later_defaults` applies the rule to a settings dict (bench's options, `Routed.settings()`,
`Algorithm1.settings()`, the options of a model call); `config_key` hashes the rest as canonical JSON (sorted
keys): the first `length` hex digits of its SHA-256, as `bench`'s `config_hash` has always been written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from types import MappingProxyType
from typing import Any

# A table of settings added after runs were recorded: name -> the value at which the setting is left out.
Later = Mapping[str, Any]
NO_LATER: Later = MappingProxyType({})


def without_later_defaults(settings: Mapping[str, Any], later: Later) -> dict[str, Any]:
    """`settings`, in their order, less each setting of `later` at the value `later` declares for it."""
    return {name: value for name, value in settings.items() if not (name in later and _same(value, later[name]))}


def config_key(settings: Mapping[str, Any] | Any, later: Later = NO_LATER, length: int = 12) -> str:
    """The key of `settings` (a dict or a dataclass instance): the SHA-256 of their canonical JSON, less the
    `later` settings at their declared values, cut to `length` hex digits."""
    found = asdict(settings) if is_dataclass(settings) and not isinstance(settings, type) else settings
    canonical = json.dumps(without_later_defaults(found, later), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:length]


def _same(value: Any, declared: Any) -> bool:
    return json.dumps(value, sort_keys=True) == json.dumps(declared, sort_keys=True)
