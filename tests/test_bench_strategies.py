"""Strategies through the real runner: baselines with public-test feedback, and the solidcoder+ preset."""

from __future__ import annotations

import asyncio
import sys

import pytest
from scripted_server import reply, status
from stage_router import StageRouter

from solidcoder.bench.runner import BenchRunner, RunSpec
from solidcoder.bench.tasks import CodeTask
from solidcoder.errors import BadInput
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.models.retry import RetryPolicy
from solidcoder.problem import Problem, TestCase, dump_problems
from solidcoder.prompting import PromptLibrary
from solidcoder.stages.base import code_blocks, extract_code
from solidcoder.stages.oracle import parse_test
from solidcoder.store import ResultStore, read_rows
from solidcoder.strategies import make_strategy
from solidcoder.strategies.multi import CodeSim, CodeSimSettings, MapCoder, MapCoderSettings, recalled_examples

ADD = Problem(id="add", kind="call", statement="Write add(a, b) returning a + b.", entry_point="add",
              public_tests=[TestCase(kind="call", script="assert add(1, 2) == 3")],
              hidden_tests=[TestCase(kind="call", call="add(-1, 10)", expected=9)])
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"


def run(server, strategy, sandbox_pool, tmp_path, problems=(ADD,), temperature=None, concurrency=2):
    model = make_model("openai/scripted-model", ModelOptions(api_base=server.url, policy=RetryPolicy(attempts=1)))
    store = ResultStore(tmp_path / "run")
    task = CodeTask(list(problems), strategy, PromptLibrary.from_env(), sandbox_pool, temperature=temperature)
    asyncio.run(BenchRunner(spec=RunSpec("t", strategy.name, "m", "h"), task=task, model=model, store=store,
                            concurrency=concurrency).run())
    store.close()
    return read_rows(tmp_path / "run" / "results.jsonl"), read_rows(tmp_path / "run" / "errors.jsonl")


def test_strategies_read_replies_alike():
    text = "Plan:\n```text\n1. add\n```\nCode:\n```python\ndef f():\n    return 1\n```\nDone."
    assert extract_code(text) == "def f():\n    return 1\n"
    assert extract_code("def g(): pass") == "def g(): pass\n"
    assert extract_code("no code here at all") == ""


def test_a_block_cut_off_by_the_completion_cap_is_read_up_to_its_last_whole_line():
    cut = "```python\ndef f(x):\n    return x + 1\n\nassert f(1) == 2\nassert f(2) == "
    assert extract_code(cut) == "def f(x):\n    return x + 1\n\nassert f(1) == 2\n"
    closed_then_cut = "```python\ndef f(x):\n    return x\n```\nTests:\n```python\n" + "assert f(1) == 1\n" * 9
    assert extract_code(closed_then_cut) == "def f(x):\n    return x\n"  # a closed block that compiles wins
    assert code_blocks(closed_then_cut)[-1] == ("python", "assert f(1) == 1\n" * 9)
    assert code_blocks("```input\n1 2\n3") == []  # a cut-off input is not an input


def test_a_red_team_script_cut_off_by_the_cap_keeps_its_whole_asserts():
    reply = "```python\nassert f([]) == [], 'empty'\nassert f([1, 2]) == [1, 2], 'two'\nassert f([3, 1"
    test = parse_test(reply, "call", "f")
    assert test is not None and test.source == "assert f([]) == [], 'empty'\nassert f([1, 2]) == [1, 2], 'two'\n"


def test_recalled_examples_split_and_carry_the_tutorial():
    reply_text = "### Problem 1\nA\n### Problem 2\nB\n### Algorithm\nGreedy."
    assert recalled_examples(reply_text, 3) == ["A\n\nAlgorithm:\nGreedy.", "B\n\nAlgorithm:\nGreedy."]
    assert recalled_examples("nothing structured", 3) == ["nothing structured"]


def test_mapcoder_debugs_with_public_test_feedback(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("### Problem 1\nsum\n### Algorithm\nmath"), reply("1. add\nCONFIDENCE: 90"),
                           reply(BAD), reply(GOOD))
    results, errors = run(scripted_server, MapCoder(MapCoderSettings(k=1, t=2)), sandbox_pool, tmp_path)
    assert not errors and results[0]["passed"] and results[0]["calls"] == 4
    debug_prompt = scripted_server.chat_requests()[-1].body["messages"][-1]["content"]
    assert "Passed 0 of 1 sample tests" in debug_prompt and "add(1, 2)" in debug_prompt


def test_codesim_replans_after_debug_rounds_run_out(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("### Plan\n1. subtract"), reply(BAD), reply(BAD), reply("### Plan\n1. add"),
                           reply(GOOD))
    results, _ = run(scripted_server, CodeSim(CodeSimSettings(p=2, d=1)), sandbox_pool, tmp_path)
    assert results[0]["passed"] and results[0]["calls"] == 5 and results[0]["notes"]["code_versions"] == 3


