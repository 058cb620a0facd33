"""Configuration keys and call ids (solidcoder/core/keys.py): recorded keys are kept, and a later setting at its
declared value leaves every key as it was.

The committed run directories under benchmarks/results/ are the record: each `runs.jsonl` row holds a run's
settings, command line and `config_hash`, its `results.jsonl` rows carry that hash in their keys, and `calls.jsonl`
keeps each reply under its call id. A configuration key also covers the text of the templates a run renders, and
templates have changed since; `PROMPTS` holds, per run, the digest of its templates as they were when it ran
(`templates_digest` of the prompts/ files at the commit before the run), so the checks here are of the key itself
and stay valid when a template is edited.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
from bench_support import bench_command, canonical_responder, rows, run_cli

from solidcoder.bench.plan import LATER_OPTIONS, BenchOptions, config_hash_of
from solidcoder.core.calls import MemoryLog, RecordingModel
from solidcoder.core.keys import config_key, without_later_defaults
from solidcoder.models.base import Message
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.store import read_rows
from solidcoder.strategies import make_strategy
from solidcoder.strategies.paper_settings import LATER_REFINEMENTS, PaperSettings
from solidcoder.strategies.routed import LATER_SETTINGS, RoutedSettings

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
QWEN = "/work/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"  # the recorded runs' model, as their keys name it
# The SHA-256 (`templates_digest`) of the templates some recorded runs rendered, as they were when those runs ran.
DIRECT = "83e1a8dc24d0fd185b16a3d38c917935481c6ce3ff2d501323c311119fb9f612"  # strategies/direct
PAPER = "fc670eaac101203b92c2087d5005340a66f4c7a5804429da04c6c7446bb759a9"  # Algorithm 1's, from 2026-12-02
PLUS = "5606731c010123b6b71041e286ec8bb4ef57c9794ac2b76139e25078d5eb56d9"  # and refinements/red_team_compact
ROUTED_1202 = "2e94324612b603991896c3ce36254bc7270b5c7aef4193c706b4628cd97e0bc2"  # solidcoder-routed's, 2026-12-02
ROUTED_1203 = "72c0534a0c8107d02da8610e0c95ab2a96d969a96d581a171f53643ae370e3bc"  # the same, 2026-12-03
SHARED = "0e333759459ac23fbda7246889e31158b5f8d08ba59ea8824ba493dd2f455e8c"  # and refinements/red_team_shared
TRACE = "de95a69a7e54e9b1ac83aec876d9ad1d915632fbdcce7a403e3ae9dbc7d169fe"  # tasks/trace_output, tasks/trace_variable
# (run directory, config_hash) -> the digest of its templates.
PROMPTS = {
    ("mbpp40_qwen05b_issue15", "0ba56d9dff30"): DIRECT,  # --strategy direct, no --max-calls
    ("humaneval40_qwen05b_issue15", "a34e155d3f36"): PAPER,  # solidcoder
    ("humaneval40_qwen05b_issue15", "2164aa13e782"): PLUS,  # solidcoder+
    ("humaneval40_qwen05b_issue15", "da285178f780"): ROUTED_1202,  # solidcoder-routed:samples=3,max_tier=1
    ("humaneval40_qwen05b_routed_onerequest", "85585b926acc"): ROUTED_1203,  # solidcoder-routed (oracle=program)
    ("humaneval40_qwen05b_routed_onerequest", "88292702645d"): SHARED,  # solidcoder-routed:oracle=shared
    ("paper/solidcoder-smollm2/codecontests", "5b3e3260f02e"): PAPER,  # solidcoder, --max-tokens 96 --max-calls 12
    ("paper/solidcoder-smollm2/codecontests", "2d19e688c0d9"): PAPER,  # solidcoder_no_oracle
    ("paper/coderl-smollm2/cruxeval", "70866d6a5ce7"): TRACE,  # a trace-inference run
}


def recorded_run(directory: str, config: str) -> dict:
    """The last `runs.jsonl` row of `directory` whose configuration is `config`."""
    return [row for row in read_rows(RESULTS / directory / "runs.jsonl") if row["config_hash"] == config][-1]


def options_of(run: dict) -> BenchOptions:
    """The bench options of a recorded run, from its command line (the flags the configuration key covers)."""
    argv = run["argv"]
    return BenchOptions(run["dataset"], run["strategy"], run["model"], Path("unused"),
                        temperature=flag(argv, "--temperature", float), max_tokens=flag(argv, "--max-tokens", int),
                        max_calls=flag(argv, "--max-calls", int))


def flag(argv: list[str], name: str, kind: type) -> float | int | None:
    return kind(argv[argv.index(name) + 1]) if name in argv else None


@pytest.mark.parametrize(("directory", "config"), list(PROMPTS))
def test_recorded_configurations_keep_their_keys(directory, config):
    """Each run's recorded settings and options hash to the key its result rows were written under."""
    run = recorded_run(directory, config)
    assert config_hash_of(options_of(run), run["settings"], PROMPTS[directory, config]) == config
    keys = [row["key"] for row in read_rows(RESULTS / directory / "results.jsonl") if row["config_hash"] == config]
    assert keys and all(key.split("|")[4] == config for key in keys)


