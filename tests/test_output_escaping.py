"""Everything a person sees is escaped (issue 38, item 4): escape sequences (an OSC 52 clipboard write, a window
title, a clear screen), C1 controls and bidirectional overrides in what a model wrote, a program printed or named, or a
run directory holds reach no terminal raw and are shown as visible escapes; the report HTML-escapes every value, and a
run directory with a string where a number belongs is one line and exit code 2, never a traceback or a page with the
string in it. Every command runs as a user runs it: a real process, on run directories and programs written here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_server import reply
from solve_runs import trajectory_file
from terminal import run_in_terminal
from test_cli_solve import ADD_TXT

from solidcoder.escaping import html_safe, json_safe, terminal_safe

REPO = Path(__file__).resolve().parents[1]
CLIPBOARD, TITLE, CLEAR, C1, RLO = "\x1b]52;c;cHduZWQ=\x07", "\x1b]0;pwned\x07", "\x1b[2J", "\x9b31m", "\u202e"
HOSTILE = f"{CLIPBOARD}{TITLE}{CLEAR}{C1}{RLO}"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200f")  # none may reach a pipe (rich writes no colour there)
SEQUENCES = ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x07", "\x9b", "\u202e")  # none may reach a terminal
SHOWN = ("\\x1b]52;c;cHduZWQ=\\x07", "\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x9b31m", "\\u202e")


def cli(*args: object, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """The CLI in its own process, both streams piped; rich is told nothing that would make it colour a pipe."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")} | {"COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "solidcoder", *map(str, args)], capture_output=True, text=True,
                          timeout=180, cwd=cwd, env=env)


def assert_escaped(text: str, *shown: str) -> None:
    """No raw control or bidirectional character in `text`, and each of `shown` visible in it."""
    assert [raw for raw in RAW if raw in text] == [], text
    assert [s for s in shown if s not in text] == [], text


def one_clean_line(done: subprocess.CompletedProcess, *words: str) -> str:
    """A BadInput: exit 2, nothing on stdout, one line on stderr with each of `words`, no traceback."""
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and all(word in done.stderr for word in words), done.stderr
    return done.stderr


def write_rows(path: Path, *rows: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


# --- the escaping itself ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x07", "\r", "\x7f", "\x85", "\x9b", "\u061c", "\u200e", "\u200f",
                                  "\u2028", "\u2029", "\u202a", "\u202d", "\u202e", "\u2066", "\u2069"])
def test_every_control_and_bidirectional_character_is_shown_as_its_escape(char):
    shown = terminal_safe(f"a{char}b")
    assert char not in shown and shown == f"a{repr(char)[1:-1]}b"
    assert char not in json_safe(json.dumps(f"a{char}b", ensure_ascii=False))
    assert json.loads(json_safe(json.dumps(f"a{char}b", ensure_ascii=False))) == f"a{char}b"  # the same data


def test_newlines_tabs_and_other_text_are_left_as_they_are():
    text = "def f():\n\treturn 'héllo 世界 ✓'"
    assert terminal_safe(text) == text and html_safe("<b>&'\"") == "&lt;b&gt;&amp;&#x27;&quot;"


# --- trace, check and the one BadInput handler ------------------------------------------------------------------


def test_trace_shows_scope_names_variables_output_and_the_exception_a_program_sets(tmp_path):
    program = tmp_path / "hostile.py"
    program.write_text(
        "import sys\n"
        "def f():\n"
        "    x = 1\n"
        "    return x\n"
        f"f.__code__ = f.__code__.replace(co_qualname={TITLE + RLO!r})\n"
        "f()\n"
        f"globals()[{CLEAR!r}] = {C1!r}\n"
        f"print({CLIPBOARD!r})\n"
        f"raise ValueError({HOSTILE!r})\n")
    done = cli("trace", program)
    assert done.returncode == 1, done.stderr
    assert_escaped(done.stdout + done.stderr, *SHOWN)
    assert "\\x1b]0;pwned\\x07\\u202e" in done.stdout  # the scope's name, shown


def test_check_shows_a_problem_id_and_an_exception_message_escaped(tmp_path):
    problem = {"id": f"two-sum{TITLE}{RLO}", "kind": "call", "entry_point": "f", "statement": "Return 1.",
               "public_tests": [{"kind": "call", "call": "f()", "expected": 1}]}
    (tmp_path / "problem.json").write_text(json.dumps(problem))
    (tmp_path / "solution.py").write_text(f"def f():\n    raise ValueError({HOSTILE!r})\n")
    done = cli("check", tmp_path / "solution.py", "--problem-file", tmp_path / "problem.json")
    assert done.returncode == 1, done.stderr
    assert_escaped(done.stdout + done.stderr, *SHOWN)


