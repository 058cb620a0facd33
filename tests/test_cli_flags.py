"""One meaning per flag: shared flags are defined once, and each command that has one honours it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata

import typer
from bench_support import bench_command, run_cli
from scripted_server import reply

from solidcoder.cli import app

SHARED = ("--api-base", "--api-key", "--max-calls", "--max-tokens", "--workers", "--data-file",
          "--prompts", "--executor")


def options_by_flag(command, path: str = "") -> dict[str, dict[str, str]]:
    """{flag: {command path: help}} over the whole command tree."""
    found: dict[str, dict[str, str]] = {}
    if hasattr(command, "commands"):  # a group (typer ships its own click, so no isinstance)
        for name, sub in command.commands.items():
            for flag, where in options_by_flag(sub, f"{path} {name}".strip()).items():
                found.setdefault(flag, {}).update(where)
        return found
    for param in command.params:
        if param.param_type_name == "option":
            for flag in param.opts:
                found.setdefault(flag, {})[path] = param.help or ""
    return found


def test_every_shared_flag_reads_the_same_on_every_command():
    flags = options_by_flag(typer.main.get_command(app))
    for flag in SHARED:
        helps = {help_text.split(" (-1")[0] for help_text in flags[flag].values()}
        assert len(helps) == 1, (flag, flags[flag])


def test_the_api_key_and_the_workers_reach_every_command_that_calls_a_model():
    flags = options_by_flag(typer.main.get_command(app))
    assert {"solve", "bench"} <= set(flags["--api-key"])
    assert flags["--model"]["solve"] == flags["--model"]["bench"]  # train's --model names the model to train
    assert {"solve", "bench", "train coderl+"} <= set(flags["--workers"])
    assert "--out" in flags and set(flags["--out"]) == {"solve"}  # a file; directories are --run-dir
    assert "--steps" not in flags and "--data" not in flags.get("train orm", {})


def test_bench_sends_the_api_key_from_the_environment(scripted_server, tmp_path):
    scripted_server.script(*[reply("```python\ndef f():\n    pass\n```")] * 2)
    env_key = "sk-from-the-environment"
    done = run_cli_with_env(bench_command(scripted_server.url, tmp_path / "run", limit=1), SOLIDCODER_API_KEY=env_key)
    assert done.returncode == 0, done.stderr[-2000:]
    received = scripted_server.chat_requests()
    headers = [{k.lower(): v for k, v in r.headers.items()} for r in received]
    assert headers and all(h.get("authorization") == f"Bearer {env_key}" for h in headers)


def run_cli_with_env(args: list[str], **env: str):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return run_cli(args)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def help_of(*command: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "solidcoder", *command], capture_output=True, text=True, env=env,
                          timeout=60)


def command_paths(command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group of the tree, as the words that name it on the command line."""
    below = [command_paths(sub, (*path, name)) for name, sub in getattr(command, "commands", {}).items()]
    return [path, *(p for paths in below for p in paths)]


def test_version_prints_the_installed_version():
    done = help_of("--version")
    assert done.returncode == 0 and done.stdout == f"solidcoder {metadata.version('solidcoder')}\n"


def test_dash_h_is_help_on_the_group_and_on_solve():
    for command, usage in ((("-h",), "Usage: solidcoder [OPTIONS] COMMAND [ARGS]..."),
                           (("solve", "-h"), "Usage: solidcoder solve [OPTIONS] PROBLEM")):
        done = help_of(*command)
        assert done.returncode == 0 and usage in done.stdout, done.stdout + done.stderr


def test_every_help_names_values_plainly_and_gives_an_example():
    paths = command_paths(typer.main.get_command(app))
    assert ("solve",) in paths and ("train", "orm") in paths and ("prompts", "show") in paths
    for path in paths:
        done = help_of(*path, "--help")
        assert done.returncode == 0, (path, done.stderr)
        assert "Example: solidcoder" in done.stdout, path
        assert not re.search(r"<(bool|str|int|float|path)\b|\{[a-z_]+\}", done.stdout), (path, done.stdout)


def test_the_model_flag_names_the_default_model():
    helps = options_by_flag(typer.main.get_command(app))["--model"]
    assert all("SmolLM2-135M" in helps[c] and "Qwen2.5-Coder-1.5B-Instruct" in helps[c] for c in ("solve", "bench"))
