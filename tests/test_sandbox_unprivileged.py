"""The sandbox started by an ordinary user (no root): a user namespace instead of a uid change.

The pool runs under `setpriv` as nobody with the system Python (the test Python may live in root's private
home); one script collects what each hostile program observed, and each test asserts one property of it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
programs = {
    "layers": None,
    "write_outside": "open('/var/tmp/solidcoder-nobody', 'w')",
    "caps": "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])",
    "setuid": "import os\\nos.setuid(5)",
    "socket": "import socket\\nsocket.socket()",
    "loop": "while True: pass",
    "fork_bomb": "import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass",
    "after": "print('alive')",
}
out = {}
with SandboxPool(SandboxConfig(workers=1), Limits(wall_s=1.0)) as pool:
    out["layers"] = {layer.name: layer.on for layer in pool.layers}
    for name, code in programs.items():
        if code is not None:
            result = pool.run_program(code)
            out[name] = [result.status, result.stdout, result.stderr[-200:]]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> dict:
    if not (Path(SYSTEM_PYTHON).exists() and shutil.which("setpriv")):
        pytest.skip("needs /usr/bin/python3 and setpriv to start the pool as an ordinary user")
    # A copy nobody can read, wherever the checkout lives (a private temp dir, root's home...).
    readable = Path(tempfile.mkdtemp(prefix="solidcoder-nobody-", dir="/var/tmp"))
    shutil.copytree(REPO / "solidcoder", readable / "solidcoder", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [readable, *readable.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SYSTEM_PYTHON, "-c", SCRIPT,
               str(readable)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/")
    finally:
        shutil.rmtree(readable, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_layer_is_on_through_a_user_namespace(observed):
    assert observed["layers"] == {"user_namespace": True, "network": True, "filesystem": True,
                                  "pid_namespace": True, "seccomp": True, "memory_cgroup": False}


def test_filesystem_is_read_only(observed):
    assert observed["write_outside"][0] == "runtime_error"
    assert "FileNotFoundError" in observed["write_outside"][2]  # /var/tmp is not even part of the root


def test_no_capabilities_remain(observed):
    assert observed["caps"][:2] == ["ok", "0000000000000000\n"]


def test_setuid_is_refused(observed):
    assert observed["setuid"][0] == "runtime_error" and "PermissionError" in observed["setuid"][2]


def test_sockets_are_refused(observed):
    assert observed["socket"][0] == "runtime_error" and "PermissionError" in observed["socket"][2]


def test_infinite_loop_times_out(observed):
    assert observed["loop"][0] == "timeout"


def test_fork_bomb_is_contained(observed):
    assert observed["fork_bomb"][0] in ("timeout", "runtime_error")
    assert observed["after"][:2] == ["ok", "alive\n"]
