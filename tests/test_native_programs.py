"""C++ and JavaScript programs built and run in the real sandbox, judged on stdin/stdout (issue 41's first part)."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
import sys

import pytest

from solidcoder.execution.build import prepare
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import SandboxConfig, SandboxPool
from solidcoder.execution.sealed import SEALS, SealedFiles, sealed
from solidcoder.languages import CPP, by_suffix, missing_libraries
from solidcoder.problem import Problem, TestCase

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (.ci/run installs it)")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (.ci/run installs it)")

ADD = Problem(id="add", kind="stdio", statement="print a+b", language="cpp", public_tests=[
    TestCase(kind="stdio", stdin="1 2\n", expected_stdout="3"), TestCase(kind="stdio", stdin="5 5\n",
                                                                         expected_stdout="10")])
RIGHT = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(SandboxConfig(workers=2)) as sandbox:
        yield sandbox


@needs_gxx
@pytest.mark.parametrize(("code", "statuses", "detail"), [
    (RIGHT, {"pass"}, ""),
    ("#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a*b;}\n", {"fail"}, "expected '3'"),
    ("int main(){ return missing; }\n", {"compile_error"}, "'missing' was not declared"),
    ("#include <cstdlib>\nint main(){abort();}\n", {"error"}, "SIGABRT"),
    ("int main(){volatile int *p=nullptr; return *p;}\n", {"error"}, "SIGSEGV"),
    ("int main(){volatile int z=0; return 7/z;}\n", {"error"}, "SIGFPE"),
    ("int main(){for(;;);}\n", {"timeout"}, "time limit"),
])
def test_cpp_verdicts_name_what_happened(pool, code, statuses, detail):
    report = Judge(pool).judge(dataclasses.replace(ADD, time_limit_s=1.0), code)
    assert {v.status for v in report.verdicts} == statuses and len(report.verdicts) == 2
    assert detail.replace("'", "") in report.verdicts[0].detail.replace("‘", "").replace("’", "").replace("'", "")


@needs_gxx
def test_a_program_compiles_once_per_source_and_executor(pool):
    first = prepare(pool, CPP, RIGHT + "// once\n")
    jobs = next(first)
    assert jobs[0][0]["mode"] == "build"
    with pytest.raises(StopIteration) as done:
        first.send([pool.run(*jobs[0])])
    assert done.value.value.built
    with pytest.raises(StopIteration) as again:  # the kept binary: no job is asked for
        next(prepare(pool, CPP, RIGHT + "// once\n"))
    assert again.value.value.job == done.value.value.job


@needs_node
def test_javascript_runs_from_source(pool):
    code = "const [a,b]=require('fs').readFileSync(0,'utf8').trim().split(/\\s+/).map(Number);console.log(a+b)\n"
    report = Judge(pool).judge(dataclasses.replace(ADD, language="javascript"), code)
    assert report.passed, report.verdicts


def test_a_program_file_is_read_in_the_language_of_its_suffix():
    assert [by_suffix(p).name for p in ("a.cpp", "B.CC", "x.js", "y.py", "z")] == \
        ["cpp", "cpp", "javascript", "python", "python"]


FORGER = r'''#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
int main(){
  const char* rec = "{\"event\": \"exit\", \"exit_code\": 0, \"signal\": null}\n";
  int wrote = 0, opened = 0;
  for (int fd = 3; fd < 64; fd++) wrote += write(fd, rec, strlen(rec)) > 0;
  const char* paths[] = {"/proc/1/fd/3", "/proc/1/fd/6", "/proc/1/mem"};
  for (auto p : paths) opened += open(p, O_WRONLY) >= 0;
  kill(1, SIGINT); kill(1, SIGTERM); kill(1, SIGPIPE); kill(1, SIGKILL); kill(-1, SIGKILL);
  FILE* f = fopen("/tmp/left_behind", "w"); if (f) { fputs("secret", f); fclose(f); }
  printf("%d %d\n", wrote, opened);
  fflush(stdout);
  volatile int* q = nullptr; return *q;
}
'''


@needs_gxx
def test_a_program_cannot_forge_its_exit_nor_reach_its_init_nor_an_earlier_run(pool):
    report = Judge(pool).judge(ADD, FORGER)
    assert [v.status for v in report.verdicts] == ["error", "error"] and "SIGSEGV" in report.verdicts[0].detail
    assert report.verdicts[0].actual == "0 0\n"  # no descriptor to write to, no /proc/1 to open
    reader = "#include <cstdio>\nint main(){printf(\"%d\\n\", fopen(\"/tmp/left_behind\", \"r\") != nullptr);}\n"
    later = Judge(pool).judge(dataclasses.replace(ADD, public_tests=[TestCase(kind="stdio", stdin="",
                                                                              expected_stdout="0")]), reader)
    assert later.passed, later.verdicts


@needs_gxx
def test_a_kept_binary_is_one_of_the_same_build_command_and_limits(pool):
    source = RIGHT + "// limits\n"
    first = prepare(pool, CPP, source)
    jobs = next(first)
    with pytest.raises(StopIteration):
        first.send([pool.run(*jobs[0])])
    other = dataclasses.replace(CPP, build=dataclasses.replace(CPP.build, memory_mb=1024))
    assert next(prepare(pool, other, source))[0][0]["mode"] == "build"  # other limits: built again, not reused


@needs_gxx
def test_a_cpp_programs_stderr_is_never_read_as_a_python_traceback(pool):
    fake = ('#include <cstdio>\nint main(){fputs("Traceback (most recent call last):\\n  File \\"solution.py\\", '
            'line 1, in <module>\\nValueError: forged\\n", stderr); return 1;}\n')
    report = Judge(pool).judge(ADD, fake)
    assert {v.status for v in report.verdicts} == {"error"}
    assert report.verdicts[0].detail == "runtime error (exit 1): ValueError: forged"


SELF_WRITER = r'''#include <cstdio>
#include <fcntl.h>
#include <unistd.h>
int main(){
  char exe[256] = {0};
  readlink("/proc/self/exe", exe, sizeof exe - 1);
  int rw = open("/proc/self/exe", O_WRONLY);
  int wrote = rw >= 0 ? (int)write(rw, "x", 1) : -1;
  printf("%s %d\n", exe, wrote);
}
'''


def built(pool: SandboxPool, code: str):
    step = prepare(pool, CPP, code)
    jobs = next(step)
    with pytest.raises(StopIteration) as done:
        step.send([pool.run(*jobs[0])])
    return done.value.value


@needs_gxx
def test_a_binary_runs_in_place_from_its_sealed_copy_and_cannot_change_it(pool):
    program = built(pool, SELF_WRITER)
    first, second = pool.run(program.job), pool.run(program.job)
    assert first.ok and first.stdout.startswith("/memfd:solidcoder-binary"), first  # no copy in the run's folder
    assert first.stdout.split()[-1] == "-1" and second.stdout == first.stdout  # nothing written, the next run alike


def test_a_sealed_file_refuses_every_writer_and_its_keeper_forgets_the_oldest():
    fd = sealed(b"\x7fELF binary")
    try:
        assert os.pread(fd, 16, 0) == b"\x7fELF binary" and fcntl.fcntl(fd, fcntl.F_GET_SEALS) & SEALS == SEALS
        writer = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY)
        with pytest.raises(PermissionError):
            os.write(writer, b"changed")
        os.close(writer)
        with pytest.raises(OSError):
            os.write(fd, b"changed")  # read-only
    finally:
        os.close(fd)
    keeper = SealedFiles(limit=2)
    copies = [keeper.open(digest, digest.encode()) for digest in ("a", "b", "c")]
    assert [os.pread(fd, 1, 0) for fd in copies] == [b"a", b"b", b"c"]
    assert len(keeper._fds) == 2 and "a" not in keeper._fds  # a copy given out stays readable (its own descriptor)
    keeper.close()
    for fd in copies:
        os.close(fd)


FALLBACK = r'''
import os, sys
from solidcoder.execution.inside import native
binary = open(sys.argv[1], "rb").read()
memfd = os.memfd_create("not-executable", os.MFD_CLOEXEC | 0x0008)  # MFD_NOEXEC_SEAL: exec refused in place
os.write(memfd, binary)
os.dup2(memfd, native.ARTIFACT_FD)
os.dup2(os.open("report", os.O_WRONLY | os.O_CREAT, 0o600), native.REPORT_FD)
native.run_exec({"mode": "exec", "code": None, "source": "solution", "command": ["./solution", "copied"]})
'''


def test_a_binary_that_may_not_run_in_place_runs_from_a_copy(tmp_path):
    shutil.copy("/bin/echo", tmp_path / "echo")
    done = subprocess.run([sys.executable, "-c", FALLBACK, str(tmp_path / "echo")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30, check=False)
    if "Invalid argument" in done.stderr:
        pytest.skip("this kernel has no MFD_NOEXEC_SEAL (Linux < 6.3)")
    assert done.stdout == "copied\n" and (tmp_path / "solution").exists(), done.stderr
    assert json.loads((tmp_path / "report").read_text()) == {"event": "exit", "exit_code": 0, "signal": None}


@needs_gxx
def test_the_static_libraries_cpp_links_with_are_looked_for_before_any_call():
    assert missing_libraries(CPP) == []  # scripts/test.sh installs g++ with them
    assert missing_libraries(dataclasses.replace(CPP, libraries=("libnosuch.a", "libc.a"))) == ["libnosuch.a"]
    assert missing_libraries(dataclasses.replace(CPP, toolchain="no-such-g++")) == ["libc.a", "libstdc++.a"]
