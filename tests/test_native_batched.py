"""A built program's stdio tests grouped into sandbox runs (`execution/batched.py`, `inside/batch.py`), in the real
sandbox: the verdicts runs of their own give, and nothing of one test left for the next."""

from __future__ import annotations

import shutil

import pytest
from leftovers import no_leftovers

from solidcoder.execution import batched
from solidcoder.execution.build import prepare
from solidcoder.execution.judge import Judge
from solidcoder.execution.sandbox import Limits, SandboxConfig, SandboxPool
from solidcoder.languages import CPP
from solidcoder.problem import Problem, TestCase

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed (.ci/run installs it)")

MIXED = r'''#include <cstdio>
int main(){
  long a; if (scanf("%ld", &a) != 1) return 9;
  fprintf(stderr, "test %ld\n", a);
  if (a == 2) for (;;);
  if (a == 3) return 3;
  if (a == 4) { volatile int* p = nullptr; return *p; }
  if (a == 5) { volatile int z = 0; return 7 / z; }
  printf("%ld\n", a == 6 ? 0 : a * 10);
}
'''

# Each test looks for what an earlier one could leave (a file in its folder or /dev/shm, a process still running,
# a folder it cannot list), then leaves them itself (the folder only when its input says "lock").
LEAVER = r'''#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>
int main(){
  usleep(20000);  // a process left by the test before would have written "alive" by now
  int found = (access("mark", F_OK) == 0) + (access("/dev/shm/mark", F_OK) == 0) + (access("alive", F_OK) == 0)
            + (access("locked", F_OK) == 0);
  printf("%d\n", found);
  fflush(stdout);
  fclose(fopen("mark", "w")); fclose(fopen("/dev/shm/mark", "w"));
  char how[8] = ""; scanf("%7s", how);
  if (how[0] == 'l') { mkdir("locked", 0700); fclose(fopen("locked/inside", "w")); chmod("locked", 0); }
  if (fork() == 0) { setsid(); for (;;) { FILE* f = fopen("alive", "w"); if (f) fclose(f); usleep(1000); } }
  return 0;
}
'''


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(SandboxConfig(workers=2)) as sandbox:
        yield sandbox


def problem(stdins: list[str], expected: list[str], **changes) -> Problem:
    tests = [TestCase(kind="stdio", stdin=s, expected_stdout=e) for s, e in zip(stdins, expected, strict=True)]
    return Problem(id="grouped", kind="stdio", statement="", language="cpp", public_tests=tests,
                   **{"time_limit_s": 1.0, **changes})


def outcome(verdict) -> tuple:
    return verdict.status, verdict.detail, verdict.actual


def test_grouped_tests_get_the_verdicts_runs_of_their_own_give(pool):
    stdins = [f"{a}\n" for a in (1, 2, 3, 4, 5, 6, 7, 8)]
    graded = problem(stdins, ["10", "20", "30", "40", "50", "60", "70", "80"])
    together = Judge(pool).judge(graded, MIXED).verdicts
    alone = [Judge(pool).judge(graded, MIXED, tests=[test]).verdicts[0] for test in graded.public_tests]
    assert [outcome(v) for v in together] == [outcome(v) for v in alone]
    assert [v.status for v in together] == ["pass", "timeout", "error", "error", "error", "fail", "pass", "pass"]
    assert [v.detail.split(":")[0] for v in together[2:5]] == [
        "runtime error (exit 3)", "runtime error (SIGSEGV)", "runtime error (SIGFPE)"]


def test_a_group_reports_each_test_with_its_own_output_and_limits(pool):
    job = built_job(pool, MIXED)
    grouped, stdin, limits = batched.group_job(job, ["1\n", "2\n", "7\n"], Limits(wall_s=0.5))
    run = pool.run(grouped, stdin, limits)
    assert [(p.status, p.stdout, p.stderr) for p in run.parts] == [
        ("ok", "10\n", "test 1\n"), ("timeout", "", "test 2\n"), ("ok", "70\n", "test 7\n")]
    assert 0.5 <= run.parts[1].wall_s < 1.0 and run.parts[0].wall_s < 0.5


def test_nothing_a_test_leaves_reaches_the_next(pool):
    job = built_job(pool, LEAVER)
    grouped, stdin, limits = batched.group_job(job, ["\n"] * 4, Limits(wall_s=1.0))
    assert [p.stdout for p in pool.run(grouped, stdin, limits).parts] == ["0\n"] * 4  # one group, every test clean
    report = Judge(pool).judge(problem(["\n"] * 6, ["0"] * 6), LEAVER)
    assert [outcome(v) for v in report.verdicts] == [("pass", "", "0\n")] * 6


def test_a_group_stops_where_it_cannot_empty_the_folder_and_the_rest_run_alone(pool):
    job = built_job(pool, LEAVER)
    grouped, stdin, limits = batched.group_job(job, ["\n", "lock\n", "\n", "\n"], Limits(wall_s=1.0))
    run = pool.run(grouped, stdin, limits)
    assert [p.stdout for p in run.parts] == ["0\n", "0\n"]  # its `locked` folder stays: the group ends after test 2
    report = Judge(pool).judge(problem(["lock\n"] * 4, ["0"] * 4), LEAVER)
    assert [v.status for v in report.verdicts] == ["pass"] * 4


