"""Issue 13's root causes 1-5, tried as an attacker would, on real sandbox processes (no mocks).

One property per test. For each cause: a program that tries it gets a failing verdict (or, for a channel, finds
nothing), the pool keeps serving afterwards, and an honest program still passes.

1. Forging from inside the candidate's process: rebinding builtins, json, math.isclose, trace hooks, fake records
   on every fd, early exits, fake verdict lines, always-equal and subclassed return values, shadowed helpers,
   a rewritten harness, and searching memory for expected values; for functions, `Solution` methods and classes.
2. No memory of earlier runs: writer/reader pairs on one single-worker pool.
3. Host channels: /proc, the filesystem, Unix sockets, IPC and memory outside RLIMIT_AS.
4. Availability: per-test timeouts that cost one limit each, deep /tmp trees, malformed bytes on every channel.
5. Plain-Python semantics: annotations are evaluated as `python file.py` would.

The hostile programs are in adversarial_programs.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from adversarial_programs import (
    ATTACKS,
    COUNTER,
    COUNTER_TESTS,
    FORGED_COUNTER,
    FUNCTION_TESTS,
    GARBAGE_FRAMES,
    HONEST_BODY,
    IPC_PRELUDE,
    IPC_PROGRAMS,
    MARKER_SEEKER,
    METHOD_TESTS,
    READER,
    SLOW_TO_DECODE,
    TWO_SUM,
    TWO_SUM_TESTS,
    garbage_program,
    new_marker,
    program,
)

import solidcoder
from solidcoder.execution.judge import Judge, JudgeReport
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.execution.trace import trace_program
from solidcoder.problem import Problem, TestCase

HONEST_F = "def f(x):\n    return x + 1\n"
PLUS_ONE = [TestCase(kind="call", call="f(1)", expected=2)]


@pytest.fixture(scope="module")
def judge(sandbox_pool) -> Judge:
    return Judge(sandbox_pool)


@pytest.fixture(scope="module")
def solo_pool():
    """One worker, so that a reader run is cloned from the very zygote that served the writer run before it."""
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        yield pool


def call_problem(tests: list[TestCase], entry_point: str = "f", time_limit_s: float = 5.0) -> Problem:
    """A call problem whose header imports `math`, as a dataset's prompt would: the tests lean on it."""
    return Problem(id="adversarial", kind="call", statement="", entry_point=entry_point, public_tests=tests,
                   time_limit_s=time_limit_s, header="import math")


def stdio_problem(tests: list[TestCase]) -> Problem:
    return Problem(id="adversarial-stdio", kind="stdio", statement="", public_tests=tests)


def still_serves(pool: SandboxPool) -> None:
    result = pool.run_program("print(sum(map(int, input().split())))", "2 40")
    assert (result.status, result.stdout) == ("ok", "42\n")


def honest_still_passes(pool: SandboxPool) -> None:
    report = Judge(pool).judge(call_problem(PLUS_ONE), HONEST_F)
    assert report.passed, report.verdicts


def fails_everywhere(report: JudgeReport) -> None:
    """Every test got a verdict, none of them a pass, and none blamed on the sandbox."""
    assert len(report.verdicts) == report.total > 0
    assert [v for v in report.verdicts if v.passed] == []
    assert not report.infrastructure_error, [v.detail for v in report.verdicts]


def run_stdout(pool: SandboxPool, code: str, stdin: str = "", limits: Limits | None = None) -> str:
    result = pool.run_program(code, stdin, limits)
    assert result.status == "ok", (result.status, result.stderr[-2000:])
    return result.stdout


def memory_cgroup_on(pool: SandboxPool) -> bool:
    return any(layer.name == "memory_cgroup" and layer.on for layer in pool.layers)


# ---------------------------------------------------------------- 1. forging from inside the candidate's process


