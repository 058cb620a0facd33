"""The judge process: runs the tests and decides each verdict, in a process that never executes candidate code.

Started by the zygote beside the candidate's process for every `tests` run. Test scripts with their expected values,
HumanEval-style `check(candidate)` functions and the oracle stage's assert scripts all run here; the program is
reachable only through proxies (`proxies.py`: `Remote`, and `RemoteObject` for an object of the program's that has
no plain value) that send arguments to the candidate's process and decode what comes back as hostile bytes
(`wire.py`). The equality
rule: a comparison with an expected value that the test built is decided here, on the program object's plain value;
it is never decided by the program's `__eq__`. Comparisons between two of the program's own objects may use the
program's methods: they cannot reveal or fake an expected value. Each call waits at most for what is left of its
test's time; past that this process kills the candidate (a pidfd), so a program spinning in C code costs one test's
limit, not the run's. Verdicts go to the report fd as JSON lines that only this process holds. A test script is
trusted to mean what it says (it is the test), but it runs confined like the program: no network, read-only
filesystem.

One judge process serves several runs of one test script in turn (`serve`; the zygote never gives it a run of
another script: `children.JudgeServer`): each run arrives as a request on the control socket carrying that run's
descriptors, which are placed at fixed numbers (`RUN_FDS`) and closed afterwards. After each run it checks that
the tests left it as it was (`integrity.py`); if not, or after its last allowed run, it says so and exits, and the
zygote starts a fresh one for the next run.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
import sysconfig
import time
from typing import Any

from solidcoder.execution.inside.compare import strict_equal
from solidcoder.execution.inside.harness import MAX_REPR, at, compile_standalone, exception_text, program_frames
from solidcoder.execution.inside.integrity import Integrity
from solidcoder.execution.inside.proxies import (
    PIDFD,
    REPLIES,
    REQUESTS,
    CandidateLost,
    Channel,
    Remote,
    TestTimeout,
)

REPORT_FD = 3
CONTROL, JOB = 8, 9
RUN_FDS = (JOB, REPORT_FD, REQUESTS, REPLIES, PIDFD)  # the order the zygote sends them in
def _base_scope(channel: Channel, job: dict) -> dict[str, Any]:
    """The names a test script sees (the sandbox's rule 3): the builtins, the problem's header (the dataset's own
    code, trusted as the test is: its imports and helpers), a proxy for the entry point, and what the program's
    source defines at top level as the trusted side read it (`judge.program_names`): a proxy for each function and
    class, and the judge's own import of each module it imports. The header's names stand where the program
    defines one again; the test script's own names shadow all of these, as in plain Python. Never a builtin, and
    nothing the program reports as it runs: a program cannot rebind `abs` or `isinstance` for the test."""
    scope: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    header = job.get("header") or ""
    if header:
        with contextlib.suppress(Exception):  # a header that fails here fails the tests that need its names
            exec(compile_standalone(header, "prompt.py"), scope)
    name = job["entry_point"].split(".")[0]
    if name:
        scope[name] = Remote(channel, ("name", name), name)
    _add_program_names(scope, channel, job.get("program_names") or {})
    return scope


def _add_program_names(scope: dict, channel: Channel, names: dict) -> None:
    for name in names.get("defined", []):
        if _free(name, scope):
            scope[name] = Remote(channel, ("name", name), name)
    for bind, path, module, attribute in names.get("imports", []):
        value = _judge_import(path, module, attribute) if _free(bind, scope) else _ABSENT
        if value is not _ABSENT:
            scope[bind] = value


_ABSENT = object()


def _free(name: Any, scope: dict) -> bool:
    return type(name) is str and name.isidentifier() and name not in scope and not hasattr(builtins, name)


def _judge_import(path: str, module: str, attribute: str | None) -> Any:
    """`module` (or its `attribute`) after importing `path`, as the judge's own import from the installation's
    library folders; _ABSENT when it cannot be imported from there (a file the program wrote is never imported)."""
    try:
        if not _installed(path):
            return _ABSENT
        importlib.import_module(path)
        found = sys.modules[module]
        if attribute is None:
            return found
        if not hasattr(found, attribute) and _installed(f"{module}.{attribute}"):
            importlib.import_module(f"{module}.{attribute}")
        return getattr(found, attribute)
    except Exception:  # noqa: BLE001 - a module that fails to import here leaves its name unbound, as for the header
        return _ABSENT


def _installed(path: str) -> bool:
    """Whether `path` names a module built in or found under the installation's library folders."""
    spec = importlib.util.find_spec(path)
    if spec is None:
        return False
    origin = spec.origin if spec.has_location else "built-in"
    places = spec.submodule_search_locations or []
    return all(p == "built-in" or os.path.realpath(p).startswith(_LIBRARY) for p in [origin, *places])


_LIBRARY = tuple(os.path.realpath(p) + os.sep for key, p in sysconfig.get_paths().items()
                 if key in ("stdlib", "platstdlib", "purelib", "platlib"))


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a broken __repr__ (of a test's own object) must not break the verdict
        return "<unrepresentable>"
    return text if len(text) <= MAX_REPR else text[:MAX_REPR] + "..."


def _candidate(scope: dict, channel: Channel, entry_point: str):
    """What `check(candidate)` receives: the function, or a fresh instance's method for `Class.method`."""
    if "." not in entry_point:
        found = scope.get(entry_point)
        return found if isinstance(found, Remote) else Remote(channel, ("name", entry_point), entry_point)
    cls_name, method = entry_point.split(".", 1)
    return getattr(Remote(channel, ("name", cls_name), cls_name)(), method)


def _run_one(test: dict, scope: dict, channel: Channel, entry_point: str) -> dict:
    kind = test["kind"]
    if kind == "call":
        value = eval(compile_standalone(test["call"], "test.py", "eval"), scope)
        return {"ok": strict_equal(value, test["expected"], test.get("tolerance", 1e-6)), "actual": _short_repr(value)}
    if kind == "assert":
        exec(compile_standalone(test["script"], "test.py"), scope)
    else:  # "check": a HumanEval-style `def check(candidate)` script
        exec(compile_standalone(test["script"], "test.py"), scope)
        scope["check"](_candidate(scope, channel, entry_point))
    return {"ok": True}


def _alarm(_signum, _frame):
    raise TestTimeout()


def _guarded(test: dict, base: dict, channel: Channel, job: dict) -> dict:
    """One test under its deadline; the candidate's fate during the test overrides how the script ended."""
    channel.deadline = time.monotonic() + job["test_time_s"]
    channel.allowance = job["test_time_s"]  # as long again for sending answers, apart from the program's time
    signal.setitimer(signal.ITIMER_REAL, job["test_time_s"] + 0.05)
    try:
        verdict = _run_one(test, dict(base), channel, job["entry_point"])
    except TestTimeout:
        verdict = {"ok": False, "timeout": True}
    except CandidateLost as exc:
        verdict = {"ok": False, "error": str(exc), "lost": True}
    except BaseException as exc:  # noqa: BLE001 - whatever the test raised is that test's failure
        verdict = {"ok": False, "error": _failure(exc, test)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return _settled(verdict, channel, job)


def _failure(exc: BaseException, test: dict) -> str:
    """One line: the exception's type and message once, where the program raised it, then the test's line."""
    text, where = getattr(exc, "program_raised", (exception_text(exc), ""))
    frames = program_frames(exc, {"test.py": test.get("call") or test.get("script") or ""})
    places = [f"at {where}"] if where else []
    places += [f"{'called from' if where else 'at'} {at(frames[-1])}"] if frames else []
    return " ".join(filter(None, [text, ", ".join(places)]))


def _settled(verdict: dict, channel: Channel, job: dict) -> dict:
    if channel.timed_out or verdict.get("timeout"):
        return {"ok": False, "timeout": True, "error": f"timed out after {job['test_time_s']} s",
                "lost": channel.lost is not None}
    if channel.lost is not None:
        return {"ok": False, "error": channel.lost, "lost": True}
    return verdict


def _emit(record: dict) -> None:
    data = (json.dumps(record, default=repr) + "\n").encode()
    while data:
        data = data[os.write(REPORT_FD, data) :]


def _loaded(channel: Channel, job: dict) -> Any:
    """The program's names once it has loaded, or None after reporting why it did not."""
    channel.deadline = time.monotonic() + job["test_time_s"]
    signal.setitimer(signal.ITIMER_REAL, job["test_time_s"] + 0.05)  # decoding a hostile reply takes time too
    try:
        reply = channel.receive()
    except (TimeoutError, TestTimeout):
        channel.kill("timed out while loading")
        reply = ("load_error", f"the program did not finish loading within {job['test_time_s']} s")
    except (EOFError, OSError, CandidateLost):
        reply = ("load_error", "the program's process ended while loading")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if reply[0] == "loaded" and len(reply) == 2:
        return reply[1]
    _emit({"event": "load_error", "error": str(reply[1] if len(reply) > 1 else reply)[:2000]})
    return None


def judge_run(job: dict) -> None:
    """One run: every test in turn, one verdict each, then `done`."""
    channel = Channel()
    names = _loaded(channel, job)
    if names is not None:
        base = _base_scope(channel, job)
        for index, test in enumerate(job["tests"]):
            verdict = _guarded(test, base, channel, job)
            _emit({"event": "test", "index": index, **verdict})
            if channel.lost or (job.get("stop_on_failure") and not verdict["ok"]):
                break
    channel.lost = channel.lost or "the run is over"  # a test's leftover thread cannot reach the next run's program
    _emit({"event": "done"})


def _place(fds: list[int]) -> None:
    """Move one run's descriptors to `RUN_FDS` (through high copies, so no source is overwritten)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, target in zip(high, RUN_FDS, strict=True):
        os.dup2(fd, target)
        os.close(fd)


def _next_run(control: socket.socket) -> dict | None:
    """The next run's job, its descriptors in place; None when the zygote is gone or sent something else."""
    try:
        message, fds, _, _ = socket.recv_fds(control, 16, len(RUN_FDS))
    except OSError:
        return None
    if message != b"run" or len(fds) != len(RUN_FDS):
        for fd in fds:
            os.close(fd)
        return None
    _place(fds)
    size = os.fstat(JOB).st_size
    job = json.loads(os.pread(JOB, size, 0))
    os.close(JOB)
    return job


def serve(runs: int) -> None:
    """Entry point of the judge process: judge up to `runs` runs sent on `CONTROL`, then exit. Never returns.

    After each run it answers `again`, or `fresh` when it will serve no more (its last run, or the tests changed
    what it relies on).
    """
    signal.signal(signal.SIGALRM, _alarm)
    control = socket.socket(fileno=CONTROL)
    integrity = Integrity()
    for served in range(1, runs + 1):
        job = _next_run(control)
        if job is None:
            break
        judge_run(job)
        for fd in RUN_FDS[1:]:
            os.close(fd)
        again = served < runs and integrity.intact()
        control.sendall(b"again" if again else b"fresh")
        if not again:
            break
    os._exit(0)
