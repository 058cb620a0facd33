"""`solidcoder check` and `solidcoder trace` as a user runs them: real processes, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def solidcoder(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_check_passes_a_correct_solution_with_hidden_tests():
    done = solidcoder("check", str(EXAMPLES / "two_sum.py"), "--problem", str(EXAMPLES / "two_sum.json"),
                      "--hidden", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["total"] == 4


def test_check_fails_a_wrong_solution_with_exit_1(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import sys\nprint(0)\n")
    done = solidcoder("check", str(wrong), "--problem", str(EXAMPLES / "sum_pairs.json"), "--json")
    assert done.returncode == 1
    verdict = json.loads(done.stdout)["verdicts"][0]
    assert verdict["status"] == "fail" and "expected" in verdict["detail"]


def test_check_prints_markup_in_a_failure_detail_verbatim(tmp_path):
    markup = tmp_path / "markup.py"
    markup.write_text("print('[/bold][red]')\n")
    done = solidcoder("check", str(markup), "--problem", str(EXAMPLES / "sum_pairs.json"))
    assert (done.returncode, "got '[/bold][red]'" in done.stdout) == (1, True), done.stdout + done.stderr


def test_check_bad_inputs_exit_2_with_one_line(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def f(:\n")
    cases = [
        ("check", str(tmp_path / "missing.py"), "--problem", str(EXAMPLES / "two_sum.json")),
        ("check", str(EXAMPLES / "two_sum.py"), "--problem", str(broken)),
        ("check", str(syntax), "--problem", str(EXAMPLES / "two_sum.json")),
        ("check", str(EXAMPLES / "two_sum.py"), "--problem", str(tmp_path / "nope.json")),
    ]
    for args in cases:
        done = solidcoder(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("error: "), done.stderr


def test_trace_prints_final_values_as_json(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("def f(a):\n    b = a * 2\n    return b\nr = f(3)\n")
    done = solidcoder("trace", str(program), "--call", "f(5)", "--json")
    assert done.returncode == 0, done.stderr
    scopes = json.loads(done.stdout)["scopes"]
    assert scopes["f"] == {"a": "5", "b": "10"} and scopes["<module>"] == {"r": "6"}


def test_trace_with_stdin_file(tmp_path):
    program, data = tmp_path / "p.py", tmp_path / "in.txt"
    program.write_text("n = int(input())\nsquare = n * n\n")
    data.write_text("7\n")
    done = solidcoder("trace", str(program), "--stdin", str(data))
    assert done.returncode == 0 and "square = 49" in done.stdout


def test_trace_bad_inputs_exit_2(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("x = 1\n")
    for args in (("trace", str(program), "--call", "f("), ("trace", str(program), "--stdin", str(tmp_path / "no"))):
        done = solidcoder(*args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_trace_of_a_raising_program_exits_1(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("x = 1 / 0\n")
    done = solidcoder("trace", str(program))
    assert done.returncode == 1 and "ZeroDivisionError" in done.stdout
