"""`solidcoder check` and `solidcoder trace` as a user runs them: real processes, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def solidcoder(*args: str, cwd: Path | None = None, columns: int = 80) -> subprocess.CompletedProcess:
    """The CLI in its own process, its tables `columns` wide (rich reads COLUMNS)."""
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "solidcoder", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)


def check_json(solution: Path, problem: str, *flags: str) -> dict:
    done = solidcoder("check", str(solution), "--problem-file", str(EXAMPLES / problem), "--json", *flags)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def table_text(stdout: str) -> str:
    """The table's cells run together: wrapped lines joined, borders and spaces gone."""
    return re.sub(r"[\s│┃]", "", stdout)


def test_check_passes_a_correct_solution_with_hidden_tests():
    done = solidcoder("check", str(EXAMPLES / "two_sum.py"), "--problem-file", str(EXAMPLES / "two_sum.json"),
                      "--hidden", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] and report["total"] == 4


def test_check_fails_a_wrong_solution_with_exit_1(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import sys\nprint(0)\n")
    done = solidcoder("check", str(wrong), "--problem-file", str(EXAMPLES / "sum_pairs.json"), "--json")
    assert done.returncode == 1
    verdict = json.loads(done.stdout)["verdicts"][0]
    assert verdict["status"] == "fail" and "expected" in verdict["detail"]


def test_check_of_a_call_problem_names_the_exception_once_with_its_lines(tmp_path):
    solution = tmp_path / "div.py"
    solution.write_text("def two_sum(nums, target):\n    return 1 / 0\n")
    details = [v["detail"] for v in check_json(solution, "two_sum.json")["verdicts"]]
    assert details == [
        "ZeroDivisionError: division by zero at solution.py:2: return 1 / 0, "
        "called from test.py:1: assert two_sum([2, 7, 11, 15], 9) == [0, 1]",
        "ZeroDivisionError: division by zero at solution.py:2: return 1 / 0, "
        "called from test.py:1: two_sum([3, 2, 4], 6)",
    ]


def test_check_of_a_program_own_exception_and_a_failing_assert(tmp_path):
    solution = tmp_path / "own.py"
    solution.write_text("class Oops(Exception):\n    pass\ndef two_sum(nums, target):\n    if target == 9:\n"
                        "        raise Oops('no pair')\n    return [0, 0]\n")
    details = [v["detail"] for v in check_json(solution, "two_sum.json")["verdicts"]]
    assert details == ["Oops: no pair at solution.py:5: raise Oops('no pair'), "
                       "called from test.py:1: assert two_sum([2, 7, 11, 15], 9) == [0, 1]",
                       "two_sum([3, 2, 4], 6): expected [1, 2], got [0, 0]"]


def test_check_of_a_stdio_problem_names_the_exception_once_with_its_line(tmp_path):
    solution = tmp_path / "div.py"
    solution.write_text("a = 1\nprint(a / 0)\n")
    detail = check_json(solution, "sum_pairs.json")["verdicts"][0]["detail"]
    assert detail == "runtime error (exit 1): ZeroDivisionError: division by zero at solution.py:2: print(a / 0)"


def test_check_says_which_tests_are_hidden(tmp_path):
    solution = tmp_path / "div.py"
    solution.write_text("def two_sum(nums, target):\n    return 1 / 0\n")
    report = check_json(solution, "two_sum.json", "--hidden")
    assert [v["hidden"] for v in report["verdicts"]] == [False, False, True, True]
    done = solidcoder("check", str(solution), "--problem-file", str(EXAMPLES / "two_sum.json"), "--hidden")
    rows = [line.split("│")[1:4] for line in done.stdout.splitlines() if re.match(r"│ \d", line)]
    assert [[cell.strip() for cell in row] for row in rows] == [
        [str(i), "hidden" if i > 1 else "public", "error"] for i in range(4)]


def test_check_wraps_long_details_at_80_columns_instead_of_cutting_them(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("print('x' * 300)\n")
    done = solidcoder("check", str(long), "--problem-file", str(EXAMPLES / "sum_pairs.json"), columns=80)
    assert max(len(line) for line in done.stdout.splitlines()) <= 80 and "…" not in done.stdout
    assert "expected'3',got'" + "x" * 57 + "...'" in table_text(done.stdout), done.stdout


def test_check_prints_markup_in_a_failure_detail_verbatim(tmp_path):
    markup = tmp_path / "markup.py"
    markup.write_text("print('[/bold][red]')\n")
    done = solidcoder("check", str(markup), "--problem-file", str(EXAMPLES / "sum_pairs.json"))
    assert (done.returncode, "got '[/bold][red]'" in done.stdout) == (1, True), done.stdout + done.stderr


def test_check_and_trace_show_a_programs_escape_sequences_instead_of_sending_them_to_the_terminal(tmp_path):
    hostile = tmp_path / "hostile.py"
    hostile.write_text("print('\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred')\n")
    checked = solidcoder("check", str(hostile), "--problem-file", str(EXAMPLES / "sum_pairs.json"), columns=200)
    traced = solidcoder("trace", str(hostile))
    for done in (checked, traced):
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout, repr(done.stdout)
        assert "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred" in done.stdout, done.stdout


def test_check_bad_inputs_exit_2_with_one_line(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def f(:\n")
    cases = [
        ("check", str(tmp_path / "missing.py"), "--problem-file", str(EXAMPLES / "two_sum.json")),
        ("check", str(EXAMPLES / "two_sum.py"), "--problem-file", str(broken)),
        ("check", str(syntax), "--problem-file", str(EXAMPLES / "two_sum.json")),
        ("check", str(EXAMPLES / "two_sum.py"), "--problem-file", str(tmp_path / "nope.json")),
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
    trace = json.loads(done.stdout)
    assert trace["scopes"]["f"] == {"a": {"type": "int", "repr": "5", "value": 5},
                                    "b": {"type": "int", "repr": "10", "value": 10}}
    assert trace["scopes"]["<module>"] == {"r": {"type": "int", "repr": "6", "value": 6}}
    assert trace["returned"] == {"type": "int", "repr": "10", "value": 10}


def test_trace_shows_stdout_and_the_returned_value(tmp_path):
    program = tmp_path / "p.py"
    program.write_text("print('loading')\ndef f(a):\n    print('f got', a)\n    return (a, [a])\n")
    done = solidcoder("trace", str(program), "--call", "f(5)")
    assert done.returncode == 0, done.stderr
    assert "returned: (5, [5]) (tuple)" in done.stdout and "stdout:\nloading\nf got 5\n" in done.stdout
    trace = json.loads(solidcoder("trace", str(program), "--call", "f(5)", "--json").stdout)
    assert trace["stdout"] == "loading\nf got 5\n" and trace["returned"] == {"type": "tuple", "repr": "(5, [5])"}


def test_trace_of_a_crash_shows_the_variables_and_the_users_file(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "foo.py").write_text("def f(a):\n    b = a + 1\n    return b / 0\nn = 4\nf(n)\n")
    done = solidcoder("trace", "examples/foo.py", cwd=tmp_path)
    assert done.returncode == 1 and "solution.py" not in done.stdout
    assert "f\n  a = 4\n  b = 5\n<module>\n  n = 4\n" in done.stdout
    assert "  examples/foo.py:5 in <module>: f(n)\n  examples/foo.py:3 in f: return b / 0\n" in done.stdout
    assert "the program raised ZeroDivisionError: division by zero" in done.stdout
    trace = json.loads(solidcoder("trace", "examples/foo.py", "--json", cwd=tmp_path).stdout)
    assert trace["error"] == "ZeroDivisionError: division by zero at examples/foo.py:3: return b / 0"
    assert trace["exception"]["traceback"][-1] == {"file": "examples/foo.py", "line": 3, "function": "f",
                                                   "source": "return b / 0"}
    assert trace["scopes"]["f"]["b"] == {"type": "int", "repr": "5", "value": 5}


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
