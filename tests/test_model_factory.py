"""Which backend a --model spec gets, roles sharing models, and finding a GGUF for the embedded default."""

from __future__ import annotations

import importlib.util

import pytest
from scripted_server import reply

from solidcoder.errors import BadInput, BudgetExceeded
from solidcoder.models import Budget, BudgetConfig, Message
from solidcoder.models.factory import ModelOptions, make_model, make_roster, parse_role_specs
from solidcoder.models.llamacpp import NO_MODEL_HELP, find_gguf
from solidcoder.models.openai_compat import OpenAICompatModel
from solidcoder.models.retry import RetryPolicy

FAST = RetryPolicy(attempts=2, base_wait_s=0.01, timeout_s=2)


def test_openai_spec_with_api_base_uses_the_openai_client(scripted_server):
    options = ModelOptions(api_base=scripted_server.url, policy=FAST)
    model = make_model("openai/served-name", options)
    assert isinstance(model, OpenAICompatModel)
    scripted_server.script(reply("from server"))
    assert model.complete([Message("user", "hi")]).text == "from server"
    assert scripted_server.chat_requests()[0].body["model"] == "served-name"


def test_roles_share_one_budget_and_fall_back_to_default(scripted_server):
    options = ModelOptions(api_base=scripted_server.url, policy=FAST, budget=Budget(BudgetConfig(max_calls=2)))
    roster = make_roster(parse_role_specs(["openai/coder", "judge=openai/judge"]), options)
    assert roster.for_role("planner") is roster.for_role("default")
    assert roster.for_role("judge").name == "judge"
    roster.for_role("default").complete([Message("user", "a")])
    roster.for_role("judge").complete([Message("user", "b")])
    with pytest.raises(BudgetExceeded):
        roster.for_role("planner").complete([Message("user", "c")])
    assert [r.body["model"] for r in scripted_server.chat_requests()] == ["coder", "judge"]


def test_same_spec_in_two_roles_is_one_instance(scripted_server):
    options = ModelOptions(api_base=scripted_server.url)
    roster = make_roster({"default": "openai/m", "judge": "openai/m", "coder": "openai/other"}, options)
    assert roster.for_role("judge") is roster.for_role("default")
    assert roster.for_role("coder") is not roster.for_role("default")


@pytest.mark.parametrize("bad", ["judge=", "=gpt-4o"])
def test_bad_role_spec_is_bad_input(bad):
    with pytest.raises(BadInput, match="ROLE=MODEL"):
        parse_role_specs([bad])


@pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="litellm (extra 'api') is not installed")
def test_other_specs_use_litellm():
    from solidcoder.models.litellm_backend import LiteLLMModel

    assert isinstance(make_model("anthropic/claude-3-5-haiku-latest"), LiteLLMModel)
    assert isinstance(make_model("openai/gpt-4o-mini"), LiteLLMModel)  # no api_base: the provider itself


@pytest.fixture
def no_model_env(monkeypatch, tmp_path):
    monkeypatch.delenv("SOLIDCODER_GGUF", raising=False)
    return tmp_path


def test_gguf_explicit_then_env(no_model_env, monkeypatch):
    explicit, from_env = no_model_env / "a.gguf", no_model_env / "b.gguf"
    explicit.write_bytes(b"GGUF")
    from_env.write_bytes(b"GGUF")
    monkeypatch.setenv("SOLIDCODER_GGUF", str(from_env))
    assert find_gguf(explicit, search_path=[]) == explicit
    assert find_gguf(None, search_path=[]) == from_env
    monkeypatch.setenv("SOLIDCODER_GGUF", str(no_model_env / "missing.gguf"))
    with pytest.raises(BadInput, match="SOLIDCODER_GGUF: no such GGUF file"):
        find_gguf(None, search_path=[])
    with pytest.raises(BadInput, match="--gguf: no such GGUF file"):
        find_gguf(no_model_env / "nope.gguf", search_path=[])


def test_gguf_from_an_installed_model_package(no_model_env):
    site = no_model_env / "site"
    (site / "tiny_model").mkdir(parents=True)
    (site / "tiny_model" / "tiny.gguf").write_bytes(b"GGUF")
    dist_info = site / "tiny_model-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-model\nVersion: 0.1\n")
    (dist_info / "RECORD").write_text("tiny_model/__init__.py,,\ntiny_model/tiny.gguf,,\n")
    found = find_gguf(None, cache=no_model_env / "empty-cache", search_path=[str(site)], download=False)
    assert found == site / "tiny_model" / "tiny.gguf"


def test_gguf_from_the_cache_dir(no_model_env):
    cache = no_model_env / "cache"
    cache.mkdir()
    (cache / "b.gguf").write_bytes(b"GGUF")
    (cache / "a.gguf").write_bytes(b"GGUF")
    assert find_gguf(None, cache=cache, search_path=[], download=False) == cache / "a.gguf"


def test_nothing_found_offline_says_how_to_provide_a_model(no_model_env, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the real hub client, told it is offline, as on this machine
    with pytest.raises(BadInput) as info:
        find_gguf(None, cache=no_model_env / "cache", search_path=[])
    assert str(info.value).startswith(NO_MODEL_HELP)
    assert "\n" not in str(info.value)


def test_the_default_thread_count_is_the_cores_the_load_leaves_free_and_at_least_one():
    from solidcoder.models.llamacpp import free_cores, physical_cores

    cores = physical_cores()
    assert free_cores(load=0.0) == cores
    assert free_cores(load=cores - 0.6) == 1  # a busy machine: one thread, not one per core waiting for a core
    assert free_cores(load=cores + 3.0) == 1
    assert free_cores(load=0.6) == max(1, cores - 1)


def test_the_default_thread_count_follows_the_cpus_this_process_may_use():
    import subprocess
    import sys

    one_cpu = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " \
              "from solidcoder.models.llamacpp import free_cores; print(free_cores(load=0.0))"
    assert subprocess.run([sys.executable, "-c", one_cpu], capture_output=True, text=True, check=True).stdout == "1\n"
