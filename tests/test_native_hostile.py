"""Hostile C++ programs in the real sandbox, contained as the Python ones are (issue 41, item 6; see
test_sandbox.py and test_sandbox_adversarial.py for the Python corpus).

Every program here is real C++, built by g++ inside the sandbox and judged through `Judge` on a one-worker pool
(so that each run, the compiler's included, is cloned from the zygote that served the run before it). Where a
test lowers the build's own limits to stay short, it builds through `build.prepare`, the judge's own step, with
a copy of the C++ entry whose `Build` limits differ. Each test asserts the verdict an attack ends in and that the
host is unaffected: no process of the pool's uids outlives the run, no file appears outside the sandbox, a
listener on 127.0.0.1 is never reached, and the next honest program is judged normally.

Run time: a fork bomb; socket() and connect() through libc's syscall(), through the x86-64 `syscall` instruction
and through the i386 and x32 entries; writes outside the run's directory; endless output; memory bombs.
Compile time: deep template recursion; `#include "/dev/zero"`; huge static arrays; includes of hidden files and
of the compiler's environment; a compile that outlasts or outgrows the build's limits.
Reading: what an earlier run wrote, and the expected output of the very test being judged.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from leftovers import no_leftovers

import solidcoder
from solidcoder.execution.build import Program, prepare
from solidcoder.execution.judge import Judge, TestVerdict
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.languages import CPP, Language
from solidcoder.problem import Problem, TestCase

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (.ci/run installs it)")
x86_64_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 assembly")

RIGHT = "#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"
CHECKOUT = Path(solidcoder.__file__).resolve().parents[1]
DATA_FILE = Path("/work/shared/data/apps_selected150.jsonl")  # a dataset beside the checkout, where there is one


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(SandboxConfig(workers=1)) as sandbox:
        yield sandbox


def new_marker() -> str:
    return "SECRET-" + uuid.uuid4().hex


def problem(expected: str, stdin: str = "", **changes) -> Problem:
    """A one-test stdio problem in C++ with a short time limit; `changes` replaces fields."""
    test = TestCase(kind="stdio", stdin=stdin, expected_stdout=expected)
    base = Problem(id="hostile-cpp", kind="stdio", statement="", language="cpp", public_tests=[test], time_limit_s=1.0)
    return dataclasses.replace(base, **changes)


def verdict(pool: SandboxPool, code: str, expected: str = "0", stdin: str = "", **changes) -> TestVerdict:
    """The one verdict of `code` on a one-test problem (a failure of the sandbox itself raises, never a verdict)."""
    report = Judge(pool).judge(problem(expected, stdin, **changes), code)
    assert len(report.verdicts) == 1 and not report.infrastructure_error
    return report.verdicts[0]


def still_judges(pool: SandboxPool) -> None:
    assert verdict(pool, RIGHT, "3", "1 2\n").passed


def build(pool: SandboxPool, code: str, language: Language = CPP) -> Program:
    """`code` made runnable by `build.prepare`, its build job (none when the binary is kept) run on `pool`."""
    step = prepare(pool, language, code)
    try:
        jobs = next(step)
        while True:
            jobs = step.send([pool.run(*job) for job in jobs])
    except StopIteration as done:
        return done.value


def limited(**changes) -> Language:
    """The C++ entry with other build limits (`Build`'s fields)."""
    assert CPP.build is not None
    return dataclasses.replace(CPP, build=dataclasses.replace(CPP.build, **changes))


def memory_cgroup_on(pool: SandboxPool) -> bool:
    return any(layer.name == "memory_cgroup" and layer.on for layer in pool.layers)


# ---------------------------------------------------------------- run time: processes, network, files, output, memory


def test_a_fork_bomb_times_out_and_leaves_no_process(pool):
    started = time.monotonic()
    found = verdict(pool, "#include <unistd.h>\nint main(){ for(;;) fork(); }\n")
    assert found.status == "timeout" and time.monotonic() - started < 10.0
    no_leftovers(pool)
    still_judges(pool)


SOCKET_PRELUDE = r"""#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <netinet/in.h>
#include <sys/syscall.h>
#include <unistd.h>
"""
X86_64_ENTRIES = r"""// the x86-64 `syscall` instruction, no libc in between
static long raw(long n, long a, long b, long c) {
  long r;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
static long i386(long n, long a, long b, long c) {  // the 32-bit entry, from a 64-bit process
  long r;
  asm volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a), "c"(b), "d"(c) : "memory");
  return r;
}
"""
SOCKET_MAIN = r"""int main() {
  sockaddr_in to{};
  to.sin_family = AF_INET, to.sin_port = htons(PORT), to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
"""
SOCKET_CALLS = {  # each prints "connected" when it reaches the listener, else what socket() returned
    "syscall()": "long s = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0), e = errno;\n"
                 "if (syscall(SYS_connect, s, &to, sizeof to) == 0) return puts(\"connected\"), 0;\n"
                 "printf(\"%ld %ld\\n\", s, e);\n",
    "syscall instruction": "long s = raw(SYS_socket, AF_INET, SOCK_STREAM, 0);\n"
                           "if (raw(SYS_connect, s, (long)&to, sizeof to) == 0) return puts(\"connected\"), 0;\n"
                           "printf(\"%ld\\n\", s);\n",
    "x32 syscall": "long s = raw(0x40000000 | SYS_socket, AF_INET, SOCK_STREAM, 0);\n"
                   "long c = raw(0x40000000 | SYS_connect, s, (long)&to, sizeof to);\n"
                   "printf(\"%ld %ld\\n\", s, c);\n",
    "int 0x80": "printf(\"%ld\\n\", i386(359, AF_INET, SOCK_STREAM, 0));\n",  # i386 socket()
}
REFUSED = {"syscall()": f"-1 {errno.EACCES}\n", "syscall instruction": f"{-errno.EACCES}\n"}


def socket_program(how: str, port: int) -> str:
    entries = "" if how == "syscall()" else X86_64_ENTRIES
    return SOCKET_PRELUDE + entries + SOCKET_MAIN.replace("PORT", str(port)) + SOCKET_CALLS[how] + "}\n"


@pytest.fixture
def listener():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        sock.settimeout(0.3)
        yield sock


def reached(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
        return True
    except TimeoutError:
        return False


def runs_on_the_host(program: Program, folder: Path) -> str:
    """The stdout of a binary the sandbox built, run here, outside it (the control for an attack)."""
    path = folder / "solution"
    path.write_bytes(program.job["binary"])
    path.chmod(0o700)
    return subprocess.run([str(path)], capture_output=True, text=True, timeout=10).stdout


@pytest.mark.parametrize("how", ["syscall()", pytest.param("syscall instruction", marks=x86_64_only)])
def test_socket_and_connect_are_refused_however_they_are_called(pool, listener, tmp_path, how):
    code = socket_program(how, listener.getsockname()[1])
    found = verdict(pool, code, "connected")
    assert (found.status, found.actual) == ("fail", REFUSED[how])  # socket() fails with seccomp's EACCES
    assert not reached(listener)
    # The control: the very binary the sandbox built reaches the listener when it runs on the host.
    assert runs_on_the_host(build(pool, code), tmp_path) == "connected\n" and reached(listener)


@x86_64_only
@pytest.mark.parametrize("how", ["x32 syscall", "int 0x80"])
def test_a_socket_through_another_abi_is_killed(pool, listener, how):
    found = verdict(pool, socket_program(how, listener.getsockname()[1]), "connected")
    assert found.status == "error" and "SIGSYS" in found.detail, found.detail  # seccomp's verdict on a foreign ABI
    assert not reached(listener)
    still_judges(pool)


WRITE_EVERYWHERE = r"""#include <cstdio>
int main() {
  const char* paths[] = {PATHS};
  for (const char* path : paths) {
    FILE* f = fopen(path, "w");
    bool wrote = f && fputs("escaped", f) >= 0;
    printf("%d ", f && fclose(f) == 0 && wrote);
  }
}
"""


def test_writes_outside_the_runs_directory_never_reach_the_host(pool):
    name = "solidcoder-escape-" + uuid.uuid4().hex[:12]
    targets = [folder / name for folder in (Path("/tmp"), Path("/"), CHECKOUT, Path.home(), Path("/var/tmp"))]
    expected = " ".join("1" if target.parent == Path("/tmp") else "0" for target in targets)  # its own /tmp only
    try:
        found = verdict(pool, WRITE_EVERYWHERE.replace("PATHS", ", ".join(json.dumps(str(t)) for t in targets)),
                        expected)
        assert found.passed, found.actual
        assert [target for target in targets if target.exists()] == []
    finally:
        for target in targets:
            target.unlink(missing_ok=True)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_endless_output_stops_at_the_output_limit(pool, stream):
    flood = f"#include <cstdio>\nint main(){{ for(;;) fputs(\"{'x' * 60}\\n\", {stream}); }}\n"
    started = time.monotonic()
    found = verdict(pool, flood)
    assert found.status == "output_limit" and len(found.actual) <= Limits().max_output_bytes
    assert time.monotonic() - started < 10.0
    still_judges(pool)


MEMORY_BOMBS = {  # each with the verdict and the words of its detail
    "vector growth": ("#include <vector>\nint main(){ std::vector<long> v; for(;;) v.push_back(1); }\n",
                      "error", "std::bad_alloc"),
    "malloc loop": ("#include <cstdlib>\n#include <cstring>\n"
                    "int main(){ for(;;){ char* p=(char*)malloc(1<<24); if(!p) return 3; memset(p,1,1<<24); } }\n",
                    "error", "exit 3"),
    "new of 8 GB": ("char* volatile kept;  // volatile: g++ may not drop the allocation\n"
                    "int main(){ kept = new char[8ULL << 30]; kept[1 << 20] = 1; return kept[1 << 20]; }\n",
                    "error", "std::bad_alloc"),
}


@pytest.mark.parametrize("bomb", sorted(MEMORY_BOMBS))
def test_a_memory_bomb_is_the_programs_error(pool, bomb):
    code, status, words = MEMORY_BOMBS[bomb]
    found = verdict(pool, code, memory_limit_mb=256)
    assert (found.status, words in found.detail) == (status, True), found.detail
    still_judges(pool)


FORKED_MEMORY = r"""#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
int main() {  // 6 x 200 MB, each under the address-space limit, together far over the memory limit
  for (int i = 0; i < 6; i++)
    if (fork() == 0) { char* p = (char*)malloc(200 << 20); if (p) memset(p, 1, 200 << 20); sleep(1);
                       return p ? p[100 << 20] - 1 : 7; }
  int status, whole = 0;
  while (wait(&status) > 0) whole += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("%d\n", whole);
}
"""


def test_memory_spread_over_processes_is_bounded_by_the_memory_cgroup(pool):
    if not memory_cgroup_on(pool):
        pytest.skip("the memory cgroup layer is off here")
    found = verdict(pool, FORKED_MEMORY, "6", memory_limit_mb=256, time_limit_s=10.0)
    assert found.status == "memory_limit", (found.status, found.actual, found.detail)
    no_leftovers(pool)
    still_judges(pool)


# ---------------------------------------------------------------- compile time


def test_deep_template_recursion_stops_at_the_compilers_own_limit(pool):
    code = "template<int N> struct F { static const int v = F<N+1>::v + 1; };\nint main(){ return F<0>::v; }\n"
    started = time.monotonic()
    found = verdict(pool, code)
    assert found.status == "compile_error" and "template instantiation depth exceeds" in found.detail
    assert time.monotonic() - started < CPP.build.wall_s


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_including_an_endless_device_stops_at_the_build_memory_limit(pool, device):
    started = time.monotonic()
    found = verdict(pool, f'#include "{device}"\nint main(){{}}\n')
    assert found.status == "compile_error" and "out of memory" in found.detail, found.detail
    assert time.monotonic() - started < CPP.build.wall_s
    no_leftovers(pool)
    still_judges(pool)


def test_a_huge_initialised_array_is_stopped_by_the_builds_file_limit(pool):
    found = verdict(pool, "char a[1 << 27] = {1};\nint main(){ return a[5]; }\n")  # 128 MB of .data
    assert found.status == "compile_error" and "File size limit exceeded" in found.detail, found.detail
    still_judges(pool)


def test_a_terabyte_static_array_does_not_link(pool):
    found = verdict(pool, "char a[1ULL << 40];\nint main(){ a[12345] = 1; return a[0]; }\n")
    # Linked statically, a 1 TB .bss is out of the small code model's reach: the linker refuses it.
    assert found.status == "compile_error" and "relocation truncated to fit" in found.detail, found.detail
    still_judges(pool)


def include_probe(path: str) -> str:
    """A program that includes `path` where anything it holds would be parsed, and so quoted in diagnostics."""
    return f'int x =\n#include "{path}"\n;\nint main(){{}}\n'


def first_line(path: Path) -> str:
    return path.read_text(errors="replace").splitlines()[0][:60]


def test_the_include_probe_quotes_a_file_the_sandbox_shows(pool):
    """The control for the hidden files below: a file the root shows (the Python library) is quoted."""
    found = verdict(pool, include_probe(os.__file__))
    assert found.status == "compile_error" and first_line(Path(os.__file__))[:30] in found.detail


FIXTURE_DATA = sorted((CHECKOUT / "tests" / "fixtures" / "data").glob("*.jsonl"))[:1]  # a committed dataset's rows
HIDDEN_FILES = [Path(__file__), CHECKOUT / "pyproject.toml", *FIXTURE_DATA,
                pytest.param(DATA_FILE, marks=pytest.mark.skipif(not DATA_FILE.is_file(), reason="no such dataset"))]


@pytest.mark.parametrize("path", HIDDEN_FILES, ids=str)
def test_an_include_of_a_hidden_file_finds_nothing(pool, path):
    found = verdict(pool, include_probe(str(path)))
    assert found.status == "compile_error" and "No such file or directory" in found.detail, found.detail
    assert first_line(path) not in found.detail


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/1/environ", "/proc/self/cmdline"])
def test_an_include_of_the_compilers_environment_shows_no_host_value(pool, monkeypatch, path):
    marker = new_marker()
    monkeypatch.setenv("SOLIDCODER_HOSTILE_API_KEY", marker)  # as `solve --api-key` would hold one
    found = verdict(pool, include_probe(path))
    assert found.status == "compile_error"
    assert marker not in found.detail and "SOLIDCODER_HOSTILE_API_KEY" not in found.detail


SPIN = ("constexpr long spin(){ long s = 0; for (long i = 0; i < 200000; i++) for (long j = 0; j < 200000; j++) "
        "s += i ^ j; return s; }\nconstexpr long X = spin();\nint main(){ return X & 1; }\n")


def test_a_compile_that_outlasts_the_build_is_stopped_at_its_wall_limit(pool):
    started = time.monotonic()
    program = build(pool, SPIN, limited(wall_s=2.0))
    assert not program.built and program.error.startswith("compilation took longer than 2 s"), program.error
    assert time.monotonic() - started < 2.0 + 8.0
    no_leftovers(pool)
    still_judges(pool)


SQUARE = ("template<int N, int M> struct A { static const long v = A<N-1, M>::v ^ A<N-1, M+1>::v; };\n"
          "template<int M> struct A<0, M> { static const long v = M; };\nint main(){ return A<800, 0>::v & 1; }\n")


def test_a_compile_that_outgrows_the_build_is_stopped_at_its_memory_limit(pool):
    """320 000 instantiations, each under the depth limit, need about 500 MB (built in about 7 s with the default
    limits); a 300 MB build stops it, while an honest program builds under the same limits."""
    language = limited(memory_mb=300, wall_s=20.0)
    program = build(pool, SQUARE, language)
    assert not program.built and "memory exhausted" in program.error, program.error
    assert build(pool, RIGHT + "// built under 300 MB\n", language).built
    no_leftovers(pool)


# ---------------------------------------------------------------- reading what is not the program's


SEEKER = r"""#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
extern char** environ;
static std::string found;
static const char* SKIPPED[] = {SKIPPED_PATHS};
static void scan(const char* data, size_t size) {  // the first SECRET- and 32 hex digits
  for (const char* p = data; found.empty() && (p = (const char*)memmem(p, data + size - p, "SECRET-", 7)); p++) {
    size_t n = 0;
    while (p + 7 + n < data + size && n < 32 && p[7 + n] && strchr("0123456789abcdef", p[7 + n])) n++;
    if (n == 32) found.assign(p, 39);
  }
}
static void scan_fd(int fd) {
  static char buffer[1 << 20];
  ssize_t got = pread(fd, buffer, sizeof buffer, 0);
  if (got > 0) scan(buffer, got);
}
static bool skipped(const std::string& path) {
  for (const char* s : SKIPPED) if (path == s) return true;
  return false;
}
static void walk(const std::string& dir, int depth) {  // names and contents of every file, /proc included
  DIR* d = depth < 12 ? opendir(dir.c_str()) : nullptr;
  while (dirent* e = d ? readdir(d) : nullptr) {
    std::string name = e->d_name, path = (dir == "/" ? "" : dir) + "/" + name;
    struct stat st;
    if (name == "." || name == ".." || skipped(path) || lstat(path.c_str(), &st) != 0) continue;
    scan(path.data(), path.size());
    int fd = S_ISREG(st.st_mode) ? open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd >= 0) scan_fd(fd), close(fd);
    if (S_ISDIR(st.st_mode)) walk(path, depth + 1);
  }
  if (d) closedir(d);
}
int main() {
  for (char** e = environ; *e; e++) scan(*e, strlen(*e));
  for (int fd = 0; fd < 64; fd++) scan_fd(fd);
  walk("/", 0);
  puts(found.empty() ? "not found" : found.c_str());
}
"""


def seeker() -> str:
    """A program that prints the first marker it finds in its environment, its descriptors (stdin included) and the
    whole tree from /, /proc included, but for the system and Python folders: read-only copies of the host's
    installation, which test_sandbox_adversarial.py shows hold no checkout or dataset file."""
    system = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"]
    python = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return SEEKER.replace("SKIPPED_PATHS", ", ".join(json.dumps(p) for p in system + sorted(python)))


def test_a_later_run_cannot_read_what_an_earlier_run_wrote(pool):
    marker = new_marker()
    writer = ("#include <cstdio>\n#include <fstream>\n#include <iostream>\nint main(){\n"
              f"  for (const char* path : {{\"/tmp/secret\", \"/dev/shm/secret\", \"secret\"}}) "
              f"std::ofstream(path) << \"{marker}\";\n"
              "  std::cout << std::ifstream(\"/dev/shm/secret\").rdbuf() << '\\n';\n}\n")
    assert verdict(pool, writer, marker).passed  # written, and read back within its own run
    found = verdict(pool, seeker(), marker, time_limit_s=5.0)
    assert (found.status, found.actual) == ("fail", "not found\n")  # nor is it in the writer's source or binary


def test_the_expected_output_is_nowhere_the_program_can_look(pool):
    given, hidden = new_marker(), new_marker()
    tests = [TestCase(kind="stdio", stdin=f"take {given}\n", expected_stdout=given),  # the control: found on stdin
             TestCase(kind="stdio", stdin="", expected_stdout=hidden)]
    report = Judge(pool).judge(problem("", public_tests=tests, time_limit_s=5.0), seeker())
    assert [(v.status, v.actual) for v in report.verdicts] == [("pass", given + "\n"), ("fail", "not found\n")]
    still_judges(pool)
