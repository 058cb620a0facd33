"""The sandbox against real programs: every status, and a hostile suite with one property per test.

Each hostile test ends by checking that the pool still serves an ordinary program. The programs live in
hostile_programs.py, so that other executors (test_executor_ray.py) are held to the same verdicts.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hostile_programs import ENVIRONMENT_PROBE, FAST, run_hostile, socket_program
from leftovers import no_leftovers, sandbox_pids

from solidcoder.execution.runs import STATUSES
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool


def still_serves(pool: SandboxPool) -> None:
    result = pool.run_program("print('alive')")
    assert (result.status, result.stdout) == ("ok", "alive\n")


def test_every_isolation_layer_is_on_here(sandbox_pool):
    layers = {layer.name: layer for layer in sandbox_pool.layers}
    assert set(layers) == {"network", "filesystem", "pid_namespace", "seccomp", "memory_cgroup"}
    assert all(layer.on for layer in layers.values()), layers


def test_disabled_layers_are_reported_not_hidden():
    with SandboxPool(SandboxConfig(workers=1, isolate=False, seccomp=False)) as pool:
        off = {layer.name: layer.detail for layer in pool.layers if not layer.on}
        assert set(off) == {"network", "filesystem", "pid_namespace", "seccomp", "memory_cgroup"}
        assert pool.run_program("print(6 * 7)").stdout == "42\n"


def test_status_ok_with_stdin(sandbox_pool):
    result = run_hostile(sandbox_pool, "sum_stdin")
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "42\n")


def test_status_runtime_error(sandbox_pool):
    result = run_hostile(sandbox_pool, "zero_division")
    assert result.status == "runtime_error" and result.exit_code == 1
    assert "ZeroDivisionError" in result.stderr and "harness.py" not in result.stderr


def test_status_timeout_on_infinite_loop(sandbox_pool):
    started = time.perf_counter()
    result = run_hostile(sandbox_pool, "infinite_loop")
    assert result.status == "timeout"
    assert time.perf_counter() - started < 3
    still_serves(sandbox_pool)


def test_status_timeout_on_sleep(sandbox_pool):
    result = run_hostile(sandbox_pool, "long_sleep")
    assert result.status == "timeout"


def test_status_memory_limit(sandbox_pool):
    result = run_hostile(sandbox_pool, "eight_gigabytes_at_once")
    assert result.status == "memory_limit"
    still_serves(sandbox_pool)


def test_memory_bomb_by_growth(sandbox_pool):
    result = run_hostile(sandbox_pool, "memory_growth")
    assert result.status == "memory_limit"
    still_serves(sandbox_pool)


def test_status_output_limit_on_stdout_flood(sandbox_pool):
    result = run_hostile(sandbox_pool, "stdout_flood")
    assert result.status == "output_limit"
    assert len(result.stdout) <= FAST.max_output_bytes and result.stdout_truncated
    still_serves(sandbox_pool)


def test_status_killed_from_outside(sandbox_pool):
    before = set(sandbox_pids(sandbox_pool))

    def kill_the_run():
        for _ in range(200):
            fresh = set(sandbox_pids(sandbox_pool)) - before
            if fresh:
                for pid in fresh:
                    os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.01)

    killer = threading.Thread(target=kill_the_run)
    killer.start()
    result = sandbox_pool.run_program("import time\ntime.sleep(5)", limits=Limits(wall_s=5.0))
    killer.join()
    assert result.status == "killed" and result.signal == signal.SIGKILL
    still_serves(sandbox_pool)


def test_status_sandbox_error_when_a_worker_dies():
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        zygote = pool._workers[0].proc
        threading.Timer(0.3, zygote.kill).start()
        result = pool.run_program("import time\ntime.sleep(3)", limits=Limits(wall_s=3.0))
        assert result.status == "sandbox_error" and "worker" in result.detail
        still_serves(pool)  # the worker is restarted on the next run


def test_statuses_are_a_closed_set():
    assert STATUSES == ("ok", "runtime_error", "timeout", "memory_limit", "output_limit", "killed", "sandbox_error")


def test_fork_bomb_is_contained_and_leaves_nothing(sandbox_pool):
    result = run_hostile(sandbox_pool, "fork_bomb")
    assert result.status in ("timeout", "runtime_error")
    no_leftovers(sandbox_pool)
    still_serves(sandbox_pool)


def test_double_forked_daemon_does_not_outlive_its_run(sandbox_pool):
    result = run_hostile(sandbox_pool, "double_forked_daemon")
    assert result.stdout == "parent done\n"
    no_leftovers(sandbox_pool)


def test_ten_gigabyte_file_write_is_stopped(sandbox_pool):
    result = run_hostile(sandbox_pool, "ten_gigabyte_file")
    assert result.status == "runtime_error" and "File too large" in result.stderr
    still_serves(sandbox_pool)


def test_writes_outside_the_working_dir_fail(sandbox_pool):
    result = run_hostile(sandbox_pool, "write_outside_workdir")
    assert result.status == "runtime_error"
    assert not os.path.exists("/var/tmp/solidcoder-escape")


def test_writes_into_the_callers_directory_by_absolute_path_fail(sandbox_pool):
    # /var/tmp, not the checkout: a checkout under /tmp would be hidden by the sandbox's private /tmp anyway.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as caller_dir:
        os.chmod(caller_dir, 0o777)  # even a world-writable directory of the caller stays out of reach
        target = Path(caller_dir) / "escaped.txt"
        result = sandbox_pool.run_program(f"open({str(target)!r}, 'w').write('x')", limits=FAST)
        assert result.status == "runtime_error" and "FileNotFoundError" in result.stderr  # not even visible
        assert not target.exists()


def test_tmp_is_private_and_wiped_between_runs(sandbox_pool):
    first = run_hostile(sandbox_pool, "leave_a_tmp_file")
    assert first.stdout == "wrote\n" and not os.path.exists("/tmp/left-behind")
    assert {run_hostile(sandbox_pool, "look_for_a_tmp_file").stdout for _ in range(4)} == {"False\n"}


def test_reading_etc_shadow_fails(sandbox_pool):
    result = run_hostile(sandbox_pool, "read_etc_shadow")
    assert result.status == "runtime_error" and "FileNotFoundError" in result.stderr  # /etc holds no secrets
    assert result.stdout == ""


def test_socket_to_a_local_listener_fails(sandbox_pool):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        result = sandbox_pool.run_program(socket_program(port), limits=FAST)
        assert result.status == "runtime_error"
        with pytest.raises(socket.timeout):
            listener.accept()


def test_network_namespace_alone_blocks_loopback(tmp_path):
    with socket.socket() as listener, SandboxPool(SandboxConfig(workers=1, seccomp=False)) as pool:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)"
        result = pool.run_program(code, limits=FAST)
        assert result.status == "runtime_error" and "Network is unreachable" in result.stderr


def test_environment_is_scrubbed_of_caller_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret")
    with SandboxPool(SandboxConfig(workers=1)) as pool:
        result = pool.run_program(ENVIRONMENT_PROBE)
    assert result.status == "ok" and "TMPDIR" in result.stdout
    assert "sk-very-secret" not in result.stdout and "OPENAI_API_KEY" not in result.stdout


def test_runs_as_an_unprivileged_user(sandbox_pool):
    result = run_hostile(sandbox_pool, "who_am_i")
    uid, gid, groups = result.stdout.split(maxsplit=2)
    assert int(uid) >= sandbox_pool.config.uid_base and int(gid) >= sandbox_pool.config.uid_base
    assert groups.strip() == "[]"


def test_ptrace_and_setuid_are_refused(sandbox_pool):
    result = run_hostile(sandbox_pool, "ptrace_and_setuid")
    assert result.stdout == "-1 1\nsetuid refused\n"


def test_exit_code_is_reported(sandbox_pool):
    result = run_hostile(sandbox_pool, "exit_code_four")
    assert (result.status, result.exit_code, result.stdout) == ("runtime_error", 4, "bye\n")


def test_os_exit_zero_is_ok_for_a_script(sandbox_pool):
    result = run_hostile(sandbox_pool, "os_exit_zero")
    assert (result.status, result.stdout) == ("ok", "x\n")


def test_deep_recursion_is_a_runtime_error(sandbox_pool):
    result = run_hostile(sandbox_pool, "deep_recursion")
    assert result.status == "runtime_error" and "RecursionError" in result.stderr
    still_serves(sandbox_pool)


def test_c_stack_overflow_is_a_runtime_error(sandbox_pool):
    result = run_hostile(sandbox_pool, "c_stack_overflow")
    assert result.status == "runtime_error" and result.signal == signal.SIGSEGV
    still_serves(sandbox_pool)


def test_segfault_via_ctypes(sandbox_pool):
    result = run_hostile(sandbox_pool, "segfault_via_ctypes")
    assert result.status == "runtime_error" and result.signal == signal.SIGSEGV
    still_serves(sandbox_pool)


def test_killing_its_parent_leaves_the_pool_serving(sandbox_pool):
    run_hostile(sandbox_pool, "kill_its_parent")
    still_serves(sandbox_pool)


def test_killing_every_visible_process_leaves_the_pool_serving(sandbox_pool):
    run_hostile(sandbox_pool, "kill_every_visible_process")
    still_serves(sandbox_pool)
    assert pytest is not None and os.getpid() > 0  # and the test process itself is alive to say so


def test_concurrent_runs_use_all_workers(sandbox_pool):
    jobs = [({"mode": "stdio", "code": "import time\ntime.sleep(0.3)\nprint('z')"}, "", FAST)] * 4
    started = time.perf_counter()
    results = sandbox_pool.map(jobs)
    elapsed = time.perf_counter() - started
    assert [r.stdout for r in results] == ["z\n"] * 4
    assert elapsed < 4 * 0.3  # two workers: about 0.6 s, never the serial 1.2 s


def test_a_failed_setup_is_a_sandbox_error_not_the_programs_fault(sandbox_pool):
    result = run_hostile(sandbox_pool, "impossible_setup")
    assert result.status == "sandbox_error" and "setup failed" in result.detail
    assert result.stdout == ""
    still_serves(sandbox_pool)


def test_a_program_cannot_fake_a_sandbox_error(sandbox_pool):
    result = run_hostile(sandbox_pool, "fake_sandbox_error")
    assert result.status == "runtime_error" and result.exit_code == 121


def test_multiprocessing_works_inside_the_sandbox(sandbox_pool):
    result = run_hostile(sandbox_pool, "multiprocessing_pool")
    assert (result.status, result.stdout) == ("ok", "[1, 2]\n")
    no_leftovers(sandbox_pool)


def test_imports_outside_the_preloaded_set_work(sandbox_pool):
    result = run_hostile(sandbox_pool, "uncommon_imports")
    assert (result.status, result.stdout) == ("ok", "imported\n")


VENV_PROBE = """
import sys
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
with SandboxPool(SandboxConfig(workers=1)) as pool:
    result = pool.run_program("import probe_pkg, json; print(probe_pkg.VALUE)")
    print(result.status, result.stdout.strip(), result.stderr[-300:])