@pytest.mark.parametrize("style", ["function", "method"])
def test_an_honest_program_passes_every_test_style(judge, style):
    tests, entry = (FUNCTION_TESTS, "f") if style == "function" else (METHOD_TESTS, "Solution.f")
    report = judge.judge(call_problem(tests, entry), program("", HONEST_BODY, style))
    assert report.passed, report.verdicts


@pytest.mark.parametrize("style", ["function", "method"])
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_wrong_program_cannot_forge_a_pass(judge, sandbox_pool, attack, style):
    tests, entry = (FUNCTION_TESTS, "f") if style == "function" else (METHOD_TESTS, "Solution.f")
    prelude, body = ATTACKS[attack]
    fails_everywhere(judge.judge(call_problem(tests, entry, time_limit_s=2.0), program(prelude, body, style)))
    still_serves(sandbox_pool)
    assert judge.judge(call_problem(tests, entry), program("", HONEST_BODY, style)).passed


TRUTH_TESTS = [
    TestCase(kind="call", script="assert is_even(4)"),
    TestCase(kind="call", script="assert is_even(3) != True"),
    TestCase(kind="call", script="assert is_even(8) is not None and is_even(6)"),
    TestCase(kind="call", style="check", script="def check(candidate):\n    assert candidate(2)\n"),
]
ANSWERS_WITH_OBJECTS = (  # every call answered with a handle, i.e. "an object of mine", in place of a value
    "import sys\nsys.modules['solidcoder.execution.inside.harness']._answer = "
    "lambda server, request: ('handle', 1, 'X')\n"
    "def is_even(n):\n    return False\n")


def test_answering_with_objects_does_not_pass_truth_tests(judge, sandbox_pool):
    fails_everywhere(judge.judge(call_problem(TRUTH_TESTS, "is_even"), ANSWERS_WITH_OBJECTS))
    still_serves(sandbox_pool)


def test_an_honest_program_passes_the_truth_tests(judge):
    assert judge.judge(call_problem(TRUTH_TESTS, "is_even"), "def is_even(n):\n    return n % 2 == 0\n").passed


def test_an_object_of_the_programs_class_has_the_truth_value_its_class_gives_it(judge):
    """As in plain Python: truthy by default, `__bool__` decides when the class has one (issue 30)."""
    code = "class Box:\n    def __init__(self, v):\n        self.v = v\n    def get(self):\n        return self.v\n"
    tests = [TestCase(kind="call", script="assert Box(0)"), TestCase(kind="call", script="assert Box(3).get() == 3"),
             TestCase(kind="call", script="assert not Box(0)")]
    assert [v.status for v in judge.judge(call_problem(tests, "Box"), code).verdicts] == ["pass", "pass", "fail"]
    falsy = code + "    def __bool__(self):\n        return bool(self.v)\n"
    assert [v.status for v in judge.judge(call_problem(tests, "Box"), falsy).verdicts] == ["fail", "pass", "pass"]


def test_a_leetcode_solution_method_passes(judge):
    report = judge.judge(call_problem(TWO_SUM_TESTS, "Solution.twoSum"), TWO_SUM)
    assert report.passed, report.verdicts


def test_a_class_based_problem_passes(judge):
    report = judge.judge(call_problem(COUNTER_TESTS, "Counter"), COUNTER)
    assert report.passed, report.verdicts


def test_a_class_based_problem_cannot_be_forged_with_odd_return_values(judge, sandbox_pool):
    fails_everywhere(judge.judge(call_problem(COUNTER_TESTS, "Counter"), FORGED_COUNTER))
    still_serves(sandbox_pool)
    honest_still_passes(sandbox_pool)


def test_the_memory_scanner_finds_a_marker_it_was_given(judge):
    """The control for the searches below: a marker the candidate receives as an argument is found."""
    marker = new_marker()
    report = judge.judge(call_problem([TestCase(kind="call", call=f"f({marker!r})", expected=marker)]), MARKER_SEEKER)
    assert report.passed, report.verdicts


