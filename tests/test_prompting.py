"""Prompt templates: every one renders with what its stage passes, overrides follow the lookup order, errors name
the file, line and variable."""

from __future__ import annotations

import re

import pytest
from jinja2 import meta

from solidcoder.errors import BadInput
from solidcoder.models.base import Message
from solidcoder.prompting import (
    PLAIN_TEXT_TEMPLATES,
    TEMPLATE_VARIABLES,
    PromptLibrary,
    builtin_dir,
    check_templates,
    sample_variables,
    split_messages,
)


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No user overrides from this machine leak in: empty config home, no SOLIDCODER_PROMPTS."""
    monkeypatch.delenv("SOLIDCODER_PROMPTS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def write(root, name, text):
    path = root / f"{name}.j2"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_registry_lists_exactly_the_builtin_templates(clean_env):
    names = {src.name for src in PromptLibrary.from_env().sources()}
    assert names == set(TEMPLATE_VARIABLES)
    assert all(src.origin == "built-in" for src in PromptLibrary.from_env().sources())


@pytest.mark.parametrize("name", sorted(TEMPLATE_VARIABLES))
def test_template_uses_exactly_its_declared_variables(name, clean_env):
    library = PromptLibrary.from_env()
    source = (builtin_dir() / f"{name}.j2").read_text()
    assert meta.find_undeclared_variables(library.env.parse(source)) == TEMPLATE_VARIABLES[name]


@pytest.mark.parametrize("io_mode", ["call", "stdin"])
@pytest.mark.parametrize("name", sorted(set(TEMPLATE_VARIABLES) - PLAIN_TEXT_TEMPLATES))
def test_template_renders_to_system_and_user_messages(name, io_mode, clean_env):
    messages = PromptLibrary.from_env().messages(name, **sample_variables(name, io_mode))
    continued = ["assistant"] if name == "strategies/direct_qwen" else []  # the reply's opening fence
    assert [m.role for m in messages] == ["system", "user", *continued]
    if "problem" in TEMPLATE_VARIABLES[name]:  # trace-inference tasks show a program, not a problem statement
        assert "<problem>" in messages[1].content or "<problem>" in messages[0].content
    assert all(m.content and "{{" not in m.content and "{%" not in m.content for m in messages)


def test_io_mode_changes_the_instructions(clean_env):
    library = PromptLibrary.from_env()
    call = library.render("paper/code", **sample_variables("paper/code", "call"))
    stdin = library.render("paper/code", **sample_variables("paper/code", "stdin"))
    assert "function `solve`" in call and "standard input" not in call
    assert "standard input" in stdin and "`solve`" not in stdin


def test_lookup_order_prompts_dir_then_env_then_user_config_then_builtin(monkeypatch, clean_env):
    flag_dir, env_dir, user_root = clean_env / "flag", clean_env / "env", clean_env / "config"
    for root, tag in ((flag_dir, "flag"), (env_dir, "env"), (user_root / "solidcoder" / "prompts", "user")):
        write(root, "paper/code", f"from {tag}")
        write(root, f"only/{tag}", f"only {tag}")
    monkeypatch.setenv("SOLIDCODER_PROMPTS", str(env_dir))
    full = PromptLibrary.from_env(flag_dir)
    assert full.render("paper/code") == "from flag"
    assert [full.render(f"only/{t}") for t in ("flag", "env", "user")] == ["only flag", "only env", "only user"]
    assert full.source("paper/code").origin == "--prompts"
    assert full.source("paper/debug").origin == "built-in"
    assert PromptLibrary.from_env().render("paper/code") == "from env"
    monkeypatch.delenv("SOLIDCODER_PROMPTS")
    assert PromptLibrary.from_env().render("paper/code") == "from user"
    (user_root / "solidcoder" / "prompts" / "paper" / "code.j2").unlink()
    assert PromptLibrary.from_env().render("paper/code", **sample_variables("paper/code")).startswith("=== system")


def test_missing_prompts_dir_is_bad_input(clean_env):
    with pytest.raises(BadInput, match="--prompts: no such directory"):
        PromptLibrary.from_env(clean_env / "nope")


def test_unknown_variable_names_file_line_and_variable(clean_env):
    path = write(clean_env / "p", "paper/code", "=== user ===\n{{ problem }}\n{{ planz }}\n")
    with pytest.raises(BadInput) as info:
        PromptLibrary.from_env(clean_env / "p").render("paper/code", problem="x")
    assert f"{path}:3:" in str(info.value) and "'planz' is undefined" in str(info.value)


def test_syntax_error_names_file_and_line(clean_env):
    path = write(clean_env / "p", "paper/code", "=== user ===\nok\n{% if problem %}\nno end\n")
    with pytest.raises(BadInput, match=rf"{path}:\d+: template syntax error"):
        PromptLibrary.from_env(clean_env / "p").render("paper/code", problem="x")


def test_check_finds_unknown_variable_in_a_branch_not_taken(clean_env):
    text = "=== user ===\n{{ problem }}\n{% if io_mode == 'nope' %}\n{{ secret }}\n{% endif %}\n"
    path = write(clean_env / "p", "strategies/direct", text)
    with pytest.raises(BadInput, match=rf"{path}:4: template uses an unknown variable 'secret'"):
        check_templates(PromptLibrary.from_env(clean_env / "p"))


def test_unknown_template_is_bad_input(clean_env):
    with pytest.raises(BadInput, match="unknown prompt 'paper/nope'"):
        PromptLibrary.from_env().render("paper/nope")


def test_split_messages():
    text = "=== system ===\nbe exact\n=== user ===\nline 1\n=== not a marker\n=== assistant ===\nok\n"
    assert split_messages(text) == [
        Message("system", "be exact"),
        Message("user", "line 1\n=== not a marker"),
        Message("assistant", "ok"),
    ]
    assert split_messages("just a question\n") == [Message("user", "just a question")]
    # a final assistant message is the start of the reply: a code fence it opens last gets its newline
    assert split_messages("=== user ===\nhi\n=== assistant ===\n```python\n")[-1] == Message("assistant",
                                                                                              "```python\n")
    assert split_messages("=== user ===\nhi\n=== assistant ===\nok\n")[-1] == Message("assistant", "ok")
    with pytest.raises(BadInput, match="before its first"):
        split_messages("stray\n=== user ===\nhi")


def test_export_copies_the_winning_files(clean_env):
    override = clean_env / "p"
    write(override, "paper/code", "mine")
    written = PromptLibrary.from_env(override).export(clean_env / "out")
    assert len(written) == len(TEMPLATE_VARIABLES)
    assert (clean_env / "out" / "paper" / "code.j2").read_text() == "mine"
    builtin = (builtin_dir() / "paper" / "debug.j2").read_text()
    assert (clean_env / "out" / "paper" / "debug.j2").read_text() == builtin


DIRECT_WITHOUT_USER = "=== system ===\nReply with code.\n{{ problem }} {{ language }} {{ io_mode }} {{ entry_point }}\n"


def test_check_rejects_a_template_without_a_user_message(clean_env):
    path = write(clean_env / "p", "strategies/direct", DIRECT_WITHOUT_USER)
    with pytest.raises(BadInput, match=rf"^{re.escape(str(path))}: no '=== user ===' message .* only: system\)"):
        check_templates(PromptLibrary.from_env(clean_env / "p"))


@pytest.mark.parametrize("header", ["=== User ===", "=== user", " === user ===", "==user==", "=== user === now"])
def test_check_rejects_a_malformed_header_naming_file_and_line(header, clean_env):
    text = f"=== system ===\nReply with code.\n{header}\n{{{{ problem }}}}\n"
    path = write(clean_env / "p", "strategies/direct", text)
    with pytest.raises(BadInput) as info:
        check_templates(PromptLibrary.from_env(clean_env / "p"))
    assert str(info.value).startswith(f"{path}:3: malformed message header {header.strip()!r}")


def test_check_names_the_file_of_text_before_the_first_header_and_accepts_a_template_without_headers(clean_env):
    path = write(clean_env / "p", "strategies/direct", "Reply with code.\n=== user ===\n{{ problem }}\n")
    with pytest.raises(BadInput, match=rf"^{re.escape(str(path))}: prompt has text before its first"):
        check_templates(PromptLibrary.from_env(clean_env / "p"))
    write(clean_env / "p", "strategies/direct", "Solve {{ problem }} in {{ language }}.\n")  # one user message
    assert "strategies/direct" in check_templates(PromptLibrary.from_env(clean_env / "p"))


def test_export_refuses_to_overwrite_an_edited_file_and_writes_nothing(clean_env):
    library, out = PromptLibrary.from_env(), clean_env / "out"
    assert len(library.export(out)) == len(library.export(out)) == len(TEMPLATE_VARIABLES)  # identical: no conflict
    (out / "paper" / "debug.j2").write_text("my edit")
    (out / "paper" / "code.j2").unlink()
    with pytest.raises(BadInput) as info:
        library.export(out)
    message = str(info.value)
    assert message.startswith(f"{out / 'paper' / 'debug.j2'} exists and differs") and "use --force" in message
    assert (out / "paper" / "debug.j2").read_text() == "my edit" and not (out / "paper" / "code.j2").exists()
    library.export(out, force=True)
    assert (out / "paper" / "debug.j2").read_text() == (builtin_dir() / "paper" / "debug.j2").read_text()
    assert (out / "paper" / "code.j2").is_file()


def test_export_into_a_file_is_bad_input(clean_env):
    (clean_env / "out").write_text("not a folder")
    with pytest.raises(BadInput, match="is a file, not a directory"):
        PromptLibrary.from_env().export(clean_env / "out", force=True)
