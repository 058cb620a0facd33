"""Model settings: the packaged table, user overrides merged per key, lookup rules, and system-role folding."""

from __future__ import annotations

import pytest

from solidcoder.errors import BadInput
from solidcoder.models.base import Message
from solidcoder.models.settings import ModelSettings, load_settings


@pytest.fixture
def no_user_file(monkeypatch, tmp_path):
    monkeypatch.delenv("SOLIDCODER_MODELS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def test_packaged_table_knows_prices_and_quirks(no_user_file):
    table = load_settings()
    assert table.get("gpt-4o-mini").cost_per_input_token == pytest.approx(1.5e-7)
    assert table.get("openai/gpt-4o-mini") == table.get("gpt-4o-mini")
    assert table.get("anthropic/claude-3-5-sonnet-20241022").context_window == 200000
    assert table.get("google/Gemma-2-9b-it").system_role is False
    assert table.get("SmolLM2-135M-Instruct.Q4_1").context_window == 2048
    unknown = table.get("openai/some-local-model")
    assert (unknown.cost(1000, 1000), unknown.system_role) == (0.0, True)


def test_user_file_merges_per_key(no_user_file, monkeypatch):
    user = no_user_file / "models.yaml"
    user.write_text(
        "defaults:\n  temperature: 0.7\n"
        "models:\n  gpt-4o-mini:\n    cost_per_output_token: 1.0\n  my-model:\n    system_role: false\n"
    )
    monkeypatch.setenv("SOLIDCODER_MODELS", str(user))
    table = load_settings()
    mini = table.get("gpt-4o-mini")
    assert (mini.cost_per_output_token, mini.cost_per_input_token, mini.temperature) == (1.0, 1.5e-7, 0.7)
    assert table.get("openai/my-model").system_role is False


def test_user_file_in_config_dir_is_found(no_user_file):
    path = no_user_file / "config" / "solidcoder" / "models.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("models:\n  judge-model:\n    context_window: 99\n")
    assert load_settings().get("judge-model").context_window == 99


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models: [1, 2", "not valid YAML"),
        ("- a list\n", "expected a mapping"),
        ("models:\n  m:\n    context_windw: 5\n", "unknown key\\(s\\) context_windw"),
    ],
)
def test_bad_user_file_is_bad_input(no_user_file, monkeypatch, text, message):
    user = no_user_file / "models.yaml"
    user.write_text(text)
    monkeypatch.setenv("SOLIDCODER_MODELS", str(user))
    with pytest.raises(BadInput, match=message):
        load_settings().get("m")


def test_missing_file_named_by_env_is_bad_input(no_user_file, monkeypatch):
    monkeypatch.setenv("SOLIDCODER_MODELS", str(no_user_file / "absent.yaml"))
    with pytest.raises(BadInput, match="does not exist"):
        load_settings()


def test_system_role_folding():
    msgs = [Message("system", "rules"), Message("user", "question"), Message("assistant", "a"), Message("user", "b")]
    folded = ModelSettings(system_role=False).adapt(msgs)
    assert folded == [Message("user", "rules\n\nquestion"), Message("assistant", "a"), Message("user", "b")]
    assert ModelSettings(system_role=True).adapt(msgs) == msgs
    assert ModelSettings(system_role=False).adapt([Message("system", "only")]) == [Message("user", "only")]