def test_hidden_expected_values_are_not_in_the_candidates_process(judge, sandbox_pool):
    marker = new_marker()
    check = f"def check(candidate):\n    assert candidate(0) == {marker!r}\n"
    tests = [TestCase(kind="call", call="f(0)", expected=marker),
             TestCase(kind="call", script=f"assert f(0) == {marker!r}"),
             TestCase(kind="call", style="check", script=check)]
    report = judge.judge(call_problem(tests), MARKER_SEEKER)
    fails_everywhere(report)
    assert report.verdicts[0].actual == repr("not found")
    still_serves(sandbox_pool)
    honest_still_passes(sandbox_pool)


@pytest.mark.parametrize("how", ["print(MARKER, file=sys.stderr)", "warnings.warn(MARKER)"])
def test_what_a_test_script_writes_to_stderr_does_not_reach_the_candidate(judge, sandbox_pool, how):
    marker = new_marker()
    script = f"import sys, warnings\nMARKER = {marker!r}\n{how}\nsys.stderr.flush()\nassert f(0) == MARKER\n"
    fails_everywhere(judge.judge(call_problem([TestCase(kind="call", script=script)]), MARKER_SEEKER))
    still_serves(sandbox_pool)
    honest_still_passes(sandbox_pool)


def test_a_stdio_programs_expected_output_is_not_in_its_process(judge, sandbox_pool):
    marker = new_marker()
    report = judge.judge(stdio_problem([TestCase(kind="stdio", stdin="", expected_stdout=marker)]), READER)
    fails_everywhere(report)
    assert report.verdicts[0].actual == "not found\n"
    still_serves(sandbox_pool)


# ---------------------------------------------------------------- 2. no memory of earlier runs


def test_a_reader_finds_a_marker_in_its_own_stdin(solo_pool):
    """The control for the writer/reader pairs: the scanner does find a marker that is in its process."""
    marker = new_marker()
    assert run_stdout(solo_pool, "import sys\ndata = sys.stdin.read()\n" + READER, marker).split() == [marker]


def test_no_memory_of_the_previous_programs_source(solo_pool):
    marker = new_marker()
    assert run_stdout(solo_pool, f"SECRET = {marker!r}\nprint(len(SECRET))\n") == "39\n"
    assert run_stdout(solo_pool, READER) == "not found\n"


def test_no_memory_of_the_previous_stdin(solo_pool):
    marker = new_marker()
    assert run_stdout(solo_pool, "import sys\nprint(len(sys.stdin.read()))\n", marker) == "39\n"
    assert run_stdout(solo_pool, READER) == "not found\n"


def test_no_memory_of_the_previous_stdout(solo_pool):
    marker = new_marker()
    writer = f"print('SECRET-' + format({int(marker[7:], 16)}, '032x'))\n"  # the source holds no marker
    assert run_stdout(solo_pool, writer) == marker + "\n"
    assert run_stdout(solo_pool, READER) == "not found\n"


def test_no_memory_of_the_previous_tests_expected_values(solo_pool):
    markers = [new_marker() for _ in range(3)]
    check = f"def check(candidate):\n    assert candidate(3) != {markers[2]!r}\n"
    tests = [TestCase(kind="call", call="f(1)", expected=markers[0]),
             TestCase(kind="call", script=f"assert f(2) != {markers[1]!r}"),
             TestCase(kind="call", style="check", script=check)]
    report = Judge(solo_pool).judge(call_problem(tests), HONEST_F)
    assert [v.status for v in report.verdicts] == ["fail", "pass", "pass"]
    assert run_stdout(solo_pool, READER) == "not found\n"


