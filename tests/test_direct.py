"""Direct as the published baselines run it (greedy), sampled one option away, and best-of-n Direct, the
equal-compute line of `report` (issue 37): real HTTP to the scripted server, the real sandbox."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scripted_server import reply
from test_bench_strategies import ADD, BAD, GOOD, run

from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase
from solidcoder.store import ResultRow, ResultStore
from solidcoder.strategies import make_strategy
from solidcoder.strategies.simple import DirectSettings, parse_direct

WRONG_OUTPUT = "```python\ndef add(a, b):\n    return 0\n```"
ADD_CALL = replace(ADD, public_tests=[TestCase(kind="call", call="add(1, 2)", expected=3)])  # values to vote on


def test_direct_is_greedy_unless_the_run_sets_a_temperature(scripted_server, sandbox_pool, tmp_path):
    scripted_server.default = reply(GOOD)
    run(scripted_server, make_strategy("direct"), sandbox_pool, tmp_path / "a")
    run(scripted_server, make_strategy("direct"), sandbox_pool, tmp_path / "b", temperature=0.4)
    run(scripted_server, make_strategy("direct:sampled"), sandbox_pool, tmp_path / "c")
    sent = [r.body.get("temperature") for r in scripted_server.chat_requests()]
    assert sent == [0.0, 0.4, 0.2]  # 0.2: the model's default (models/settings.py), as `direct` was before


def test_greedy_and_sampled_direct_have_configurations_of_their_own():
    plain = make_strategy("direct:prompt=plain").settings()
    sampled = make_strategy("direct:sampled,prompt=plain").settings()
    assert sampled == {"template": "strategies/direct"}  # the settings `direct` had before it was greedy
    assert plain == {"template": "strategies/direct", "temperature": 0.0}  # before the maker's format
    assert make_strategy("direct").settings() == make_strategy("direct:prompt=qwen").settings() != plain


@pytest.mark.parametrize("options", ["n=0", "n=x", "sampled,n=3", "temperature=3", "best=2"])
def test_a_bad_direct_option_is_bad_input(options):
    with pytest.raises(BadInput):
        parse_direct(options)


def test_best_of_n_samples_in_one_request_and_answers_for_every_k(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply(BAD), reply(WRONG_OUTPUT), reply(GOOD))
    results, errors = run(scripted_server, make_strategy("direct:n=3"), sandbox_pool, tmp_path)
    assert errors == [] and len(scripted_server.chat_requests()) == 1
    body = scripted_server.chat_requests()[0].body
    assert (body["n"], body["temperature"]) == (3, 0.8)
    row = results[0]
    assert row["notes"]["best_of"]["picks"] == [0, 0, 2]  # none passes in the first two: the earliest of a tie
    assert row["alternatives_passed"] == {"1": False, "2": False, "3": True, "sample 1": False, "sample 2": False,
                                          "sample 3": True} and row["passed"]


def test_best_of_n_without_a_passing_sample_takes_the_behaviour_majority(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply(WRONG_OUTPUT), reply(BAD), reply(BAD))
    results, _ = run(scripted_server, make_strategy("direct:n=3"), sandbox_pool, tmp_path, [ADD_CALL])
    assert results[0]["notes"]["best_of"]["picks"] == [0, 0, 1]  # two BADs outvote one WRONG_OUTPUT at k = 3
    assert results[0]["code"].strip().endswith("return a - b")


def _rows(store: ResultStore, strategy: str, passes: str, tokens: tuple[int, int], alternatives=None) -> None:
    for i, flag in enumerate(passes):
        store.add_result(ResultRow(key=f"{strategy}{i}", id=f"p{i}", passed=flag == "1", dataset="d",
                                   strategy=strategy, model="m", config_hash=strategy, prompt_tokens=tokens[0],
                                   completion_tokens=tokens[1],
                                   alternatives_passed=alternatives(i) if alternatives else None))


def test_report_prices_best_of_k_at_each_strategys_completion_tokens(tmp_path):
    from solidcoder.bench.report import load_summaries, signal_lines

    store = ResultStore(tmp_path)
    _rows(store, "direct", "1100000000", (100, 100))
    _rows(store, "solidcoder-routed", "1111111011", (200, 300))  # 300 completion tokens: best-of-3 costs 3 * 100
    _rows(store, "direct:n=5", "1111100000", (100, 500), lambda i: {str(k): i < k for k in range(1, 6)})
    store.close()
    lines = signal_lines(load_summaries([tmp_path]))
    routed = next(line for line in lines if "solidcoder-routed (m) against Direct best-of" in line)
    assert routed.startswith("d solidcoder-routed (m) against Direct best-of-3 at equal completion tokens (300 "
                             "against 300 per problem; model seconds 0.0 against 0.0; best-of-3 30.0 %): +60.0 points")
    assert "won 6, lost 0 of 10" in routed
    direct = next(line for line in lines if line.startswith("d direct (m) against Direct best-of"))
    assert "best-of-1 " in direct  # 100 completion tokens: one sample


def test_the_baseline_is_sampled_as_the_strategy_samples_and_the_oracle_stands_beside_it(tmp_path):
    from solidcoder.bench.report import load_summaries, signal_lines

    def judged(i: int) -> dict[str, bool]:  # problem i: sample 1 right on p0, sample 4 on p1, none elsewhere
        samples = {f"sample {j}": (i, j) in {(0, 1), (1, 4)} for j in range(1, 6)}
        return {str(k): i == 0 for k in range(1, 6)} | samples

    store = ResultStore(tmp_path)
    _rows(store, "solidcoder-routed:prompt=qwen", "1100", (200, 300))
    _rows(store, "direct:n=5", "1111", (100, 500), lambda i: {str(k): True for k in range(1, 6)})
    _rows(store, "direct:n=5,prompt=qwen", "1000", (100, 500), judged)
    _rows(store, "solidcoder-routed", "1100", (200, 300))
    store.close()
    lines = signal_lines(load_summaries([tmp_path]))
    qwen = next(line for line in lines if line.startswith("d solidcoder-routed:prompt=qwen (m) against"))
    assert "best-of-3 25.0 %; oracle (any right sample) 25.0 % of 3, 50.0 % of 5)" in qwen  # the qwen run's
    plain = next(line for line in lines if line.startswith("d solidcoder-routed (m) against Direct best-of"))
    assert "best-of-3 100.0 %)" in plain and "oracle" not in plain  # the plain run judged no sample on its own


def test_a_baseline_sampled_otherwise_is_named(tmp_path):
    from solidcoder.bench.report import load_summaries, signal_lines

    store = ResultStore(tmp_path)
    _rows(store, "solidcoder-routed:prompt=qwen,temperature=0.6", "10", (200, 300))
    _rows(store, "direct:n=5", "11", (100, 500), lambda i: {str(k): True for k in range(1, 6)})
    store.close()
    line = next(line for line in signal_lines(load_summaries([tmp_path])) if "against Direct best-of" in line)
    assert "the baseline differs: prompt plain where it samples at qwen, temperature 0.8 where it samples at 0.6" \
        in line


def test_direct_settings_default_is_greedy_one_sample():
    assert DirectSettings() == parse_direct("") and parse_direct("n=5,temperature=0.7").n == 5


QWEN_REPLY = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\n```\nThis adds."  # as a server ignoring stops


def test_the_makers_format_prefills_a_fence_stops_and_sanitizes(scripted_server, sandbox_pool, tmp_path):
    scripted_server.default = reply(QWEN_REPLY)
    results, errors = run(scripted_server, make_strategy("direct:prompt=qwen"), sandbox_pool, tmp_path)
    body = scripted_server.chat_requests()[0].body
    assert body["messages"][0]["content"].startswith("You are an intelligent programming assistant")
    assert body["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert "\nprint(" in body["stop"] and "\n```" in body["stop"] and body["temperature"] == 0.0
    assert errors == [] and results[0]["passed"]
    assert results[0]["code"] == "def add(a, b):\n    return a + b\n"  # cut at the stop string, then sanitized


def test_the_makers_format_has_its_own_key_and_the_plain_one_keeps_its_old_key():
    qwen = make_strategy("direct:prompt=qwen").settings()
    assert qwen["template"] == "strategies/direct_qwen" and qwen["prompt"] == "qwen" and qwen["stop"]
    assert "prompt" not in make_strategy("direct:n=5,prompt=plain").settings()  # as `direct:n=5` was recorded


def test_a_stdin_problem_gets_the_plain_format(scripted_server, sandbox_pool, tmp_path):
    stdin = Problem(id="echo", kind="stdio", statement="Print the input.",
                    public_tests=[TestCase(kind="stdio", stdin="3\n", expected_stdout="3\n")])
    scripted_server.default = reply("```python\nprint(input())\n```")
    results, _ = run(scripted_server, make_strategy("direct:prompt=qwen"), sandbox_pool, tmp_path, [stdin])
    body = scripted_server.chat_requests()[0].body
    assert "stop" not in body and body["messages"][-1]["role"] == "user" and results[0]["passed"]