@pytest.mark.parametrize("name", ["direct:prompt=plain", "cot", "self_planning", "analogical"])
def test_one_call_strategies(scripted_server, sandbox_pool, tmp_path, name):
    scripted_server.script(reply("Reasoning first.\n" + GOOD))
    results, _ = run(scripted_server, make_strategy(name), sandbox_pool, tmp_path)
    assert results[0]["passed"] and results[0]["calls"] == 1


def test_direct_in_the_makers_format_reads_the_fence_it_opened_continued(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("def add(a, b):\n    return a + b\n```\nDone."))  # as vLLM continues the fence
    results, _ = run(scripted_server, make_strategy("direct"), sandbox_pool, tmp_path)
    assert results[0]["passed"] and results[0]["code"] == "def add(a, b):\n    return a + b\n"


def test_solidcoder_plus_is_algorithm_1_with_the_recommended_refinements(scripted_server, sandbox_pool, tmp_path):
    from solidcoder.strategies.algorithm1 import make_algorithm1
    from solidcoder.strategies.paper_settings import PRESETS

    plus, paper = make_strategy("solidcoder+"), make_algorithm1("solidcoder")
    changed = {k: v for k, v in plus.settings().items() if paper.settings().get(k, False) != v}
    assert changed == PRESETS["solidcoder+"] and changed["candidates"] == 3 and changed["monotonic"]
    router = StageRouter(scripted_server)
    results, errors = run(scripted_server, plus, sandbox_pool, tmp_path)
    assert not errors and results[0]["passed"] and results[0]["notes"]["verified"]
    assert results[0]["calls"] == len(scripted_server.chat_requests()) > 2
    assert router.seen.count("code") == 3  # K = 3 programs for the one plan that was needed


def test_solidcoder_model_outage_is_an_infrastructure_error(scripted_server, sandbox_pool, tmp_path):
    scripted_server.responder = lambda received: status(500, "down")
    results, errors = run(scripted_server, make_strategy("solidcoder+_no_oracle"), sandbox_pool, tmp_path)
    assert not results and errors[0]["error_kind"] == "model"


def test_unknown_strategy_and_ablation():
    with pytest.raises(BadInput, match="unknown strategy"):
        make_strategy("magic")
    with pytest.raises(BadInput, match="unknown SolidCoder ablation"):
        make_strategy("solidcoder+_no_brain")
    assert make_strategy("solidcoder+-no-live").config.live is False
    assert make_strategy("solidcoder+_no_live").config.candidates == 3  # the preset, less one component


def test_resume_replays_the_calls_a_failed_unit_already_paid_for(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("### Plan\n1. subtract"), reply(BAD), status(500, "outage"))
    strategy = CodeSim(CodeSimSettings(p=2, d=1))
    results, errors = run(scripted_server, strategy, sandbox_pool, tmp_path)
    assert not results and errors[0]["error_kind"] == "model" and errors[0]["calls"] == 2
    scripted_server.script(reply(BAD), reply("### Plan\n1. add"), reply(GOOD))
    results, _ = run(scripted_server, strategy, sandbox_pool, tmp_path)
    assert results[0]["passed"] and results[0]["calls"] == 5 and results[0]["replayed_calls"] == 2
    assert len(scripted_server.chat_requests()) == 3 + 3  # the two paid replies were not asked for again


def run_capped(server, strategy, sandbox_pool, tmp_path, max_calls):
    model = make_model("openai/scripted-model", ModelOptions(api_base=server.url, policy=RetryPolicy(attempts=1)))
    store = ResultStore(tmp_path / "run")
    task = CodeTask([ADD], strategy, PromptLibrary.from_env(), sandbox_pool)
    runner = BenchRunner(spec=RunSpec("t", strategy.name, "m", "h"), task=task, model=model, store=store,
                         concurrency=1, max_calls=max_calls)
    totals = asyncio.run(runner.run())
    store.close()
    return totals, read_rows(tmp_path / "run" / "results.jsonl"), read_rows(tmp_path / "run" / "errors.jsonl")


def test_max_calls_judges_the_best_code_so_far(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("### Plan\n1. subtract"), reply(BAD), reply(BAD))
    totals, results, errors = run_capped(scripted_server, CodeSim(), sandbox_pool, tmp_path, 3)
    assert not errors and not results[0]["passed"] and results[0]["calls"] == 3 and not totals.stopped
    assert len(scripted_server.chat_requests()) == 3


