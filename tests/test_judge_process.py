"""The judge process one worker keeps across runs: a test script that changes it costs only its own run.

Each tampering script below would let a wrong program pass the next run if the same judge served it unchanged;
the judge sees the change (integrity.py), exits, and the next run gets a fresh one. One worker per pool, so that
the reader run is served by the very worker whose judge the writer run tampered with.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.problem import Problem, TestCase

HONEST = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return 0\n"
REFEREE = "__import__('sys').modules['solidcoder.execution.inside.referee']"
COMPARE = "__import__('sys').modules['solidcoder.execution.inside.compare']"
TAMPERING = {
    "rebinds the comparison": f"{REFEREE}.strict_equal = lambda *a, **k: True",
    "swaps the comparison's code": f"{COMPARE}.strict_equal.__code__ = (lambda a, b, c=0: True).__code__",
    "rebinds a builtin the judge uses": "import builtins\nbuiltins.type = lambda *a: int",
}


def problem(tests: list[TestCase], time_limit_s: float = 2.0) -> Problem:
    return Problem(id="judge-process", kind="call", statement="", entry_point="f", public_tests=tests,
                   time_limit_s=time_limit_s)


PLUS_ONE = problem([TestCase(kind="call", call="f(1)", expected=2)])


def judge_pids(pool: SandboxPool) -> set[int]:
    """The pool's live judge processes, once the zygote has started its spare and reaped the ended ones."""
    seen, now = None, _judge_pids(pool)
    while now != seen:
        time.sleep(0.1)
        seen, now = now, _judge_pids(pool)
    return now


def _judge_pids(pool: SandboxPool) -> set[int]:
    """The pool's judge processes: its zygotes' children that run as a judge uid, zombies left out."""
    uids = set(pool.judge_uids)
    children = set()
    for worker in pool._workers:
        pid = worker.proc.pid
        children |= {int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    return {pid for pid in children if _uid(pid) in uids and not _zombie(pid)}


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def _uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        return None


@pytest.fixture()
def solo_pool():
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        yield pool


def test_one_judge_process_serves_the_runs_of_one_test_script(solo_pool):
    judge = Judge(solo_pool)
    assert judge.judge(PLUS_ONE, HONEST).passed
    first = judge_pids(solo_pool)
    assert judge.judge(PLUS_ONE, HONEST).passed
    assert len(first) == 2 and judge_pids(solo_pool) == first  # the script's judge, and a spare for a new script
    assert judge.judge(problem([TestCase(kind="call", call="f(2)", expected=3)]), HONEST).passed
    now = judge_pids(solo_pool)  # another script: the spare serves it, the first judge stays, a new spare waits
    assert first < now and len(now) == 3


def test_judge_runs_1_gives_every_run_a_fresh_judge():
    with SandboxPool(SandboxConfig(workers=1, judge_runs=1)) as pool:
        judge = Judge(pool)
        assert judge.judge(PLUS_ONE, HONEST).passed
        first = judge_pids(pool)  # a spare: the judge of that run exited after it
        assert not judge.judge(PLUS_ONE, WRONG).passed
        assert len(first) == 1 and first.isdisjoint(judge_pids(pool))


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_test_script_that_changes_the_judge_does_not_change_the_next_verdict(solo_pool, how):
    judge = Judge(solo_pool)
    judge.judge(problem([TestCase(kind="call", script=TAMPERING[how])]), HONEST)
    report = judge.judge(PLUS_ONE, WRONG)
    assert [v.status for v in report.verdicts] == ["fail"], report.verdicts
    assert judge.judge(PLUS_ONE, HONEST).passed


def test_a_test_script_that_hangs_in_c_costs_only_its_run(solo_pool):
    judge = Judge(solo_pool)
    hanging = problem([TestCase(kind="call", script="sum(range(10 ** 13))")], time_limit_s=0.5)
    assert [v.status for v in judge.judge(hanging, HONEST).verdicts] == ["timeout"]
    assert judge.judge(PLUS_ONE, HONEST).passed


def test_a_test_script_that_ends_the_judge_costs_only_its_run(solo_pool):
    judge = Judge(solo_pool)
    report = judge.judge(problem([TestCase(kind="call", script="import os\nos._exit(0)")]), HONEST)
    assert not report.passed and not report.infrastructure_error
    assert judge.judge(PLUS_ONE, HONEST).passed
    assert not judge.judge(PLUS_ONE, WRONG).passed


def test_a_candidate_cannot_signal_its_judge(solo_pool):
    judge = Judge(solo_pool)
    assert judge.judge(PLUS_ONE, HONEST).passed
    before = judge_pids(solo_pool)
    killer = "import os, signal\nfor pid in range(1, 400):\n    try: os.kill(pid, signal.SIGKILL)\n" \
             "    except OSError: pass\n" + HONEST
    judge.judge(PLUS_ONE, killer)
    assert judge_pids(solo_pool) == before
    assert judge.judge(PLUS_ONE, HONEST).passed


PROXIES = "__import__('sys').modules['solidcoder.execution.inside.proxies']"
SAME_SCRIPT_TAMPERING = {
    "patches the proxies": f"assert f(1) == 2\n{PROXIES}._incoming = lambda *a: 2",
    "patches numpy, loaded after the snapshot": "import numpy as np\nassert np.array_equal(f(1), 2)\n"
                                                "np.array_equal = lambda *a, **k: True",
}


@pytest.mark.parametrize("how", sorted(SAME_SCRIPT_TAMPERING))
def test_a_script_that_changes_what_its_judge_relies_on_does_not_pass_its_next_run(solo_pool, how):
    if "numpy" in how:
        pytest.importorskip("numpy")
    tampering = problem([TestCase(kind="call", script=SAME_SCRIPT_TAMPERING[how])])
    judge = Judge(solo_pool)
    assert judge.judge(tampering, HONEST).passed
    assert not judge.judge(tampering, WRONG).passed


SOURCE = Path(__import__("solidcoder").__file__).parent.parent


def _imports(module: str) -> set[str]:
    """The absolute imports of a module of this package, as written in its source (`from a import b` gives both
    `a` and `a.b`: b may be a module)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse((SOURCE / (module.replace(".", "/") + ".py")).read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # `a.b` where b is a name in module a
        return False


def test_integrity_watches_every_module_the_judge_imports():
    import sys

    from solidcoder.execution.inside import integrity

    own, todo, outside = set(), ["solidcoder.execution.inside.referee"], set()
    while todo:
        own.add(module := todo.pop())
        for name in _imports(module) - own:
            if name.startswith("solidcoder"):
                todo += [name] if (SOURCE / (name.replace(".", "/") + ".py")).exists() else []
            elif name.split(".")[0] in sys.stdlib_module_names | {"numpy"} and _is_module(name):
                outside.add(name)
    annotations_only = {"__future__", "typing"}
    assert own == set(integrity.OWN_MODULES)
    assert outside - annotations_only <= set(integrity.STDLIB_MODULES + integrity.LAZY_MODULES)