BIG = "#include <cstdio>\nint main(){ for (int i = 0; i < 300000; i++) puts(\"1234567\"); }\n"  # 2.4 MB


def test_output_past_the_groups_cap_is_judged_by_a_run_of_its_own(pool):
    expected = "1234567\n" * 300000
    report = Judge(pool).judge(problem(["\n"] * 4, [expected] * 4), BIG)
    assert [v.status for v in report.verdicts] == ["pass"] * 4


FORKED_MEMORY = r"""#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  long a; if (scanf("%ld", &a) != 1) return 9;
  if (a == 2)  // 6 x 200 MB, each under the address-space limit, together far over the memory limit
    for (int i = 0; i < 6; i++)
      if (fork() == 0) { char* p = (char*)malloc(200 << 20); if (p) memset(p, 1, 200 << 20); sleep(1);
                         return p ? p[100 << 20] - 1 : 7; }  // read back: the allocation is not optimised away
  while (wait(nullptr) > 0) {}
  printf("%ld\n", a);
}
"""


def test_a_test_the_memory_cgroup_stopped_is_judged_by_a_run_of_its_own(pool):
    if not any(layer.name == "memory_cgroup" and layer.on for layer in pool.layers):
        pytest.skip("the memory cgroup layer is off here")
    report = Judge(pool).judge(problem(["1\n", "2\n", "3\n", "4\n"], ["1", "2", "3", "4"], memory_limit_mb=256,
                                       time_limit_s=10.0), FORKED_MEMORY)
    assert [v.status for v in report.verdicts] == ["pass", "memory_limit", "pass", "pass"]


def test_tests_are_grouped_only_where_each_run_has_its_own_pid_namespace(pool):
    job = built_job(pool, MIXED)
    assert batched.groupable(pool, job)
    assert not batched.groupable(pool, {**job, "code": "", "binary": b""})  # a source run by its command (node)
    with SandboxPool(SandboxConfig(workers=1, isolate=False)) as bare:
        assert not batched.groupable(bare, job)


def built_job(pool: SandboxPool, code: str) -> dict:
    step = prepare(pool, CPP, code)
    try:
        jobs = next(step)
        step.send([pool.run(*job) for job in jobs])
    except StopIteration as done:
        return done.value.job
    raise AssertionError("prepare asked for more than one build")


HOSTILE = r'''#include <cstdio>
#include <unistd.h>
int main(){
  long a; if (scanf("%ld", &a) != 1) return 9;
  if (a == 2) for (;;) fork();                       // a fork bomb
  if (a == 3) for (;;) fputs("flood flood flood\n", stdout);  // endless output
  printf("%ld\n", a);
}
'''


def test_a_fork_bomb_and_a_flood_in_a_group_get_their_own_verdicts_and_leave_nothing(pool):
    report = Judge(pool).judge(problem([f"{a}\n" for a in (1, 2, 3, 4, 5, 6)], ["1", "2", "3", "4", "5", "6"]),
                               HOSTILE)
    assert [v.status for v in report.verdicts] == ["pass", "timeout", "output_limit", "pass", "pass", "pass"]
    no_leftovers(pool)



GROUP_FORGER = r'''#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
int main(){
  const char* fake = "{\"event\": \"test\", \"index\": 1, \"exit_code\": 0, \"signal\": null, \"timed_out\": false, "
                     "\"wall_s\": 0.0, \"cpu_s\": 0.0, \"stdout\": 2, \"stderr\": [0, 0], \"stop\": false}\n";
  int wrote = 0, opened = 0;
  for (int fd = 3; fd < 64; fd++) wrote += write(fd, fake, strlen(fake)) > 0;
  const char* paths[] = {"/proc/1/fd/0", "/proc/1/fd/1", "/proc/1/fd/3", "/proc/1/mem"};
  for (auto p : paths) opened += open(p, O_RDWR) >= 0 || open(p, O_RDONLY) >= 0;
  kill(1, SIGINT); kill(1, SIGKILL); kill(-1, SIGKILL);
  printf("%d %d\n", wrote, opened);
}
'''


def test_a_test_in_a_group_cannot_forge_a_later_result_nor_reach_the_groups_init(pool):
    report = Judge(pool).judge(problem(["\n"] * 4, ["7"] * 4), GROUP_FORGER)
    assert [(v.status, v.actual) for v in report.verdicts] == [("fail", "0 0\n")] * 4
    job = built_job(pool, GROUP_FORGER)
    grouped, stdin, limits = batched.group_job(job, ["\n"] * 3, Limits(wall_s=1.0))
    assert [p.stdout for p in pool.run(grouped, stdin, limits).parts] == ["0 0\n"] * 3  # every test reported, once