"""


def test_a_virtualenv_under_tmp_imports_in_the_sandbox(tmp_path_factory):
    venv = Path(tempfile.mkdtemp(prefix="solidcoder-venv-", dir="/tmp"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
                       check=True, timeout=120)
        python = venv / "bin" / "python"
        site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                              capture_output=True, text=True).stdout.strip()
        (Path(site) / "probe_pkg").mkdir()
        (Path(site) / "probe_pkg" / "__init__.py").write_text("VALUE = 7\n")
        done = subprocess.run([python, "-c", VENV_PROBE], capture_output=True, text=True, timeout=120, cwd="/",
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        assert done.stdout.split()[:2] == ["ok", "7"], done.stdout + done.stderr[-2000:]
    finally:
        shutil.rmtree(venv, ignore_errors=True)


SHADOW_PROBE = """
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
with SandboxPool(SandboxConfig(workers=1)) as pool:
    print(pool.run_program("print(6 * 7)").stdout.strip())
"""


def test_the_sandbox_ignores_a_solidcoder_package_in_the_working_directory(tmp_path):
    shadow = tmp_path / "solidcoder" / "execution" / "inside"
    shadow.mkdir(parents=True)
    for package in (tmp_path / "solidcoder", shadow.parent, shadow):
        (package / "__init__.py").write_text("")
    (shadow / "zygote.py").write_text("raise SystemExit('the shadow zygote ran')\n")
    done = subprocess.run([sys.executable, "-P", "-c", SHADOW_PROBE], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.stdout.strip() == "42", done.stderr[-2000:]
