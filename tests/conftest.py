"""Shared pytest fixtures. Each block belongs to one area; keep blocks separate."""

from __future__ import annotations

# --- model layer fixtures (issue 3) ---------------------------------------------------------------------------
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest
from scripted_server import ScriptedServer

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def scripted_server():
    """A real OpenAI-compatible server on 127.0.0.1 that answers what the test scripts (see scripted_server.py)."""
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="session")
def smollm_gguf() -> Path:
    """SmolLM2-135M-Instruct as GGUF, fetched once by shared/models/get-gguf into a cache directory."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'solidcoder[local]')")
    cache = Path(os.environ.get("SOLIDCODER_TEST_MODELS") or Path.home() / ".cache" / "solidcoder-test-models")
    script = REPO_ROOT.parent / "shared" / "models" / "get-gguf"
    command = ["bash", str(script), "smollm2-135m", str(cache)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"get-gguf failed: {done.stderr[-2000:]}"
    return Path(done.stdout.strip().splitlines()[-1])


# --- end of model layer fixtures -------------------------------------------------------------------------------
