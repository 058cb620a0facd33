"""`solidcoder prompts ...` in real subprocesses: output, overrides and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from solidcoder.prompting import TEMPLATE_VARIABLES

REPO = Path(__file__).resolve().parents[1]


def cli(*args, tmp_path, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k != "SOLIDCODER_PROMPTS"}
    env.update({"XDG_CONFIG_HOME": str(tmp_path / "config"), **(extra_env or {})})
    return subprocess.run(
        [sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=60
    )


def table_rows(listing: str) -> dict[str, list[str]]:
    """`prompts list`'s table: template name -> the lines of its "used by" cell."""
    rows: dict[str, list[str]] = {}
    for line in listing.splitlines():
        if line[:1].isalpha() and "/" in line.split()[0]:
            rows[line.split()[0]] = [" ".join(line.split()[1:])]
        elif line.startswith(" ") and rows:
            rows[list(rows)[-1]].append(line.strip())
    return rows


def test_list_says_what_renders_each_template_and_marks_overrides_at_80_columns(tmp_path):
    override = tmp_path / "mine" / "paper"
    override.mkdir(parents=True)
    (override / "code.j2").write_text("=== user ===\n{{ problem }}\n")
    done = cli("prompts", "list", "--prompts", str(tmp_path / "mine"), tmp_path=tmp_path, extra_env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    users = table_rows(done.stdout)
    assert {name.rstrip("*") for name in users} == set(TEMPLATE_VARIABLES)
    assert "paper/code*" in users and "paper/debug" in users  # the override is marked, its file listed whole
    assert f"* paper/code (--prompts): {override / 'code.j2'}" in done.stdout.splitlines()
    assert users["strategies/direct"] == ["direct", "solidcoder-routed", "ldb", "solve --prerank"]
    assert users["strategies/mapcoder_coding"] == ["mapcoder, codesim"]  # on one line when they fit
    assert users["paper/plan"] == ["solidcoder", "solidcoder+", "solidcoder-routed:max_tier=2"]  # one a line
    assert not [name for name, said in users.items() if "nothing built in" in said]
    assert all(len(line) <= 80 for line in done.stdout.splitlines() if not line.startswith("* ")), done.stdout


def test_show_prints_the_template(tmp_path):
    done = cli("prompts", "show", "paper/judge", tmp_path=tmp_path)
    assert done.returncode == 0
    assert done.stdout == (REPO / "prompts" / "paper" / "judge.j2").read_text()


def test_show_unknown_name_exits_2(tmp_path):
    done = cli("prompts", "show", "paper/nope", tmp_path=tmp_path)
    assert done.returncode == 2
    expected = "error: unknown prompt 'paper/nope'; `solidcoder prompts list` shows the available ones"
    assert done.stderr.strip() == expected


def test_export_then_check_round_trip(tmp_path):
    out = tmp_path / "exported"
    assert cli("prompts", "export", str(out), tmp_path=tmp_path).returncode == 0
    assert len(list(out.rglob("*.j2"))) == len(TEMPLATE_VARIABLES)
    done = cli("prompts", "check", "--prompts", str(out), tmp_path=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, f"{len(TEMPLATE_VARIABLES)} templates render")


def test_check_reports_broken_override_with_exit_2(tmp_path):
    broken = tmp_path / "broken" / "paper"
    broken.mkdir(parents=True)
    (broken / "simulate.j2").write_text("=== user ===\n{{ problem }}\n{{ sample_inptu }}\n")
    done = cli("prompts", "check", tmp_path=tmp_path, extra_env={"SOLIDCODER_PROMPTS": str(tmp_path / "broken")})
    assert done.returncode == 2
    assert f"{broken / 'simulate.j2'}:3:" in done.stderr and "sample_inptu" in done.stderr
    syntax = tmp_path / "syntax" / "paper"
    syntax.mkdir(parents=True)
    (syntax / "code.j2").write_text("=== user ===\n{{ problem \n")
    done = cli("prompts", "check", "--prompts", str(tmp_path / "syntax"), tmp_path=tmp_path)
    assert done.returncode == 2 and f"{syntax / 'code.j2'}:" in done.stderr and "syntax error" in done.stderr


def test_export_over_an_edited_copy_exits_2_writing_nothing_until_force(tmp_path):
    out = tmp_path / "exported"
    assert cli("prompts", "export", str(out), tmp_path=tmp_path).returncode == 0
    assert cli("prompts", "export", str(out), tmp_path=tmp_path).returncode == 0  # identical files: nothing to lose
    (out / "paper" / "judge.j2").write_text("my edit\n")
    (out / "paper" / "plan.j2").unlink()
    done = cli("prompts", "export", str(out), tmp_path=tmp_path)
    assert (done.returncode, len(done.stderr.strip().splitlines()), done.stdout) == (2, 1, "")
    assert f"{out / 'paper' / 'judge.j2'} exists and differs" in done.stderr and "--force" in done.stderr
    assert (out / "paper" / "judge.j2").read_text() == "my edit\n" and not (out / "paper" / "plan.j2").exists()
    assert cli("prompts", "export", str(out), "--force", tmp_path=tmp_path).returncode == 0
    assert (out / "paper" / "judge.j2").read_text() == (REPO / "prompts" / "paper" / "judge.j2").read_text()
    assert len(list(out.rglob("*.j2"))) == len(TEMPLATE_VARIABLES)


def test_check_rejects_a_template_that_lost_its_user_header(tmp_path):
    mine = tmp_path / "mine" / "strategies"
    mine.mkdir(parents=True)
    built_in = (REPO / "prompts" / "strategies" / "direct.j2").read_text()
    (mine / "direct.j2").write_text(built_in.replace("=== user ===\n", ""))
    done = cli("prompts", "check", "--prompts", str(tmp_path / "mine"), tmp_path=tmp_path)
    assert (done.returncode, len(done.stderr.strip().splitlines())) == (2, 1)
    assert f"{mine / 'direct.j2'}: no '=== user ===' message" in done.stderr
