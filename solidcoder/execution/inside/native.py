"""Programs that are not Python, inside the candidate's sandboxed process: build one, or run one. It decides nothing.

The process this runs in is the run's init (PID 1 of its namespace), confined like every candidate (uid, rlimits,
cgroup, seccomp, the read-only root). `build` writes the source into the run's directory and runs the compiler as
a child; on success it copies the binary to the artifact descriptor (6), where the pool reads it back. `exec` runs
the language's command as a child: a built binary in place from descriptor 6 (a sealed, read-only memfd; a copy in
the run's directory where /proc is missing or a memfd may not be executed), or the source, written there. Either way
the child inherits the confinement (rlimits, seccomp and no_new_privs survive exec) and holds only 0, 1 and 2.

The program is a child, not init, so its crash is its own signal (an init ignores the signals it sends itself,
so `abort()` would not end it with SIGABRT). This process waits for it and writes its exit status to the report
descriptor (3), which the child never holds; before the child starts, this process makes itself undumpable, so the
program cannot open its memory or descriptors through /proc, and takes the default action for every signal, which
for an init means that no process of the run can signal it.
"""

from __future__ import annotations

import _signal
import ctypes
import json
import os
import resource
import signal

from solidcoder.execution.inside.linux import libc

ARTIFACT_FD, REPORT_FD = 6, 3
IN_PLACE = f"/proc/self/fd/{ARTIFACT_FD}"  # a built binary, executed where it is (a sealed memfd, `sealed.py`)
_PR_SET_DUMPABLE = 4
_SYS_CLOSE_RANGE, _CLOSE_RANGE_CLOEXEC = 436, 4  # one number on every architecture; CLOEXEC since Linux 5.11
_EXEC_FAILED = 127


def run(job: dict) -> int:
    """The job's `build` or `exec`; an error of this process's own (the run's directory full) is exit code 1 with
    its message on stderr, as a shell reports it."""
    try:
        return run_build(job) if job["mode"] == "build" else run_exec(job)
    except OSError as exc:
        os.write(2, f"{job['source']}: {exc.strerror or exc}\n".encode(errors="replace"))
        return 1


def run_build(job: dict) -> int:
    """Compile `job["code"]` with `job["command"]`; the binary goes to the artifact descriptor. Returns the exit
    code: 0 when built, else 1 with the compiler's diagnostics (and how it ended) on stderr."""
    _write(job["source"], job["code"].encode(), 0o600)
    status = _spawn(job["command"], stdout=2)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and os.path.isfile(job["output"]):
        _copy_to(job["output"], ARTIFACT_FD)
        return 0
    if os.WIFSIGNALED(status):
        os.write(2, f"\nthe compiler was killed by {signal_name(os.WTERMSIG(status))}\n".encode())
    return 1


def run_exec(job: dict) -> int:
    """Run the program with `job["command"]` and report how it ended; returns this process's exit code (0)."""
    if job.get("code") is not None:
        _write(job["source"], job["code"].encode(), 0o600)
        status = _spawn(job["command"], stdout=1)
    else:
        status = _spawn(job["command"], stdout=1, path=IN_PLACE) if os.path.exists(IN_PLACE) else None
        if status is None:  # no /proc, or a memfd may not be executed here: a copy in the run's directory
            _place_binary(job["source"])
            status = _spawn(job["command"], stdout=1)
    record = {"event": "exit", "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
              "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}
    os.write(REPORT_FD, json.dumps(record).encode() + b"\n")
    return 0


def _place_binary(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o700)
    try:
        _copy(ARTIFACT_FD, fd)
    finally:
        os.close(fd)


def _spawn(command: list[str], stdout: int, path: str = "") -> int | None:
    """Run `command` (the file at `path` when given, `command[0]` named as its argv[0]) as a child holding only 0, 1
    (`stdout`) and 2; its wait status. When `path` cannot be started, None; when `command[0]` cannot, a shell's
    status (127) and its words on stderr."""
    prepare_parent()
    try:
        pid = start(command, {} if stdout == 1 else {1: stdout}, path)
    except OSError as exc:  # no such command, or not executable
        if path:
            return None
        os.write(2, f"cannot start {command[0]}: {exc.strerror or exc}\n".encode(errors="replace"))
        return _EXEC_FAILED << 8
    return wait(pid)


def prepare_parent() -> None:
    """Before any child starts: this process undumpable, every signal at its default, no descriptor inherited."""
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    _default_signals()
    _close_on_exec()


def start(command: list[str], fds: dict[int, int], path: str = "") -> int:
    """Spawn `command` with `fds` put at their numbers (0-2); its pid (OSError when it cannot start). The child is
    spawned (`posix_spawnp`: the kernel shares this process's memory until the exec, where a fork would copy its page
    tables, a third of a small program's run), every descriptor above 2 closed at its exec (after the kernel opened
    `path`: a binary runs from the artifact descriptor)."""
    return os.posix_spawnp(path or command[0], command, os.environ,
                           file_actions=[(os.POSIX_SPAWN_DUP2, fd, number) for number, fd in fds.items()])


def wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def _default_signals() -> None:
    """Take the default action for every signal: none is left to a Python handler or ignored (the child would keep
    an ignored one across its exec). Only those not at the default yet are set (each a system call)."""
    for number in range(1, signal.NSIG):
        if _signal.getsignal(number) != 0:  # 0 is SIG_DFL (the C module: no enum made per signal, 100 us in all)
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):  # SIGKILL, SIGSTOP, the C library's own
                continue


def _close_on_exec() -> None:
    """Mark every descriptor above 2 of this process close-on-exec, so the program holds only 0, 1 and 2: one
    `close_range` call (Linux 5.11), else each descriptor /proc lists, else every number the limit allows."""
    if libc.syscall(_SYS_CLOSE_RANGE, 3, ctypes.c_uint(0xFFFFFFFF), _CLOSE_RANGE_CLOEXEC) == 0:
        return
    try:
        numbers = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        numbers = list(range(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
    for number in numbers:
        if number > 2:
            try:
                os.set_inheritable(number, False)
            except OSError:  # closed meanwhile (the listing's own descriptor)
                continue


def _write(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _copy_to(path: str, target: int) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _copy(fd, target)
    finally:
        os.close(fd)


def _copy(source: int, target: int) -> None:
    """All of `source` (from its start) to `target`, in the kernel."""
    size, sent = os.fstat(source).st_size, 0
    while sent < size:
        done = os.sendfile(target, source, sent, size - sent)
        if done == 0:
            raise OSError("short copy")
        sent += done


def signal_name(number: int) -> str:
    """SIGSEGV for 11: how a crash names its signal (the judge's verdicts too)."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
