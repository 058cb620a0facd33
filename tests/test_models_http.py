"""The OpenAI-compatible backend against a real scripted HTTP server: replies, retries, give-ups, cost, budget."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from scripted_server import hang, malformed, reply, status

from solidcoder.errors import BudgetExceeded, ModelError, ModelFatalError
from solidcoder.models import Budget, BudgetConfig, Message
from solidcoder.models.openai_compat import OpenAICompatModel
from solidcoder.models.retry import RetryPolicy
from solidcoder.models.settings import ModelSettings
from solidcoder.prompting import PromptLibrary

FAST = RetryPolicy(attempts=3, base_wait_s=0.01, max_wait_s=2.0, max_total_wait_s=10.0, timeout_s=0.5)
PRICED = ModelSettings(cost_per_input_token=0.001, cost_per_output_token=0.002, temperature=0.3, max_tokens=64)
HELLO = [Message("system", "be brief"), Message("user", "say hi")]


def model(server, settings=PRICED, policy=FAST, budget=None):
    return OpenAICompatModel("scripted-model", server.url, settings, policy, budget)


def test_reply_records_text_tokens_cost_and_latency(scripted_server):
    scripted_server.script(reply("hi there", prompt_tokens=11, completion_tokens=4, delay_s=0.2))
    budget = Budget()
    done = model(scripted_server, budget=budget).complete(HELLO)
    assert (done.text, done.prompt_tokens, done.completion_tokens) == ("hi there", 11, 4)
    assert done.cost_usd == pytest.approx(11 * 0.001 + 4 * 0.002)
    assert done.latency_s >= 0.2
    assert (budget.calls, budget.tokens, budget.cost_usd) == (1, 15, pytest.approx(done.cost_usd))
    body = scripted_server.chat_requests()[0].body
    assert body["model"] == "scripted-model"
    assert (body["temperature"], body["max_tokens"]) == (0.3, 64)
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi"}]


def test_explicit_temperature_and_max_tokens_override_settings(scripted_server):
    model(scripted_server).complete(HELLO, temperature=0.0, max_tokens=5)
    body = scripted_server.chat_requests()[0].body
    assert (body["temperature"], body["max_tokens"]) == (0.0, 5)


ANSWER = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20}}, "required": ["answer"]}


def test_a_schema_is_sent_as_a_json_schema_response_format(scripted_server):
    model(scripted_server).complete(HELLO, schema=ANSWER)
    model(scripted_server).complete(HELLO)
    first, second = (r.body for r in scripted_server.chat_requests())
    assert first["response_format"] == {"type": "json_schema",
                                        "json_schema": {"name": "reply", "schema": ANSWER, "strict": True}}
    assert "response_format" not in second


def test_several_choices_go_out_as_one_request_and_the_prompt_is_billed_once(scripted_server):
    scripted_server.script(*(reply(f"choice {i}", prompt_tokens=10, completion_tokens=3) for i in range(3)))
    budget = Budget()
    done = model(scripted_server, budget=budget).complete(HELLO, n=3)
    assert done.choices == ("choice 0", "choice 1", "choice 2") and done.text == "choice 0"
    assert (done.prompt_tokens, done.completion_tokens, budget.calls) == (10, 9, 1)
    assert done.cost_usd == pytest.approx(10 * 0.001 + 9 * 0.002)
    assert [r.body.get("n") for r in scripted_server.chat_requests()] == [3]
    model(scripted_server).complete(HELLO)
    assert "n" not in scripted_server.chat_requests()[1].body  # one choice: the body carries no n


def test_a_server_that_refuses_n_gets_one_request_per_choice_and_each_prompt_counts(scripted_server):
    from dataclasses import replace

    scripted_server.script(*(reply(f"choice {i}", prompt_tokens=10, completion_tokens=3) for i in range(3)))
    budget = Budget()
    done = model(scripted_server, replace(PRICED, sends_n=False), budget=budget).complete(HELLO, n=3)
    assert done.choices == ("choice 0", "choice 1", "choice 2")
    assert (done.prompt_tokens, done.completion_tokens, budget.calls) == (30, 9, 3)
    assert [r.body.get("n") for r in scripted_server.chat_requests()] == [None] * 3


def test_top_p_is_sent_only_when_asked_for(scripted_server):
    model(scripted_server).complete(HELLO, top_p=0.95)
    model(scripted_server).complete(HELLO)
    first, second = (r.body for r in scripted_server.chat_requests())
    assert first["top_p"] == 0.95 and "top_p" not in second


def test_a_rendered_templates_name_travels_as_a_header_not_as_text(scripted_server):
    messages = PromptLibrary.from_env().messages("strategies/direct", problem="Add.", language="Python 3",
                                                 io_mode="call", entry_point="add")
    asyncio.run(model(scripted_server).acomplete(messages))
    model(scripted_server).complete(HELLO)  # messages not rendered from a template carry no header
    first, second = scripted_server.chat_requests()
    assert {k.lower(): v for k, v in first.headers.items()}["x-solidcoder-template"] == "strategies/direct"
    assert "strategies/direct" not in str(first.body)
    assert "x-solidcoder-template" not in {k.lower() for k in second.headers}


def test_rate_limit_waits_for_retry_after_then_succeeds(scripted_server):
    scripted_server.script(status(429, "slow down", retry_after=0.4), reply("after wait"))
    assert model(scripted_server).complete(HELLO).text == "after wait"
    first, second = scripted_server.chat_requests()
    assert second.at - first.at >= 0.4


def test_server_errors_are_retried(scripted_server):
    scripted_server.script(status(500), status(503), reply("third time"))
    assert model(scripted_server).complete(HELLO).text == "third time"
    assert len(scripted_server.chat_requests()) == 3


def test_persistent_server_error_gives_up_with_message(scripted_server):
    scripted_server.default = status(500, "boom")
    budget = Budget()
    with pytest.raises(ModelError, match=r"gave up after 3 attempt\(s\).*server error 500") as info:
        model(scripted_server, budget=budget).complete(HELLO)
    assert not isinstance(info.value, ModelFatalError)
    assert len(scripted_server.chat_requests()) == 3
    assert budget.tokens == 0


def test_malformed_json_is_retried_then_reported(scripted_server):
    scripted_server.script(malformed(), reply("fine now"))
    assert model(scripted_server).complete(HELLO).text == "fine now"
    scripted_server.default = malformed()
    with pytest.raises(ModelError, match="malformed reply"):
        model(scripted_server).complete(HELLO)


def test_hung_server_is_bounded_by_the_per_call_timeout(scripted_server):
    scripted_server.script(hang(30), reply("woke up"))
    start = time.monotonic()
    assert model(scripted_server).complete(HELLO).text == "woke up"
    assert 0.5 <= time.monotonic() - start < 5
    scripted_server.default = hang(30)
    start = time.monotonic()
    with pytest.raises(ModelError, match="per-call timeout"):
        model(scripted_server).complete(HELLO)
    assert time.monotonic() - start < 5


def test_authentication_error_gives_up_at_once(scripted_server):
    scripted_server.default = status(401, "invalid api key")
    with pytest.raises(ModelFatalError, match="authentication failed.*API key"):
        model(scripted_server).complete(HELLO)
    assert len(scripted_server.chat_requests()) == 1


def test_context_window_error_says_what_to_do(scripted_server):
    scripted_server.default = status(400, "This model's maximum context length is 2048 tokens")
    with pytest.raises(ModelFatalError, match="context window; use a model with a larger window"):
        model(scripted_server).complete(HELLO)
    assert len(scripted_server.chat_requests()) == 1


def test_other_bad_request_is_fatal(scripted_server):
    scripted_server.default = status(400, "temperature must be <= 2")
    with pytest.raises(ModelFatalError, match=r"request rejected \(400\).*temperature must be"):
        model(scripted_server).complete(HELLO)
    assert len(scripted_server.chat_requests()) == 1


def test_empty_reply_is_an_error_not_an_answer(scripted_server):
    scripted_server.script(reply("   ", prompt_tokens=9, completion_tokens=0))
    budget = Budget()
    with pytest.raises(ModelError, match="empty reply"):
        model(scripted_server, budget=budget).complete(HELLO)
    assert budget.prompt_tokens == 9


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = OpenAICompatModel("m", f"http://127.0.0.1:{port}/v1", PRICED, FAST)
    with pytest.raises(ModelError, match=r"gave up after 3 attempt\(s\).*cannot connect"):
        backend.complete(HELLO)


def test_model_without_system_role_gets_it_folded_into_the_user_turn(scripted_server):
    no_system = ModelSettings(system_role=False)
    model(scripted_server, settings=no_system).complete(HELLO)
    assert scripted_server.chat_requests()[0].body["messages"] == [{"role": "user", "content": "be brief\n\nsay hi"}]


def test_async_complete_retries_and_counts(scripted_server):
    scripted_server.script(status(502), reply("async ok", prompt_tokens=3, completion_tokens=2))
    budget = Budget()
    done = asyncio.run(model(scripted_server, budget=budget).acomplete(HELLO))
    assert (done.text, done.total_tokens, budget.calls) == ("async ok", 5, 1)
    assert len(scripted_server.chat_requests()) == 2


def test_async_calls_run_concurrently(scripted_server):
    scripted_server.default = reply("slow", delay_s=0.4)
    backend = model(scripted_server)

    async def three():
        return await asyncio.gather(*(backend.acomplete(HELLO) for _ in range(3)))

    start = time.monotonic()
    assert [c.text for c in asyncio.run(three())] == ["slow"] * 3
    assert time.monotonic() - start < 1.0


def test_call_cap_stops_the_run_before_the_request(scripted_server):
    budget = Budget(BudgetConfig(max_calls=2))
    backend = model(scripted_server, budget=budget)
    backend.complete(HELLO)
    backend.complete(HELLO)
    with pytest.raises(BudgetExceeded, match="2 calls made, cap 2"):
        backend.complete(HELLO)
    assert len(scripted_server.chat_requests()) == 2


def test_token_and_cost_caps(scripted_server):
    scripted_server.default = reply("x", prompt_tokens=60, completion_tokens=40)
    by_tokens = model(scripted_server, budget=Budget(BudgetConfig(max_tokens=150)))
    by_tokens.complete(HELLO)
    by_tokens.complete(HELLO)
    with pytest.raises(BudgetExceeded, match="200 tokens used, cap 150"):
        by_tokens.complete(HELLO)
    by_cost = model(scripted_server, budget=Budget(BudgetConfig(max_cost_usd=0.1)))
    by_cost.complete(HELLO)  # 60 * 0.001 + 40 * 0.002 = 0.14
    with pytest.raises(BudgetExceeded, match="spent"):
        by_cost.complete(HELLO)


def test_call_cap_holds_across_threads(scripted_server):
    scripted_server.default = reply("t", delay_s=0.05)
    budget = Budget(BudgetConfig(max_calls=5))
    backend = model(scripted_server, budget=budget)
    refused = []

    def worker():
        try:
            backend.complete(HELLO)
        except BudgetExceeded:
            refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (len(scripted_server.chat_requests()), len(refused), budget.calls) == (5, 7, 5)


CONTINUE = [Message("user", "write f"), Message("assistant", "```python\n")]


def test_stop_strings_are_sent_and_cut_from_the_reply_whatever_the_server_does(scripted_server):
    scripted_server.script(reply("def f():\n    return 1\nprint(f())\n```"))  # a server that ignored them
    done = model(scripted_server).complete(HELLO, stop=("\nprint(", "\n```"))
    assert done.text == "def f():\n    return 1"
    assert scripted_server.chat_requests()[0].body["stop"] == ["\nprint(", "\n```"]


def test_a_server_that_takes_few_stop_strings_gets_that_many_and_the_rest_are_cut(scripted_server):
    scripted_server.script(reply("a\n#b"))
    done = model(scripted_server, settings=ModelSettings(max_stop=1)).complete(HELLO, stop=("\nprint(", "\n#"))
    assert scripted_server.chat_requests()[0].body["stop"] == ["\nprint("] and done.text == "a"


def test_a_final_assistant_message_is_continued_and_the_reply_holds_prefix_and_continuation(scripted_server):
    scripted_server.script(reply("def f():\n    return 1\n```\nMore prose"))
    done = model(scripted_server).complete(CONTINUE, stop=("\n```",))
    body = scripted_server.chat_requests()[0].body
    assert body["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert (body["continue_final_message"], body["add_generation_prompt"]) == (True, False)
    assert done.text == "```python\ndef f():\n    return 1"


def test_plain_requests_carry_neither_stop_nor_continuation(scripted_server):
    model(scripted_server).complete(HELLO)
    body = scripted_server.chat_requests()[0].body
    assert not {"stop", "continue_final_message", "add_generation_prompt"} & body.keys()
