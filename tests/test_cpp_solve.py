"""`--language cpp` end to end: `solve` on a pasted Codeforces problem against the scripted server prints a C++
program that a plain `g++` build passes; the full loop debugs from the compiler's words; `bench` records the
language and `report` shows it; `check PROGRAM.cpp` judges by suffix; and what C++ cannot do (call problems, traces,
LDB) is bad input, one line, exit 2, before any call (issue 41)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from bench_support import rows
from stage_router import StageRouter, template_of

from solidcoder.bench.metrics import Summary
from solidcoder.bench.report import _distinct_names, baseline
from solidcoder.datasets import DataOptions, load_dataset
from solidcoder.errors import BadInput
from solidcoder.problem import Problem, TestCase
from solidcoder.stages.base import extract_code
from solidcoder.stages.live import GeneratedTest, LiveExecutor, SuiteTest

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (.ci/run installs it)")

REPO = Path(__file__).resolve().parents[1]
STONES = REPO / "tests" / "fixtures" / "statements" / "cf_examples_two.txt"  # Codeforces 266A, as pasted
RIGHT = ("#include <iostream>\n#include <string>\nint main() {\n    int n; std::string s; std::cin >> n >> s;\n"
         "    int taken = 0;\n    for (int i = 1; i < n; ++i) taken += s[i] == s[i - 1];\n"
         "    std::cout << taken << '\\n';\n}\n")
WRONG = "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << n - 1 << '\\n'; }\n"
BROKEN = "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << answer << '\\n'; }\n"


def cpp(code: str) -> str:
    return f"Here is the program:\n```cpp\n{code}```\n"


def solve(server, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "solidcoder", "solve", *args, "--model", "openai/scripted-model", "--api-base",
               server.url]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=REPO)


def plain_build_passes(code: str, tmp_path: Path) -> list[str]:
    """The program's output on the statement's two examples, built and run with plain g++ (no sandbox)."""
    (tmp_path / "plain.cpp").write_text(code)
    subprocess.run(["g++", "-std=c++17", "-O2", "-o", str(tmp_path / "plain"), str(tmp_path / "plain.cpp")],
                   check=True, timeout=120)
    return [subprocess.run([str(tmp_path / "plain")], input=stdin, capture_output=True, text=True,
                           timeout=10).stdout for stdin in ("3\nRRG\n", "5\nRRRRR\n")]


def test_solve_language_cpp_prints_a_cpp_program_that_passes(scripted_server, tmp_path):
    router = StageRouter(scripted_server)  # tier 0 wrong; tier 1's five samples: one broken, one Python, right ones
    router.queue("strategies/direct", cpp(WRONG), cpp(BROKEN), cpp(RIGHT), "```python\nprint(1)\n```", cpp(RIGHT),
                 cpp(WRONG))
    done = solve(scripted_server, str(STONES), "--language", "cpp", "--run-dir", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == RIGHT
    assert plain_build_passes(done.stdout, tmp_path) == ["1\n", "4\n"]
    prompts = [r.body["messages"][-1]["content"] for r in scripted_server.chat_requests()]
    assert len(prompts) == 2 and all("C++17" in prompt for prompt in prompts)  # tier 0, then tier 1's one request
    assert router.seen == ["strategies/direct"] * 6


def test_the_full_loop_debugs_a_cpp_program_from_the_compilers_words(scripted_server, tmp_path):
    router = StageRouter(scripted_server, code=cpp(BROKEN), debug=cpp(RIGHT), fix=cpp(RIGHT))
    done = solve(scripted_server, str(STONES), "--language", "cpp", "--strategy", "solidcoder+", "--plans", "1",
                 "--debug-rounds", "1", "--oracle-rounds", "0", "--candidates", "1", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == RIGHT
    debug = next(r for r in scripted_server.chat_requests() if template_of(r) == "paper/debug")
    text = debug.body["messages"][-1]["content"]
    assert "does not compile" in text and "answer" in text and "was not declared" in text and "C++17" in text
    assert "debug" in router.seen


@pytest.mark.parametrize(("args", "message"), [
    (["solve", "{add}", "--function", "add", "--language", "cpp"], "is a call problem"),
    (["solve", "{stones}", "--language", "cpp", "--strategy", "ldb"], "--strategy ldb with --language cpp: LDB"),
    (["solve", "{stones}", "--language", "cpp", "--strategy", "alphacodium"], "AlphaCodium's prompts"),
    (["solve", "{stones}", "--language", "cpp", "--strategy", "solidcoder+:trace_feedback"], "trace_feedback"),
    (["solve", "{stones}", "--language", "cobol"], "--language 'cobol': choose one of python, cpp"),
    (["bench", "--dataset", "humaneval", "--language", "cpp", "--model", "openai/m", "--api-base", "http://x"],
     "--language cpp: humaneval has only call problems"),
    (["check", "examples/sum_pairs.cpp", "--problem-file", "examples/two_sum.json"], "is a call problem"),
    (["trace", "examples/sum_pairs.cpp"], "trace runs Python programs only"),
])
def test_what_cpp_cannot_do_is_bad_input_before_any_call(args, message, tmp_path):
    (tmp_path / "add.txt").write_text("Return the sum.\n\ndef add(a, b):\n\n>>> add(1, 2)\n3\n")
    names = {"add": str(tmp_path / "add.txt"), "stones": str(STONES)}
    command = [sys.executable, "-m", "solidcoder", *[a.format(**names) for a in args]]
    if args[0] != "check" and args[0] != "trace":
        command += ["--run-dir", str(tmp_path / "run")]
    if args[0] == "solve":
        command += ["--model", "openai/m", "--api-base", "http://127.0.0.1:9"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "run").exists() and done.stdout == ""


def test_check_judges_a_cpp_file_by_its_suffix(tmp_path):
    check = [sys.executable, "-m", "solidcoder", "check", "--problem-file", "examples/sum_pairs.json", "--hidden",
             "--json"]
    good = subprocess.run([*check, "examples/sum_pairs.cpp"], capture_output=True, text=True, timeout=120, cwd=REPO)
    (tmp_path / "broken.cpp").write_text(BROKEN)
    bad = subprocess.run([*check, str(tmp_path / "broken.cpp")], capture_output=True, text=True, timeout=120,
                         cwd=REPO)
    assert good.returncode == 0, good.stderr
    assert [v["status"] for v in json.loads(good.stdout)["verdicts"]] == ["pass", "pass"]
    assert bad.returncode == 1
    verdicts = json.loads(bad.stdout)["verdicts"]
    assert {v["status"] for v in verdicts} == {"compile_error"} and "answer" in verdicts[0]["detail"]


def test_bench_records_the_language_and_report_shows_it(scripted_server, tmp_path):
    StageRouter(scripted_server).queue("strategies/direct", *[cpp(WRONG)] * 20)
    data = REPO / "tests" / "fixtures" / "data" / "apps.jsonl"
    done = subprocess.run([sys.executable, "-m", "solidcoder", "bench", "--dataset", "apps", "--data-file", str(data),
                           "--language", "cpp", "--model", "openai/scripted-model", "--api-base", scripted_server.url,
                           "--run-dir", str(tmp_path / "run"), "--retries", "1"], capture_output=True, text=True,
                          timeout=240, cwd=REPO)
    assert done.returncode == 0, done.stderr
    stdio, _ = load_dataset("apps", DataOptions(data_file=data, language="cpp"))
    found = rows(tmp_path / "run" / "results.jsonl")
    assert sorted(row["id"] for row in found) == sorted(p.id for p in stdio) and stdio
    assert {row["language"] for row in found} == {"cpp"} and "call problems (cpp programs are judged" in done.stdout
    report = subprocess.run([sys.executable, "-m", "solidcoder", "report", str(tmp_path / "run")],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert report.returncode == 0 and "direct [cpp]" in report.stdout, report.stderr
    endings = Counter("pass" if row["passed"] else row["first_status"] for row in found)
    assert f"answers by ending: {', '.join(f'{k} {n}' for k, n in endings.most_common())}" in report.stdout
    show = subprocess.run([sys.executable, "-m", "solidcoder", "show", str(tmp_path / "run")], capture_output=True,
                          text=True, timeout=60, cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    assert show.returncode == 0 and show.stdout.count("direct [cpp]") == len(found), show.stderr


ADD = Problem(id="add", kind="stdio", statement="print a+b", language="cpp",
              public_tests=[TestCase(kind="stdio", stdin="1 2\n", expected_stdout="3")])
SUM = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"
PROPERTY = "def check(stdin, stdout):\n    a, b = map(int, stdin.split())\n    assert int(stdout) == a + b\n"


def test_live_execution_runs_generated_stdin_tests_on_the_binary(sandbox_pool):
    tests = [SuiteTest("public-0", ADD.public_tests[0]),
             SuiteTest("generated-0", GeneratedTest("stdio", PROPERTY, stdin="40 2\n"))]
    live = LiveExecutor(sandbox_pool, ADD)
    right = asyncio.run(live.evaluate(SUM, tests))
    wrong = asyncio.run(live.evaluate(SUM.replace("a+b", "a*b"), tests))
    broken = asyncio.run(live.evaluate(SUM.replace("a+b", "a+c"), tests))
    assert right.verified and [o.status for o in right.outcomes] == ["pass", "pass"]
    assert [o.passed for o in wrong.outcomes] == [False, False] and "property check failed" in wrong.outcomes[1].detail
    assert [o.status for o in broken.outcomes] == ["compile_error"] * 2
    assert "was not declared" in broken.outcomes[1].detail


@pytest.mark.parametrize(("reply", "program"), [
    ("```python\nprint(1)\n```\n```cpp\nint main(){}\n```", "int main(){}\n"),
    ("```\nint main(){return 1;}\n```", "int main(){return 1;}\n"),
    ("```c++\nint main(){}\n```\n```cpp\nint main(){ return 0; }\n```", "int main(){ return 0; }\n"),
    ("```cpp\n#include <cstdio>\nint main(){", "#include <cstdio>\nint main(){\n"),
    ("```python\nprint(1)\n```", ""),
    ("int main() { return 0; }", ""),
])
def test_a_cpp_program_is_read_from_its_fenced_block(reply, program):
    assert extract_code(reply, "cpp") == program


def test_a_cpp_configuration_is_compared_with_direct_in_cpp():
    def summary(strategy: str, language: str) -> Summary:
        return Summary("apps", strategy, "m", f"{strategy}-{language}", problems=3, language=language)

    runs = [summary("direct", "python"), summary("direct", "cpp"), summary("solidcoder-routed", "python"),
            summary("solidcoder-routed", "cpp")]
    assert [baseline(runs, s) for s in runs] == [None, runs[0], runs[0], runs[1]]
    assert [s.name for s in runs] == ["direct", "direct [cpp]", "solidcoder-routed", "solidcoder-routed [cpp]"]
    named = [s.name for s in _distinct_names(runs)]  # beside C++, Python's are named too
    assert named == ["direct [python]", "direct [cpp]", "solidcoder-routed [python]", "solidcoder-routed [cpp]"]


JS = ('const [n, s] = require("fs").readFileSync(0, "utf8").split(/\\s+/);\nlet taken = 0;\n'
      'for (let i = 1; i < Number(n); i++) if (s[i] === s[i - 1]) taken++;\nconsole.log(taken);\n')


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (.ci/run installs it)")
def test_the_second_language_goes_through_the_same_path(scripted_server, tmp_path):
    router = StageRouter(scripted_server)
    router.defaults["strategies/direct"] = f"```javascript\n{JS}```"
    done = solve(scripted_server, str(STONES), "--language", "javascript", "--strategy", "direct", "--run-dir",
                 str(tmp_path / "run"))
    assert (done.returncode, done.stdout) == (0, JS), done.stderr
    assert "JavaScript (Node.js)" in scripted_server.chat_requests()[0].body["messages"][-1]["content"]


def test_the_oracles_stdin_test_runs_the_binary_and_its_property_check_stays_python(scripted_server, tmp_path):
    red_team = ('{"assumption": "one colour only", "stdin": "4\\nBBBB", '
                '"property": "0 <= int(stdout) < int(stdin.split()[0])"}')
    router = StageRouter(scripted_server, code=cpp(RIGHT), red_team=red_team)
    done = solve(scripted_server, str(STONES), "--language", "cpp", "--strategy", "solidcoder+", "--plans", "1",
                 "--debug-rounds", "1", "--oracle-rounds", "1", "--candidates", "1", "--run-dir", str(tmp_path / "r"))
    assert (done.returncode, done.stdout) == (0, RIGHT), done.stderr
    steps = json.loads(next((tmp_path / "r").rglob("trajectory.json")).read_text())["steps"]
    runs = [run for step in steps if step.get("type") == "execution" and step.get("program") == RIGHT
            for run in step.get("tests", [])]
    oracle = [run for run in runs if run.get("input", "").startswith("4\nBBBB")]
    assert "red_team" in router.seen and oracle and {run["status"] for run in oracle} == {"pass"}, runs


@pytest.mark.parametrize(("dataset", "left_out"), [("apps", True), ("codecontests", False), ("livecodebench", True)])
def test_a_dataset_in_cpp_is_its_stdin_problems(dataset, left_out):
    data = REPO / "tests" / "fixtures" / "data" / f"{dataset}.jsonl"
    everything, _ = load_dataset(dataset, DataOptions(data_file=data))
    problems, report = load_dataset(dataset, DataOptions(data_file=data, language="cpp"))
    assert [p.id for p in problems] == [p.id for p in everything if p.kind == "stdio"]
    assert {p.language for p in problems} == {"cpp"} and bool(report.left_out) == left_out


def test_a_dataset_of_call_problems_in_cpp_is_bad_input():
    with pytest.raises(BadInput, match="mbpp has only call problems"):
        load_dataset("mbpp", DataOptions(data_file=REPO / "tests" / "fixtures" / "data" / "mbpp.jsonl", language="cpp"))