def test_tmp_and_dev_shm_files_do_not_survive_the_run(solo_pool):
    marker = new_marker()
    writer = (
        "from multiprocessing import shared_memory\n"
        f"for d in ('/tmp', '/dev/shm'):\n    open(d + '/left-behind', 'w').write({marker!r})\n"
        "block = shared_memory.SharedMemory(name='left-behind-too', create=True, size=64)\n"
        "shared_memory.resource_tracker.unregister(block._name, 'shared_memory')\n"
        "print(sorted(__import__('os').listdir('/dev/shm')))\n")
    assert run_stdout(solo_pool, writer) == "['left-behind', 'left-behind-too']\n"
    listing = run_stdout(solo_pool, "import os, json\nprint(json.dumps([os.listdir('/tmp'), os.listdir('/dev/shm')]))")
    tmp, shm = json.loads(listing)
    assert (sorted(tmp), shm) == (sorted(python_mounts_under_tmp()), [])


def python_mounts_under_tmp() -> set[str]:
    """What a fresh /tmp holds: the top folder of the Python installation when it lives under /tmp (a venv there is
    mounted read-only at its own path, so the program can import from it). A checkout under /tmp is not mounted."""
    places = (sys.prefix, sys.base_prefix)
    return {Path(p).relative_to("/tmp").parts[0] for p in places if p.startswith("/tmp/") and Path(p).exists()}


@pytest.mark.parametrize("kind", sorted(IPC_PROGRAMS))
def test_ipc_objects_do_not_survive_the_run(solo_pool, kind):
    marker = new_marker()
    writer, reader = IPC_PROGRAMS[kind]
    assert run_stdout(solo_pool, IPC_PRELUDE + f"MARKER = {marker!r}\n" + writer) == "created\n"
    assert run_stdout(solo_pool, IPC_PRELUDE + reader) == "gone\n"
    still_serves(solo_pool)


def test_sysv_shared_memory_of_a_run_does_not_reach_the_host(solo_pool):
    marker = new_marker()
    writer, _ = IPC_PROGRAMS["sysv_shared_memory"]
    assert run_stdout(solo_pool, IPC_PRELUDE + f"MARKER = {marker!r}\n" + writer) == "created\n"
    keys = {int(line.split()[0]) for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]}
    assert 0x5C0DE13 not in keys


# ---------------------------------------------------------------- 3. host channels


@pytest.fixture
def host_secret():
    """A host process holding a marker in its argv and environment, as `solve --api-key sk-...` would."""
    marker = new_marker()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", marker],
                            env={**os.environ, "SOLIDCODER_ADVERSARIAL_SECRET": marker})
    deadline = time.monotonic() + 5.0  # what a program would look for (set a moment after Popen returns)
    while marker not in Path(f"/proc/{proc.pid}/cmdline").read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker in Path(f"/proc/{proc.pid}/cmdline").read_text()
    yield marker
    proc.kill()
    proc.wait()


PROC_SNOOP = (
    "import os\n"
    "pids = sorted(p for p in os.listdir('/proc') if p.isdigit())\n"
    "seen = ''\n"
    "for pid in pids:\n"
    "    for name in ('cmdline', 'environ'):\n"
    "        try:\n"
    "            seen += open(f'/proc/{pid}/{name}', errors='replace').read()\n"
    "        except OSError:\n"
    "            pass\n"
)


def test_proc_lists_only_the_runs_own_processes(sandbox_pool, host_secret):
    listing = run_stdout(sandbox_pool, PROC_SNOOP + "print(' '.join(pids))\n").split()
    assert listing == ["1"]
    assert str(os.getpid()) not in listing


def test_proc_hides_host_command_lines_and_environments(sandbox_pool, host_secret):
    snoop = PROC_SNOOP + "print('SECRET-' in seen, len(seen) > 0)\n"
    assert run_stdout(sandbox_pool, snoop) == "False True\n"


def test_a_served_candidate_sees_no_host_process_either(judge, host_secret):
    code = PROC_SNOOP + "def f(x):\n    return [pids, 'SECRET-' in seen]\n"
    report = judge.judge(call_problem([TestCase(kind="call", call="f(0)", expected=[["1"], False])]), code)
    assert report.passed, report.verdicts