def test_a_bad_input_message_quoting_a_file_name_is_one_escaped_line(tmp_path):
    done = cli("trace", tmp_path / f"missing{TITLE}\n{RLO}.py")
    assert_escaped(one_clean_line(done, "not found"), "\\x1b]0;pwned\\x07\\n\\u202e")


# --- show ---------------------------------------------------------------------------------------------------------

PROBLEM_ID = f"add{TITLE}{RLO}"
PROGRAM = f"def add(a, b):\n    # {HOSTILE} [bold red]markup[/]\n    return a - b\n"


def solve_run(run_dir: Path) -> Path:
    """A `solve` run directory as solve writes it, every text in it hostile."""
    failure = {"kind": "public", "status": "error", "input": f"add(1, {CLEAR})", "detail": f"ValueError: {HOSTILE}"}
    steps = [{"type": "call", "template": f"strategies/direct{C1}", "prompt_tokens": 5, "completion_tokens": 7,
              "latency_s": 0.5, "messages": [{"role": "user", "content": f"Solve {HOSTILE}"}],
              "reply": f"```python\n{PROGRAM}```"},
             {"type": "execution", "purpose": "final", "program": PROGRAM, "tests": [failure], "passed": 0,
              "total": 1, "after_call": 1, "first_failure": failure}]
    trajectory = {"problem": {"id": PROBLEM_ID}, "strategy": f"direct{TITLE}", "elapsed_s": 1.5, "steps": steps,
                  "usage": {"calls": 1, "tokens": 12},
                  "outcome": {"status": "unverified", "reason": f"first failure: {HOSTILE}", "verified": False,
                              "code": PROGRAM, "notes": {"stages": [f"direct{CLEAR}"]}}}
    run_dir.mkdir()
    (run_dir / "trajectory.json").write_text(json.dumps(trajectory, ensure_ascii=False), encoding="utf-8")
    return run_dir


def test_show_lists_and_draws_a_hostile_run_escaped_and_its_json_is_the_same_data(tmp_path):
    run = solve_run(tmp_path / "run")
    for args in ([], ["--problem", PROBLEM_ID], ["--problem", PROBLEM_ID, "--full"]):
        done = cli("show", run, *args)
        assert done.returncode == 0, done.stderr
        assert_escaped(done.stdout + done.stderr, "add\\x1b]0;pwned\\x07\\u202e")
    tree = cli("show", run, "--problem", PROBLEM_ID, "--full").stdout
    assert all(shown in tree for shown in SHOWN) and "[bold red]markup[/]" in tree
    data = cli("show", run, "--problem", PROBLEM_ID, "--json").stdout
    assert_escaped(data, "\\u001b]0;pwned\\u0007\\u202e")
    assert json.loads(data)[0]["program"] == PROGRAM


def test_show_of_a_problem_the_run_does_not_have_lists_its_ids_escaped(tmp_path):
    done = cli("show", solve_run(tmp_path / "run"), "--problem", "NOSUCH")
    assert_escaped(one_clean_line(done, "no problem 'NOSUCH'"), "add\\x1b]0;pwned\\x07\\u202e")


def test_show_of_a_trajectory_with_a_string_where_seconds_belong_is_one_line(tmp_path):
    run = solve_run(tmp_path / "run")
    data = json.loads((run / "trajectory.json").read_text(encoding="utf-8"))
    data["steps"][0]["latency_s"] = SCRIPT
    (run / "trajectory.json").write_text(json.dumps(data), encoding="utf-8")
    assert_escaped(one_clean_line(cli("show", run), "trajectory.json", "steps[0].latency_s should be a number"))


# --- report and show on a bench run directory -------------------------------------------------------------------

SCRIPT = "<script>alert(1)</script>"


def bench_row(key: str, **fields) -> dict:
    """A results.jsonl row as bench writes it, its text fields hostile to a page and to a terminal."""
    return {"key": key, "id": f"HumanEval/{key}{SCRIPT}{TITLE}", "dataset": f"humaneval{RLO}", "strategy": "direct",
            "model": f"org/m[red]{CLEAR}", "config_hash": "h1", "sample": 0, "passed": key == "0", "calls": 1,
            "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.0, "wall_s": 1.25,
            "code": f"x = '</pre>{SCRIPT}'  # {HOSTILE}", "tests_passed": 1, "tests_total": 2,
            "first_failure": f"{SCRIPT}{HOSTILE}", "notes": {"stages": [f"direct{C1}"]}, **fields}


def bench_run(run_dir: Path, *rows: dict) -> Path:
    write_rows(run_dir / "runs.jsonl", {"config_hash": "h1", "label": f"label{SCRIPT}{CLIPBOARD}"})
    write_rows(run_dir / "results.jsonl", *rows)
    return run_dir