@pytest.mark.parametrize(("directory", "config", "strategy"), [
    ("humaneval40_qwen05b_issue15", "a34e155d3f36", "solidcoder"),  # the later refinements off: left out
    ("humaneval40_qwen05b_issue15", "2164aa13e782", "solidcoder+"),  # on: present
    ("paper/solidcoder-smollm2/codecontests", "2d19e688c0d9", "solidcoder_no_oracle"),
])
def test_algorithm1_settings_today_are_the_recorded_ones(directory, config, strategy):
    """A setting added to `PaperSettings` without a `LATER_REFINEMENTS` entry would fail here: it changes the key."""
    run = recorded_run(directory, config)
    settings = make_strategy(strategy).settings()
    assert settings == run["settings"]
    assert config_hash_of(options_of(run), settings, PROMPTS[directory, config]) == config


@pytest.mark.parametrize(("config", "strategy"), [
    # the default then: max_tier, oracle and the prompt format left out
    ("85585b926acc", "solidcoder-routed:oracle=program,max_tier=2,prompt=plain"),
    ("88292702645d", "solidcoder-routed:oracle=shared,max_tier=2,prompt=plain"),
])
def test_routed_settings_today_are_the_recorded_ones_but_the_answer_rule(config, strategy):
    """Every key of today's settings is the recorded one but `answer` (added after these runs on purpose: the
    answer when no tier accepts changed, so it is a new configuration)."""
    run = recorded_run("humaneval40_qwen05b_routed_onerequest", config)
    settings = make_strategy(strategy).settings()
    assert settings.pop("answer") == "best seen"
    assert settings == run["settings"]


def test_a_routed_option_away_from_its_declared_value_is_in_the_settings():
    recorded = recorded_run("humaneval40_qwen05b_issue15", "da285178f780")  # solidcoder-routed:samples=3,max_tier=1
    assert recorded["settings"]["max_tier"] == 1
    settings = make_strategy("solidcoder-routed:max_tier=1,oracle=program,full_calls=none").settings()
    assert settings["max_tier"] == 1 and "oracle" not in settings and "full_calls" not in settings


def test_the_declared_values_are_what_the_strategies_did_before_the_option_existed():
    assert all(getattr(PaperSettings(), name) == value for name, value in LATER_REFINEMENTS.items())
    assert set(LATER_SETTINGS) <= set(RoutedSettings.__dataclass_fields__)
    assert all(getattr(BenchOptions("d", "s", "m", Path("r")), name) == value for name, value in LATER_OPTIONS.items())


@dataclass
class Before:
    """A strategy's settings when its runs were recorded."""

    samples: int = 5
    temperature: float = 0.8


@dataclass
class After(Before):
    """The same settings after a release added `beam` (1: what the strategy did before)."""

    beam: int = 1


def test_adding_a_defaulted_setting_keeps_old_keys():
    later = {"beam": 1}
    assert config_key(After(), later) == config_key(Before())
    assert config_key(After(samples=3), later) == config_key(Before(samples=3))
    assert config_key(After(beam=2), later) != config_key(Before())
    assert config_key(After()) != config_key(Before())  # undeclared, the new setting changes every key


def test_a_defaulted_setting_added_to_a_recorded_configuration_keeps_its_key():
    run = recorded_run("humaneval40_qwen05b_routed_onerequest", "88292702645d")
    key = PROMPTS["humaneval40_qwen05b_routed_onerequest", "88292702645d"]
    for beam, same in ((1, True), (4, False)):
        settings = without_later_defaults(run["settings"] | {"beam": beam}, {"beam": 1})
        assert (config_hash_of(options_of(run), settings, key) == "88292702645d") == same


def test_the_key_is_of_canonical_json_and_a_declared_value_matches_only_as_written():
    assert config_key({"a": 1, "b": [1, 2]}) == config_key({"b": [1, 2], "a": 1})
    assert config_key({"a": 1, "b": 2}) != config_key({"a": 1, "b": 3})
    declared = {"on": False, "n": 1, "t": 0.0, "s": None}
    assert without_later_defaults({"on": False, "n": 1, "t": 0.0, "s": None, "x": 2}, declared) == {"x": 2}
    assert without_later_defaults({"on": 0, "n": True, "t": 0}, declared) == {"on": 0, "n": True, "t": 0}
    assert len(config_key({"a": 1})) == 12 and len(config_key({"a": 1}, length=16)) == 16