def python_places() -> list[Path]:
    """What the sandbox must show wherever it lives: the venv, the installation under it, the interpreter and any
    site-packages on the import path (a user site, say)."""
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    places += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    return [Path(p).resolve() for p in places if p]


def way_to_python(folder: Path) -> set[str]:
    """The entries of `folder` that lead to a Python place (none when none lies under it)."""
    return {place.relative_to(folder).parts[0] for place in python_places()
            if place.is_relative_to(folder) and place != folder}


def listings_in_sandbox(pool: SandboxPool, folders: list[Path]) -> dict[str, list[str]]:
    """Each folder's entries as a run sees them ([] where it does not exist)."""
    probe = ("import json, os\nprint(json.dumps({p: sorted(os.listdir(p)) if os.path.isdir(p) else [] "
             f"for p in {[str(f) for f in folders]!r}}}))")
    return json.loads(run_stdout(pool, probe))


def test_the_checkout_its_parent_and_home_show_at_most_the_way_to_python(sandbox_pool):
    """Wherever the venv lives (under the checkout, beside it, in /tmp, in a home folder), a folder holding it shows
    the run only the entry leading to it: no file of the checkout, no sibling of it (datasets beside a checkout), no
    file of the home folder."""
    checkout = Path(solidcoder.__file__).resolve().parents[1]
    folders = [checkout, checkout.parent, Path.home().resolve(), *map(Path, ("/opt", "/srv", "/mnt", "/var", "/tmp"))]
    folders = list(dict.fromkeys(f for f in folders if f != Path("/")))
    seen = listings_in_sandbox(sandbox_pool, folders)
    assert {str(f): sorted(set(seen[str(f)]) - way_to_python(f)) for f in folders} == {str(f): [] for f in folders}


def test_the_checkouts_files_datasets_and_home_files_are_not_found(sandbox_pool, fixture_data):
    checkout, home = Path(solidcoder.__file__).resolve().parents[1], Path.home()
    wanted = [checkout / "solidcoder" / "__init__.py", checkout / "pyproject.toml", checkout / "tests",
              checkout / "benchmarks" / "results", *sorted(fixture_data.glob("*.jsonl")), home / ".bashrc",
              home / ".gitconfig", home / ".ssh", home / ".config", home / ".cache" / "huggingface"]
    hidden = [p for p in wanted if not any(place.is_relative_to(p) for place in python_places())]
    probe = f"import json, os\nprint(json.dumps({{p: os.path.lexists(p) for p in {[str(p) for p in hidden]!r}}}))"
    assert json.loads(run_stdout(sandbox_pool, probe)) == {str(p): False for p in hidden}


def test_the_stdlib_and_installed_packages_still_import(sandbox_pool):
    modules = ["sqlite3", "decimal", "xml.dom.minidom", "zipfile", "ctypes", "multiprocessing", "asyncio"]
    modules += [m for m in ("numpy",) if __import__("importlib.util").util.find_spec(m) is not None]
    code = f"import importlib\nfor m in {modules!r}:\n    importlib.import_module(m)\nprint('imported')\n"
    assert run_stdout(sandbox_pool, code) == "imported\n"


@pytest.fixture
def host_unix_listeners():
    """A stream listener and a datagram socket, world-accessible, on a path and in the abstract namespace."""
    path = f"/var/tmp/solidcoder-adversarial-{uuid.uuid4().hex[:12]}.sock"
    abstract = f"\0solidcoder-adversarial-{uuid.uuid4().hex[:12]}"
    sockets = []
    for address in (path, abstract):
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            sock = socket.socket(socket.AF_UNIX, kind)
            sock.bind(address if kind == socket.SOCK_STREAM else address + "-dgram")
            if kind == socket.SOCK_STREAM:
                sock.listen(8)
            sock.setblocking(False)
            sockets.append(sock)
    for name in (path, path + "-dgram"):
        os.chmod(name, 0o777)
    yield path, abstract, sockets
    for sock in sockets:
        sock.close()
    for name in (path, path + "-dgram"):
        os.unlink(name)