def test_report_escapes_every_text_of_a_hostile_run_in_its_tables_and_its_page(tmp_path):
    run = bench_run(tmp_path / "run", bench_row("0"), bench_row("1"))
    done = cli("report", run, "--html", tmp_path / "report.html")
    assert done.returncode == 0, done.stderr
    assert_escaped(done.stdout + done.stderr, "\\x1b]52;c;cHduZWQ=\\x07", "\\x1b[2J", "\\u202e", "m[red]")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6
    assert_escaped(page, "\\x1b]52;c;cHduZWQ=\\x07", "\\x1b[2J", "\\u202e")
    listing = cli("show", run)
    assert listing.returncode == 0, listing.stderr
    assert_escaped(listing.stdout, "\\x1b]0;pwned\\x07", SCRIPT)


@pytest.mark.parametrize("field, value", [("wall_s", SCRIPT), ("calls", "3"), ("tests_passed", SCRIPT),
                                          ("passed", "yes"), ("cost_usd", float("inf")), ("notes", {"tiers": [{}]}),
                                          ("template_usage", {"t": [1, f"{SCRIPT}", 2]})])
def test_a_row_with_a_string_where_a_number_belongs_is_one_line_naming_file_and_line(tmp_path, field, value):
    run = bench_run(tmp_path / "run", bench_row("0"), bench_row("1", **{field: value}))
    for args in ([run], [run, "--problem", "HumanEval/0"]):
        one_clean_line(cli("show", *args), "results.jsonl:2", field)
    assert_escaped(one_clean_line(cli("report", run, "--html", run / "report.html"), "results.jsonl:2", field))
    assert not (run / "report.html").exists()


@pytest.mark.parametrize("name, row", [("executions.jsonl", {"key": "0", "purpose": "hidden", "passed": SCRIPT}),
                                       ("calls.jsonl", {"id": "0#1", "completion": {"latency_s": "<b>"}}),
                                       ("runs.jsonl", {"config_hash": "h1", "label": 7})])
def test_a_malformed_row_in_any_file_report_reads_is_one_line_and_no_page(tmp_path, name, row):
    run = bench_run(tmp_path / "run", bench_row("0"))
    write_rows(run / name, row)
    one_clean_line(cli("report", run, "--html", run / "report.html"), f"{name}:1")
    assert not (run / "report.html").exists()


def test_a_committed_run_whose_stages_are_an_object_shows_and_reports(tmp_path):
    """Runs before stages were a list recorded them as an object (stage -> usage): read, not a crash."""
    committed = REPO / "benchmarks" / "results" / "humaneval40_qwen05b_run2"
    assert cli("show", committed).returncode == 0
    done = cli("report", committed, "--html", tmp_path / "report.html")
    assert done.returncode == 0 and (tmp_path / "report.html").is_file(), done.stderr


# --- solve --------------------------------------------------------------------------------------------------------

# A program whose comment holds the sequences raw and whose exception message (the reason's first failure) is made
# of them when it runs.
SOLVED = f"def add(a, b):\n    # {HOSTILE}\n    raise ValueError({HOSTILE!r})\n"


def solve_args(server, tmp_path: Path) -> list[str]:
    (tmp_path / "add.txt").write_text(ADD_TXT)
    return [sys.executable, "-m", "solidcoder", "solve", str(tmp_path / "add.txt"), "--strategy", "direct",
            "--model", "openai/scripted-model", "--api-base", server.url, "--run-dir", str(tmp_path / "run")]


def test_solve_piped_prints_the_program_byte_for_byte_and_escapes_everything_else(scripted_server, tmp_path):
    scripted_server.script(reply(f"```python\n{SOLVED}```"))
    done = subprocess.run(solve_args(scripted_server, tmp_path), capture_output=True, timeout=180, cwd=REPO)
    assert done.returncode == 1, done.stderr
    code = json.loads(trajectory_file(tmp_path / "run").read_text(encoding="utf-8"))["outcome"]["code"]
    header, _, program = done.stdout.decode().partition("\n")
    assert CLIPBOARD in code and program in (code, f"{code}\n")  # byte for byte, as --out would write it
    assert header.startswith("# UNVERIFIED") and "first failure" in header
    assert_escaped(header + done.stderr.decode(), "\\x1b]52;c;cHduZWQ=\\x07", "\\u202e")


def test_solve_on_a_terminal_shows_the_program_and_its_reason_escaped(scripted_server, tmp_path):
    scripted_server.script(reply(f"```python\n{SOLVED}```"))
    code, out = run_in_terminal(solve_args(scripted_server, tmp_path), columns=200, timeout=180, raw=True)
    assert code == 1, out
    assert [s for s in SEQUENCES if s in out] == [] and all(shown in out for shown in SHOWN), out
    assert "# \\x1b]52;c;cHduZWQ=\\x07" in out  # the program's comment, shown