# mbpp_234_volume_cube's Direct prompt as the runs below rendered it (strategies/direct, MBPP's fixture row).
VOLUME_CUBE = [
    Message("system", "You write correct, efficient Python 3 code and reply with nothing but a fenced code block."),
    Message("user", 'def volume_cube(l: int) -> int:\n    """\n\tWrite a function to find the volume of a cube given '
                    'its side length.\n\t"""\n\n\nWrite a Python 3 function named `volume_cube` that solves the '
                    "problem. Do not read input or print."),
]


def scripted_model(server, name: str = "scripted-model"):
    return make_model(f"openai/{name}", ModelOptions(api_base=server.url))


@pytest.mark.parametrize(("directory", "config", "sampling"), [
    ("mbpp40_qwen05b_issue15", "0ba56d9dff30", {"temperature": 0.0, "max_tokens": 512}),  # --strategy direct
    ("mbpp40_qwen05b_routed_onerequest", "1b367a3d1d5a", {"temperature": 0.0, "max_tokens": 512, "top_p": 0.95}),
])
def test_recorded_calls_replay_under_the_ids_they_were_logged_with(directory, config, sampling, scripted_server):
    """The unit's first call (the Direct prompt; tier 0 of routing at the loop's top-p) is found in the committed
    log by the id computed today: replayed, never asked."""
    key = "|".join(("mbpp", "mbpp_234_volume_cube", recorded_run(directory, config)["strategy"], QWEN, config, "0"))
    [logged] = [row for row in read_rows(RESULTS / directory / "calls.jsonl") if row["id"].startswith(f"{key}#1#")]
    recorder = RecordingModel(scripted_model(scripted_server), MemoryLog({logged["id"]: logged}, []), key)
    completion = asyncio.run(recorder.acomplete(VOLUME_CUBE, **sampling))
    assert completion.text == logged["completion"]["text"] and recorder.usage.replayed == 1
    assert not scripted_server.chat_requests()


ADD = [Message("system", "You write code."), Message("user", "Write `add`.")]
SCHEMA = {"type": "object", "properties": {"test": {"type": "string"}, "property": {"type": "string"}},
          "required": ["test", "property"]}
# The ids the code wrote before core/keys.py, for each option a request gained after logs were first recorded.
PINNED_IDS = [
    ({"temperature": 0.0, "max_tokens": 512}, "e6ae65fb041efb91"),
    ({"temperature": None, "max_tokens": None}, "40ab287d80c1c808"),
    ({"temperature": 0.0, "max_tokens": 512, "model": "judge"}, "5bf3b2753b4e6b1d"),
    ({"temperature": 0.0, "max_tokens": 512, "top_p": 0.95}, "da4af439423e8218"),
    ({"temperature": 0.0, "max_tokens": 512, "schema": SCHEMA}, "fe07d5dce3b16e3f"),
    ({"temperature": 0.8, "max_tokens": 512, "n": 5}, "c1b6ff3caee060cc"),
    ({"temperature": 0.8, "max_tokens": 512, "model": "judge", "top_p": 0.95, "schema": SCHEMA, "n": 5},
     "ed35f71940466c82"),
    ({"temperature": 0.0, "max_tokens": 512, "model": "unit"}, "e6ae65fb041efb91"),  # the unit's own model: left out
]


@pytest.mark.parametrize(("request_options", "pinned"), PINNED_IDS)
def test_call_ids_are_the_ones_written_before(request_options, pinned, scripted_server):
    models = {"unit": scripted_model(scripted_server), "judge": scripted_model(scripted_server, "judge-model")}
    kwargs = {name: models[value] if name == "model" else value for name, value in request_options.items()}
    reply = {"text": "x", "prompt_tokens": 1, "completion_tokens": 1, "cost_usd": 0.0, "latency_s": 0.0, "model": "m"}
    recorder = RecordingModel(models["unit"], MemoryLog({f"unit#1#{pinned}": {"completion": reply}}, []), "unit")
    asyncio.run(recorder.acomplete(ADD, **kwargs))
    assert recorder.usage.replayed == 1 and not scripted_server.chat_requests()


def test_a_finished_run_directory_resumes_with_nothing_to_run(scripted_server, tmp_path):
    """Rerunning the same bench command runs 0 units and asks nothing; `--max-calls` (a later option, absent at its
    declared value) set to a value is a configuration of its own."""
    scripted_server.responder = canonical_responder()
    command = bench_command(scripted_server.url, tmp_path / "run", limit=2)
    assert run_cli(command).returncode == 0
    asked = len(scripted_server.chat_requests())
    again = run_cli(command)
    assert again.returncode == 0 and "0 of 2 units to run (2 already done)" in again.stdout, again.stderr
    assert len(scripted_server.chat_requests()) == asked == 2
    capped = run_cli([*command, "--max-calls", "3"])
    assert capped.returncode == 0 and "2 of 2 units to run (0 already done)" in capped.stdout, capped.stderr
    assert len({row["config_hash"] for row in rows(tmp_path / "run" / "results.jsonl")}) == 2