def received_anything(sockets: list[socket.socket]) -> bool:
    for sock in sockets:
        try:
            if sock.type == socket.SOCK_STREAM:
                sock.accept()[0].close()
            else:
                sock.recv(100)
            return True
        except BlockingIOError:
            continue
    return False


def unix_client(path: str, abstract: str) -> str:
    """A program that tries every way to send to the listeners, and prints how each attempt went."""
    return (
        "import socket\n"
        "results = []\n"
        f"for address in ({path!r}, {abstract!r}):\n"
        "    for attempt in ('stream', 'dgram', 'dgram_pair'):\n"
        "        try:\n"
        "            if attempt == 'stream':\n"
        "                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "                s.connect(address)\n"
        "                s.send(b'hello')\n"
        "            elif attempt == 'dgram':\n"
        "                socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'hello', address + '-dgram')\n"
        "            else:\n"
        "                socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0].sendto(b'hello', address + '-dgram')\n"
        "            results.append('reached')\n"
        "        except OSError:\n"
        "            results.append('refused')\n"
        "print(' '.join(results))\n")


def test_unix_sockets_on_the_host_cannot_be_reached(sandbox_pool, host_unix_listeners):
    path, abstract, sockets = host_unix_listeners
    assert run_stdout(sandbox_pool, unix_client(path, abstract)) == " ".join(["refused"] * 6) + "\n"
    time.sleep(0.1)
    assert not received_anything(sockets)
    still_serves(sandbox_pool)
    # The control: the same program outside the sandbox does reach them.
    outside = subprocess.run([sys.executable, "-c", unix_client(path, abstract)], capture_output=True, text=True)
    assert outside.stdout.split() == ["reached"] * 6 and received_anything(sockets)


def test_socketpair_still_works(sandbox_pool):
    code = "import socket\na, b = socket.socketpair()\na.sendall(b'pong')\nprint(b.recv(4).decode())\n"
    assert run_stdout(sandbox_pool, code) == "pong\n"


MEMFD_FILL = (
    "import os\nfds = []\n"
    "for i in range(20):  # 300 MB in 15 MB memfds (each under the file size limit), none of it address space\n"
    "    fds.append(os.memfd_create(f'fill{i}'))\n"
    "    for _ in range(15):\n        os.write(fds[-1], b'x' * (1 << 20))\n"
    "print('filled')\n")
SYSV_SHM_FILL = (
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\n"
    "for _ in range(8):  # 256 MB of segments, each detached once written: they outlive the mapping\n"
    "    ident = libc.shmget(0, 32 << 20, 0o1600)\n"
    "    addr = libc.shmat(ident, None, 0)\n"
    "    ctypes.memset(addr, 1, 32 << 20)\n"
    "    libc.shmdt(ctypes.c_void_p(addr))\n"
    "print('filled')\n")


@pytest.mark.parametrize("code", [MEMFD_FILL, SYSV_SHM_FILL], ids=["memfd", "sysv_shm"])
def test_memory_outside_the_address_space_is_bounded(sandbox_pool, code):
    result = sandbox_pool.run_program(code, limits=Limits(wall_s=10.0, memory_mb=128))
    if memory_cgroup_on(sandbox_pool):
        assert result.status == "memory_limit", (result.status, result.stdout, result.stderr[-500:])
    else:
        assert result.status != "ok"
    still_serves(sandbox_pool)


# ---------------------------------------------------------------- 4. availability and wrong verdicts


def test_a_spin_in_c_code_costs_one_limit_per_test(judge, sandbox_pool):
    count, limit = 5, 1.0
    tests = [TestCase(kind="call", call=f"f({i})", expected=i) for i in range(count)]
    started = time.monotonic()
    report = judge.judge(call_problem(tests, time_limit_s=limit), "def f(x):\n    return sum(range(10**14))\n")
    elapsed = time.monotonic() - started
    assert [v.status for v in report.verdicts] == ["timeout"] * count
    assert elapsed < count * limit + 6.0
    still_serves(sandbox_pool)


