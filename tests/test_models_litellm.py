"""The litellm backend over real HTTP to the scripted server (litellm's openai provider with an api_base)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest
from scripted_server import reply, status

from solidcoder.errors import ModelError, ModelFatalError
from solidcoder.models import Budget, Message
from solidcoder.models.litellm_backend import LiteLLMModel
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings

# find_spec, not importorskip: importing litellm here would bypass the backend's offline-friendly import.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None, reason="litellm (extra 'api') missing")

FAST = RetryPolicy(attempts=3, base_wait_s=0.01, max_wait_s=2.0, timeout_s=1.0)
HI = [Message("user", "hi")]


def model(server, settings=None, budget=None):
    return LiteLLMModel("openai/scripted-model", settings or ModelSettings(), FAST, budget, api_base=server.url)


def test_reply_tokens_and_priced_cost(scripted_server):
    scripted_server.script(reply("via litellm", prompt_tokens=100, completion_tokens=10))
    priced = ModelSettings(cost_per_input_token=0.01, cost_per_output_token=0.1)
    budget = Budget()
    done = model(scripted_server, priced, budget).complete(HI)
    assert (done.text, done.prompt_tokens, done.completion_tokens) == ("via litellm", 100, 10)
    assert done.cost_usd == pytest.approx(2.0)
    assert budget.cost_usd == pytest.approx(2.0)
    assert scripted_server.chat_requests()[0].body["model"] == "scripted-model"


def test_several_choices_reach_the_server_as_n_and_come_back_as_choices(scripted_server):
    scripted_server.script(reply("one", prompt_tokens=100, completion_tokens=10), reply("two", completion_tokens=20))
    done = model(scripted_server).complete(HI, n=2)
    assert done.choices == ("one", "two") and (done.prompt_tokens, done.completion_tokens) == (100, 30)
    assert scripted_server.chat_requests()[0].body["n"] == 2


ANSWER = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20}}, "required": ["answer"]}


def test_a_schema_reaches_the_server_as_a_response_format(scripted_server):
    model(scripted_server).complete(HI, schema=ANSWER)
    sent = scripted_server.chat_requests()[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == ANSWER


def test_rate_limit_retried_by_our_policy_only(scripted_server):
    scripted_server.script(status(429, "slow", retry_after=0.2), reply("ok"))
    assert asyncio.run(model(scripted_server).acomplete(HI)).text == "ok"
    assert len(scripted_server.chat_requests()) == 2


def test_persistent_500_gives_up_after_our_attempts(scripted_server):
    scripted_server.default = status(500, "down")
    with pytest.raises(ModelError, match=r"gave up after 3 attempt\(s\)"):
        model(scripted_server).complete(HI)
    assert len(scripted_server.chat_requests()) == 3


def test_auth_error_is_fatal_at_once(scripted_server):
    scripted_server.default = status(401, "bad key")
    with pytest.raises(ModelFatalError, match="authentication failed"):
        model(scripted_server).complete(HI)
    assert len(scripted_server.chat_requests()) == 1
