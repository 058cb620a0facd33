"""A real model end to end: SmolLM2-135M through llama.cpp in-process, through `python -m llama_cpp.server`, and
through `solidcoder serve` (started, used, stopped with Ctrl-C). Skipped only when llama-cpp-python is absent."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import interruptible

from solidcoder.models import Budget, Message
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.models.llamacpp import Generating, LlamaCppModel
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.serve import ServeConfig, Server, probe_models
from solidcoder.models.settings import load_settings

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
ASK = [Message("system", "You are a helpful assistant."), Message("user", "What is the capital of France?")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(smollm_gguf):
    """A real llama.cpp server started by our Server (so its health wait is exercised) and stopped after."""
    if importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama_cpp.server needs the server extra: pip install 'llama-cpp-python[server]'")
    cfg = ServeConfig("llama-cpp", str(smollm_gguf), port=free_port(), n_ctx=1024, n_threads=2)
    server = Server(cfg).start()
    try:
        served = server.wait_ready(timeout_s=180, poll_s=0.2)
        yield cfg, served
    finally:
        server.stop()


def test_in_process_chat_counts_tokens(smollm_gguf):
    budget = Budget()
    model = make_model(str(smollm_gguf), ModelOptions(budget=budget))
    assert isinstance(model, LlamaCppModel)
    done = model.complete(ASK, temperature=0.0, max_tokens=24)
    assert done.text.strip()
    assert done.prompt_tokens > 5 and 0 < done.completion_tokens <= 24
    assert (done.cost_usd, budget.calls, budget.tokens) == (0.0, 1, done.total_tokens)
    again = asyncio.run(model.acomplete(ASK, temperature=0.0, max_tokens=24))
    assert again.text.strip() and again.completion_tokens > 0
    assert budget.calls == 2


def test_a_schema_constrains_the_embedded_model_to_json_of_its_shape(smollm_gguf):
    import json

    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20}},
              "required": ["answer"], "additionalProperties": False}
    model = make_model(str(smollm_gguf), ModelOptions())
    done = model.complete([Message("user", "What is the capital of France? Answer in JSON.")], temperature=0.0,
                          max_tokens=48, schema=schema)
    reply = json.loads(done.text)  # the grammar makes it JSON; a 135M model would not manage on its own
    assert set(reply) == {"answer"} and isinstance(reply["answer"], str) and len(reply["answer"]) <= 20


def test_in_process_llama_cpp_runs_on_the_free_cores_for_prompt_and_generation(smollm_gguf, monkeypatch):
    from solidcoder.models.llamacpp import physical_cores

    monkeypatch.delenv("SOLIDCODER_THREADS", raising=False)  # the default, whatever the caller's shell sets
    model = make_model(str(smollm_gguf), ModelOptions())
    model.complete(ASK, temperature=0.0, max_tokens=4)
    assert 1 <= physical_cores() <= len(os.sched_getaffinity(0))
    assert 1 <= model._llama.n_threads <= physical_cores()  # the load decides how many of them are free
    assert model._llama.n_threads_batch == model._llama.n_threads  # llama.cpp's own would be every logical CPU


def test_threads_come_from_the_flag_then_the_environment_then_the_models_setting(smollm_gguf, monkeypatch):
    from solidcoder.errors import BadInput
    from solidcoder.models.settings import SettingsTable

    monkeypatch.setenv("SOLIDCODER_THREADS", "2")
    flagged = make_model(str(smollm_gguf), ModelOptions(threads=1))
    flagged.complete(ASK, temperature=0.0, max_tokens=4)
    assert flagged._llama.n_threads == 1  # what llama.cpp itself was given
    assert make_model(str(smollm_gguf), ModelOptions()).n_threads == 2
    monkeypatch.delenv("SOLIDCODER_THREADS")
    assert make_model(str(smollm_gguf), ModelOptions(settings=SettingsTable({"n_threads": 3}, {}))).n_threads == 3
    monkeypatch.setenv("SOLIDCODER_THREADS", "many")
    with pytest.raises(BadInput, match="SOLIDCODER_THREADS='many'"):
        make_model(str(smollm_gguf), ModelOptions())


def test_a_generation_reports_how_far_it_got_as_it_goes(smollm_gguf):
    heard: list[Generating] = []
    model = LlamaCppModel(smollm_gguf, load_settings().get(smollm_gguf.stem), RetryPolicy(attempts=1),
                          on_progress=heard.append, progress_every_s=0.0)  # every token, for the test
    done = model.complete(ASK, temperature=0.0, max_tokens=12)
    assert done.completion_tokens <= len(heard) <= done.completion_tokens + 1  # the end-of-text token is sampled too
    assert str(heard[0]).startswith("1 token, ") and str(heard[-1]).startswith(f"{len(heard)} tokens, ")
    first = len(heard)
    sampled = model.complete(ASK, temperature=0.8, max_tokens=4, n=2)  # two choices: each its own sample number
    assert len(sampled.choices) == 2 and {(g.sample, g.samples) for g in heard[first:]} == {(1, 2), (2, 2)}
    assert str(heard[-1]).startswith("sample 2 of 2, ")
    quiet = LlamaCppModel(smollm_gguf, load_settings().get(smollm_gguf.stem), RetryPolicy(attempts=1))
    assert quiet.complete(ASK, temperature=0.0, max_tokens=12).text == done.text  # the scores are left as they were


def test_the_prompt_cache_lets_a_prompt_reuse_the_state_of_a_call_before_the_last_one(smollm_gguf):
    from dataclasses import replace

    settings = replace(load_settings().get(smollm_gguf.stem), prompt_cache_mb=256)
    cached = LlamaCppModel(smollm_gguf, settings, RetryPolicy(attempts=1))
    plain = LlamaCppModel(smollm_gguf, replace(settings, prompt_cache_mb=0), RetryPolicy(attempts=1))
    other = [Message("system", "You are terse."), Message("user", "Name a colour.")]
    restored = [cached.complete(ask, temperature=0.0, max_tokens=12).text for ask in (ASK, other, ASK)][2]
    assert cached._llama.cache is not None and len(cached._llama.cache.cache_state) >= 2  # a state per call
    # Asked again at once, a prompt is reused whole from llama.cpp's live KV cache: the reply a restored state must
    # give. (A fresh evaluation may differ: llama.cpp's batched and one-token kernels round differently, and with
    # two threads SmolLM2's greedy reply to ASK changes when only its last token is evaluated.)
    again = [plain.complete(ASK, temperature=0.0, max_tokens=12).text for _ in range(2)][1]
    assert plain._llama.cache is None
    assert restored == again  # restoring a state changes no reply


def test_with_the_prompt_cache_a_prompt_sampled_again_gets_new_replies(smollm_gguf):
    from dataclasses import replace

    settings = replace(load_settings().get(smollm_gguf.stem), prompt_cache_mb=256)
    model = LlamaCppModel(smollm_gguf, settings, RetryPolicy(attempts=1), seed=7)
    other = [Message("user", "Name a colour.")]  # between two samples, as when problems interleave in a bench run
    samples = [[model.complete(ask, temperature=1.0, max_tokens=16).text for ask in (ASK, other)][0] for _ in range(4)]
    assert len(model._llama.cache.cache_state) >= 2  # the samples after the first came from a restored state
    assert len(set(samples)) >= 3  # restoring a state restored its seed: the same reply, again and again


def test_the_prompt_cache_counts_the_logits_each_state_copies_and_stays_within_its_size(smollm_gguf):
    from dataclasses import replace

    settings = replace(load_settings().get(smollm_gguf.stem), prompt_cache_mb=10)
    model = LlamaCppModel(smollm_gguf, settings, RetryPolicy(attempts=1))
    for question in ("Name a colour.", "Name a fruit.", "Name a tree."):
        model.complete([Message("user", question)], temperature=0.0, max_tokens=4)
    cache = model._llama.cache
    (state,) = cache.cache_state.values()  # a state's logits (~37 tokens x 49,152 floats) fit in 10 MB once, not twice
    assert state.scores.nbytes > 5 << 20 and cache.cache_size <= 10 << 20
    assert 3 * state.llama_state_size < 10 << 20  # the library's own count, which would have kept all three states


def test_several_choices_evaluate_the_prompt_once_and_count_it_once(smollm_gguf):
    model = LlamaCppModel(smollm_gguf, load_settings().get(smollm_gguf.stem), RetryPolicy(attempts=1), seed=5)
    model.complete(ASK, temperature=0.0, max_tokens=1)  # loads the model
    evaluated, real_eval = [], model._llama.eval
    model._llama.eval = lambda tokens: (evaluated.append(len(tokens)), real_eval(tokens))[1]
    story = [Message("user", "Tell me about a lighthouse keeper who counts ships. " * 8)]
    done = model.complete(story, temperature=1.0, max_tokens=8, n=3)
    assert len(done.choices) == 3 and done.text == done.choices[0] and len(set(done.choices)) >= 2
    assert 0 < done.completion_tokens <= 24 and done.prompt_tokens > 80
    assert sum(evaluated) < 1.5 * done.prompt_tokens  # evaluated three times, it would be 3x


def test_in_process_prompt_longer_than_context_is_fatal(smollm_gguf):
    from solidcoder.models import ModelFatalError

    settings = load_settings().get(smollm_gguf.stem)
    model = LlamaCppModel(smollm_gguf, settings, RetryPolicy(attempts=1))
    with pytest.raises(ModelFatalError, match="context"):
        model.complete([Message("user", "word " * 5000)], max_tokens=8)


def test_server_health_wait_and_chat_over_http(llama_server):
    cfg, served = llama_server
    assert served == [cfg.served_name]
    options = ModelOptions(api_base=cfg.base_url, policy=RetryPolicy(attempts=2, timeout_s=120))
    done = make_model(f"openai/{cfg.served_name}", options).complete(ASK, temperature=0.0, max_tokens=24)
    assert done.text.strip()
    assert done.prompt_tokens > 5 and 0 < done.completion_tokens <= 24
    assert done.cost_usd == 0.0


def test_the_served_llama_cpp_answers_a_request_for_several_choices_with_one(llama_server):
    cfg, _ = llama_server  # llama-cpp-python's server drops `n`: the samplers ask again for the rest
    options = ModelOptions(api_base=cfg.base_url, policy=RetryPolicy(attempts=2, timeout_s=120))
    done = make_model(f"openai/{cfg.served_name}", options).complete(ASK, temperature=1.0, max_tokens=8, n=3)
    assert done.choices == () and done.texts == (done.text,) and done.text.strip()


def test_serve_command_prints_flags_serves_and_stops_on_ctrl_c(smollm_gguf):
    if importlib.util.find_spec("uvicorn") is None:
        pytest.skip("llama_cpp.server needs the server extra: pip install 'llama-cpp-python[server]'")
    port = free_port()
    command = [sys.executable, "-m", "solidcoder", "serve", "--engine", "llama-cpp", str(smollm_gguf)]
    command += ["--port", str(port), "--n-ctx", "1024", "--ready-timeout", "180"]
    proc = interruptible(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C" in line or "error" in line:
                break
        output = "".join(lines)
        url = f"http://127.0.0.1:{port}/v1"
        assert f"ready at {url}" in output, output
        assert f"--model openai/{smollm_gguf.stem} --api-base {url}" in output
        assert probe_models(url) == [smollm_gguf.stem]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        time.sleep(0.5)
        assert probe_models(url, timeout_s=1) is None  # the server went down with it
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)


def test_the_embedded_model_continues_a_prefilled_turn_and_stops_at_a_stop_string(smollm_gguf):
    model = make_model(str(smollm_gguf), ModelOptions())
    start = "```python\ndef add(a, b):\n    return"
    turn = [Message("user", "Write a Python function add(a, b) that returns a + b."), Message("assistant", start)]
    free = model.complete(turn, temperature=0.0, max_tokens=30)
    stopped = model.complete(turn, temperature=0.0, max_tokens=30, stop=("\n",))
    assert free.text.startswith(start + " a + b\n")  # the return statement finished: a continuation, not a new turn
    assert stopped.text == start + " a + b" and stopped.completion_tokens < free.completion_tokens
    france = model.complete([Message("user", "What is the capital of France?"),
                             Message("assistant", "The capital of France is")], temperature=0.0, max_tokens=30)
    assert france.text.startswith("The capital of France is Paris") and france.completion_tokens <= 4
    whole, cut = (model.complete(ASK, temperature=0.0, max_tokens=30, stop=stop) for stop in ((), ("Paris",)))
    assert "Paris" in whole.text and "Paris" not in cut.text and whole.text.startswith(cut.text)
    assert cut.completion_tokens < whole.completion_tokens  # llama.cpp stopped there, not only the cut after it