def test_a_spin_while_loading_costs_one_limit(judge, sandbox_pool):
    tests = [TestCase(kind="call", call=f"f({i})", expected=i) for i in range(5)]
    started = time.monotonic()
    report = judge.judge(call_problem(tests, time_limit_s=1.0), "x = sum(range(10**14))\ndef f(x):\n    return x\n")
    assert time.monotonic() - started < 1.0 + 6.0
    fails_everywhere(report)
    still_serves(sandbox_pool)


def test_a_reply_that_is_slow_to_decode_costs_one_limit(judge, sandbox_pool):
    count, limit = 3, 1.0
    tests = [TestCase(kind="call", call=f"f({i})", expected=i) for i in range(count)]
    started = time.monotonic()
    report = judge.judge(call_problem(tests, time_limit_s=limit), SLOW_TO_DECODE)
    assert time.monotonic() - started < count * limit + 6.0
    fails_everywhere(report)
    still_serves(sandbox_pool)


DEEP_TREE = (
    "import os\nos.chdir('/tmp')\n"
    "for _ in range(1500):\n    os.mkdir('d')\n    os.chdir('d')\n"
    "open('leaf', 'w').write('x')\nos.chdir('/tmp')\nos.chmod('d', 0)\n")


def test_a_deep_tmp_tree_is_not_a_sandbox_error(sandbox_pool):
    result = sandbox_pool.run_program(DEEP_TREE + "print('planted')\n")
    assert (result.status, result.stdout) == ("ok", "planted\n"), result.stderr[-500:]
    still_serves(sandbox_pool)


def test_a_deep_tmp_tree_left_by_a_judged_program_does_not_change_its_verdict(judge, sandbox_pool):
    report = judge.judge(call_problem(PLUS_ONE * 3), DEEP_TREE + HONEST_F)
    assert report.passed and not report.infrastructure_error, report.verdicts
    still_serves(sandbox_pool)


@pytest.mark.parametrize("when", ["module", "call"])
@pytest.mark.parametrize("payload", sorted(GARBAGE_FRAMES))
def test_malformed_bytes_on_any_channel_are_the_programs_failure(judge, sandbox_pool, payload, when):
    code = garbage_program(GARBAGE_FRAMES[payload], when)
    fails_everywhere(judge.judge(call_problem(PLUS_ONE * 2, time_limit_s=1.0), code))
    still_serves(sandbox_pool)
    honest_still_passes(sandbox_pool)


def test_malformed_records_from_a_stdio_program_are_its_failure(judge, sandbox_pool):
    code = ("import os\nfor fd in range(21):\n    try:\n"
            "        os.write(fd, b'{\"event\": \"done\"}\\n[1]\\n\"x\"\\n' + bytes(range(256)))\n"
            "    except OSError:\n        pass\n")
    report = judge.judge(stdio_problem([TestCase(kind="stdio", stdin="", expected_stdout="42")]), code)
    fails_everywhere(report)
    still_serves(sandbox_pool)


# ---------------------------------------------------------------- 5. plain-Python semantics


def plain_python_fails(source: str) -> bool:
    return subprocess.run([sys.executable, "-c", source], capture_output=True, timeout=30).returncode != 0


UNIMPORTED_ANNOTATION = "def f(xs: List[int]) -> int:\n    return sum(xs)\n"
SUM_TESTS = [TestCase(kind="call", call="f([1, 2])", expected=3),
             TestCase(kind="call", script="assert f([1, 2]) == 3"),
             TestCase(kind="call", style="check", script="def check(candidate):\n    assert candidate([1, 2]) == 3\n")]


def test_an_unimported_annotation_fails_the_program_like_plain_python(judge, sandbox_pool):
    assert plain_python_fails(UNIMPORTED_ANNOTATION)
    report = judge.judge(call_problem(SUM_TESTS), UNIMPORTED_ANNOTATION)
    fails_everywhere(report)
    assert all("NameError" in v.detail for v in report.verdicts), [v.detail for v in report.verdicts]
    still_serves(sandbox_pool)