def test_max_calls_before_any_code_is_an_error_that_does_not_stop_the_run(scripted_server, sandbox_pool, tmp_path):
    scripted_server.script(reply("### Plan\n1. add"))
    totals, results, errors = run_capped(scripted_server, CodeSim(), sandbox_pool, tmp_path, 1)
    assert not results and "per-problem cap" in errors[0]["error"] and not totals.stopped


def test_max_calls_in_solidcoder_plus_answers_with_its_program_so_far(scripted_server, sandbox_pool, tmp_path):
    StageRouter(scripted_server)
    totals, results, errors = run_capped(scripted_server, make_strategy("solidcoder+"), sandbox_pool, tmp_path, 3)
    assert not errors and not totals.stopped and results[0]["calls"] == 3
    assert results[0]["passed"] and "per-problem cap" in results[0]["notes"]["stopped"]  # the first program


def test_bench_gives_pipeline_roles_their_own_models_and_resumes(scripted_server, tmp_path):
    """`--model M --model judge=J`: judge prompts go to J, every other call to M; rows name both; rerun replays."""
    from bench_support import run_cli
    from stage_router import stage_of

    StageRouter(scripted_server)
    dump_problems([ADD], tmp_path / "add.jsonl")
    args = [sys.executable, "-m", "solidcoder", "bench", "--dataset", "humaneval", "--data-file",
            str(tmp_path / "add.jsonl"), "--strategy", "solidcoder+", "--model", "openai/coder-model",
            "--model", "judge=openai/judge-model", "--api-base", scripted_server.url,
            "--run-dir", str(tmp_path / "run")]
    done = run_cli(args)
    assert done.returncode == 0, done.stderr
    requests = scripted_server.chat_requests()
    by_model = {(stage_of(r), r.body["model"]) for r in requests}
    assert ("judge", "judge-model") in by_model and ("code", "coder-model") in by_model
    assert all(model == "judge-model" for stage, model in by_model if stage == "judge")
    assert all(model == "coder-model" for stage, model in by_model if stage != "judge")
    row = read_rows(tmp_path / "run" / "results.jsonl")[0]
    assert row["model"] == "openai/coder-model,judge=openai/judge-model" and row["calls"] == len(requests)
    again = run_cli(args)
    assert again.returncode == 0 and "0 of 1 units to run (1 already done)" in again.stdout
    assert len(scripted_server.chat_requests()) == len(requests)


@pytest.mark.parametrize(("extra", "message"), [
    (["--model", "jduge=openai/x"], "unknown role; roles are planner"),
    (["--model", "judge=openai/x", "--strategy", "cot"], "--strategy cot has none"),
])
def test_bench_role_models_bad_input(extra, message, tmp_path, humaneval_file):
    from bench_support import run_cli

    done = run_cli([sys.executable, "-m", "solidcoder", "bench", "--dataset", "humaneval", "--data-file",
                    str(humaneval_file), "--strategy", "solidcoder+", *extra,
                    "--run-dir", str(tmp_path / "run")])
    assert done.returncode == 2 and message in done.stderr and not (tmp_path / "run").exists()


def test_run_temperature_reaches_every_call_that_does_not_sample_on_purpose(scripted_server, sandbox_pool, tmp_path):
    """bench --temperature 0.3: plans, simulations, oracles, judges and the first candidate use it, the extra
    candidates keep their own temperature."""
    from stage_router import stage_of

    StageRouter(scripted_server)
    results, _ = run(scripted_server, make_strategy("solidcoder+"), sandbox_pool, tmp_path, temperature=0.3)
    sent = [(stage_of(r), r.body.get("temperature")) for r in scripted_server.chat_requests()]
    assert len({stage for stage, _ in sent}) >= 3 and results[0]["passed"]
    codes = [temperature for stage, temperature in sent if stage == "code"]
    assert codes == [0.3, 0.8, 0.8], sent
    assert all(temperature == 0.3 for stage, temperature in sent if stage != "code"), sent


def test_the_configuration_key_covers_exactly_the_templates_the_strategy_renders(tmp_path):
    """Editing the CoT template leaves a Direct run resumable, and starts a new CoT configuration."""
    from solidcoder.bench.plan import BenchOptions, config_hash_of, templates_digest

    (tmp_path / "p" / "strategies").mkdir(parents=True)
    (tmp_path / "p" / "strategies" / "cot.j2").write_text("=== user ===\n{{ problem }}\nThink first.\n")
    built_in, edited = PromptLibrary.from_env(), PromptLibrary.from_env(tmp_path / "p")
    opts = BenchOptions("humaneval", "direct", "m", tmp_path / "run")
    for name, same in (("direct", True), ("cot", False)):
        strategy = make_strategy(name)
        keys = {config_hash_of(opts, strategy.settings(), templates_digest(library, strategy.templates))
                for library in (built_in, edited)}
        assert (len(keys) == 1) == same, name
