"""The sandbox's hostile-program suite as data: every program test_sandbox.py runs, with its limits and the
statuses it may end in, so that any executor (the local pool, the Ray executor) can be held to the same verdicts.

`same_output` is False for programs whose output names this particular sandbox (its uid, its environment),
which legitimately differs between two pools; their status must still agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from solidcoder.execution.executor import Executor
from solidcoder.execution.sandbox import ExecResult, Limits

FAST = Limits(wall_s=2.0, max_output_bytes=1 << 20)


@dataclass(frozen=True)
class Hostile:
    code: str
    limits: Limits | None = None
    stdin: str = ""
    statuses: tuple[str, ...] = ("ok",)  # what the run may end in; more than one when it races the clock
    same_output: bool = True


def socket_program(port: int) -> str:
    return f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1).send(b'hi')"


ENVIRONMENT_PROBE = (
    "import os\nprint(dict(os.environ))\n"
    "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
    "    try:\n        print(open(f'/proc/{pid}/environ').read())\n    except OSError:\n        pass\n"
)

HOSTILE: dict[str, Hostile] = {
    "sum_stdin": Hostile("print(sum(map(int, input().split())))", stdin="2 40"),
    "zero_division": Hostile("1 / 0", statuses=("runtime_error",)),
    "infinite_loop": Hostile("while True:\n    pass", Limits(wall_s=0.5), statuses=("timeout",)),
    "long_sleep": Hostile("import time\ntime.sleep(30)", Limits(wall_s=0.5), statuses=("timeout",)),
    "eight_gigabytes_at_once": Hostile("x = bytearray(8 << 30)", FAST, statuses=("memory_limit",)),
    "memory_growth": Hostile("chunks = []\nwhile True:\n    chunks.append(' ' * (1 << 24))",
                             Limits(wall_s=5.0, memory_mb=256), statuses=("memory_limit",)),
    "stdout_flood": Hostile("while True:\n    print('x' * 1000)", FAST, statuses=("output_limit",)),
    "fork_bomb": Hostile("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
                         Limits(wall_s=1.0), statuses=("timeout", "runtime_error")),
    "double_forked_daemon": Hostile(
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\n"
        "print('parent done')\n", FAST),
    "ten_gigabyte_file": Hostile(
        "with open('big', 'wb') as f:\n    for _ in range(10240):\n        f.write(b'0' * (1 << 20))",
        Limits(wall_s=10.0), statuses=("runtime_error",)),
    "write_outside_workdir": Hostile("open('/var/tmp/solidcoder-escape', 'w').write('x')", FAST,
                                     statuses=("runtime_error",)),
    "leave_a_tmp_file": Hostile("open('/tmp/left-behind', 'w').write('x')\nprint('wrote')", FAST),
    "look_for_a_tmp_file": Hostile("import os\nprint(os.path.exists('/tmp/left-behind'))"),
    "read_etc_shadow": Hostile("print(open('/etc/shadow').read())", FAST, statuses=("runtime_error",)),
    "connect_to_loopback": Hostile(socket_program(9), FAST, statuses=("runtime_error",)),
    "dump_the_environment": Hostile(ENVIRONMENT_PROBE, same_output=False),
    "who_am_i": Hostile("import os\nprint(os.getuid(), os.getgid(), os.getgroups())", same_output=False),
    "ptrace_and_setuid": Hostile(
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.ptrace(0, 0, 0, 0), ctypes.get_errno())\n"
        "try:\n    os.setuid(0)\nexcept PermissionError:\n    print('setuid refused')\n", FAST),
    "exit_code_four": Hostile("import sys\nprint('bye')\nsys.exit(4)", statuses=("runtime_error",)),
    "os_exit_zero": Hostile("import os, sys\nprint('x')\nsys.stdout.flush()\nos._exit(0)"),
    "deep_recursion": Hostile("def f(n):\n    return f(n + 1)\nf(0)", FAST, statuses=("runtime_error",)),
    "c_stack_overflow": Hostile(
        "import sys\nsys.setrecursionlimit(10**8)\nx = []\nfor _ in range(10**6):\n    x = [x]\nrepr(x)",
        Limits(wall_s=10.0), statuses=("runtime_error",)),
    "segfault_via_ctypes": Hostile("import ctypes\nctypes.string_at(0)", FAST, statuses=("runtime_error",)),
    "kill_its_parent": Hostile("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('still here')", FAST),
    "kill_every_visible_process": Hostile(
        "import os, signal\n"
        "for pid in [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n", FAST),
    "impossible_setup": Hostile("print('never runs')", Limits(max_open_files=10**7), statuses=("sandbox_error",)),
    "fake_sandbox_error": Hostile("import os, sys\nos.write(2, b'sandbox setup failed: fake')\nos._exit(121)", FAST,
                                  statuses=("runtime_error",)),
    "multiprocessing_pool": Hostile(
        "import multiprocessing as mp\nwith mp.Pool(2) as pool:\n    print(pool.map(abs, [-1, -2]))",
        Limits(wall_s=10.0)),
    "uncommon_imports": Hostile("import sqlite3, xml.dom.minidom, zipfile\nprint('imported')", FAST),
}


def run_hostile(executor: Executor, name: str) -> ExecResult:
    program = HOSTILE[name]
    return executor.run_program(program.code, program.stdin, program.limits)


def verdict(name: str, result: ExecResult) -> tuple:
    """What two executors must agree on for program `name`: the status (or that it is one of the allowed ones),
    the exit code and signal when they are certain, and the output where it does not name the sandbox."""
    program = HOSTILE[name]
    if len(program.statuses) > 1:
        return (result.status in program.statuses,)
    output = (result.stdout, result.stdout_truncated) if program.same_output else ()
    if result.status == "output_limit":  # killed at the cap or failed its next write past RLIMIT_FSIZE: a race
        return (result.status, *output)
    return (result.status, result.exit_code, result.signal, *output)