def test_an_unimported_annotation_fails_a_stdio_program(judge):
    code = UNIMPORTED_ANNOTATION + "print(f([1, 2]))\n"
    assert plain_python_fails(code)
    report = judge.judge(stdio_problem([TestCase(kind="stdio", stdin="", expected_stdout="3")]), code)
    fails_everywhere(report)


def test_the_programs_own_future_import_is_honoured(judge):
    report = judge.judge(call_problem(SUM_TESTS), "from __future__ import annotations\n" + UNIMPORTED_ANNOTATION)
    assert report.passed, report.verdicts


@pytest.mark.parametrize("script, style", [
    ("def total(xs: Sequence[int]) -> int:\n    return f(xs)\nassert total([1, 2]) == 3\n", "assert"),
    ("xs: Sequence[int] = [1, 2]\nassert f(xs) == 3\n", "assert"),
    ("def check(candidate: Callable[[list], int]) -> None:\n    assert candidate([1, 2]) == 3\n", "check"),
], ids=["function_annotation", "variable_annotation", "check_signature"])
def test_an_unimported_annotation_in_a_test_script_fails(judge, script, style):
    honest = "from typing import List\n" + UNIMPORTED_ANNOTATION
    call = "\ncheck(f)\n" if style == "check" else ""
    assert plain_python_fails(honest + script + call)
    report = judge.judge(call_problem([TestCase(kind="call", style=style, script=script)]), honest)
    fails_everywhere(report)
    assert "NameError" in report.verdicts[0].detail


def test_a_test_script_may_annotate_with_names_the_problems_header_imports(judge):
    script = "xs: List[int] = [1, 2]\nassert f(xs) == 3\n"
    assert not plain_python_fails("from typing import List\n" + UNIMPORTED_ANNOTATION + script)
    problem = replace(call_problem([TestCase(kind="call", script=script)]), header="from typing import List")
    report = judge.judge(problem, UNIMPORTED_ANNOTATION)  # the program uses List unimported, as prompt + completion
    assert report.passed, report.verdicts


def test_a_name_the_program_binds_never_reaches_the_test_script(judge):
    """A program's `math` whose every call succeeds would pass `assert math.isclose(f(4), 5)` in plain Python: a
    function or class named like a standard-library module is not bound for the test, a name bound as the program
    runs is not either, while a helper its source defines is (rule 3, amended in issue 38)."""
    forger = "class math:\n    isclose = staticmethod(lambda *a, **k: True)\n\ndef f(x):\n    return -1\n"
    report = judge.judge(call_problem([TestCase(kind="call", script="assert math.isclose(f(4), 5)")]), forger)
    fails_everywhere(report)
    runtime = "def f(x):\n    globals()['helper'] = lambda: 3\n    return x + 1\n"
    report = judge.judge(call_problem([TestCase(kind="call", script="assert f(2) == helper()")]), runtime)
    assert "NameError: name 'helper'" in report.verdicts[0].detail
    helper = "def helper():\n    return 3\n\ndef f(x):\n    return x + 1\n"
    assert judge.judge(call_problem([TestCase(kind="call", script="assert f(2) == helper()")]), helper).passed


DEEP_REPORT = "import os\nos.write(3, b'[' * 200000 + b'\\n')\nprint('done')\n"


def test_deeply_nested_brackets_on_the_report_descriptor_are_the_programs_failure_not_the_pools(sandbox_pool):
    result = sandbox_pool.run_program(DEEP_REPORT, "")
    assert result.stdout.strip() == "done" and result.records == []
    traced = trace_program(sandbox_pool, DEEP_REPORT + "x = 1\n")
    assert traced.ok and traced.scopes["<module>"]["x"] == 1  # the harness's own record still arrives
    still_serves(sandbox_pool)
