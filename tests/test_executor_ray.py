"""The Ray executor on a real local Ray instance (`ray.init(num_cpus=2)`), held to the local pool's verdicts.

Same verdicts as the local pool on every HumanEval canonical solution and on the hostile-program suite; a killed
actor (by Ray or by SIGKILL) is replaced and its in-flight run (or bench unit) retried; rewards and the rank
table see the same results; `bench --executor ray:ADDRESS` writes the same rows as a local run and resumes one.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

ray = pytest.importorskip("ray", reason="Ray is the dist extra: pip install 'solidcoder[dist]'")

from bench_support import bench_command, canonical_responder, rows, run_cli  # noqa: E402
from hostile_programs import HOSTILE, run_hostile, verdict  # noqa: E402
from test_judge import humaneval_problem, read_jsonl  # noqa: E402

from solidcoder.execution.executor import Executor, make_executor  # noqa: E402
from solidcoder.execution.judge import Judge  # noqa: E402
from solidcoder.execution.ray_executor import RayExecutor  # noqa: E402
from solidcoder.execution.sandbox import Limits, SandboxConfig  # noqa: E402


@pytest.fixture(scope="module")
def ray_executor():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with make_executor("ray", SandboxConfig(workers=2)) as executor:
            yield executor
    finally:
        ray.shutdown()


def test_it_is_an_executor_with_every_layer_on(ray_executor, sandbox_pool):
    assert isinstance(ray_executor, RayExecutor) and isinstance(ray_executor, Executor)
    assert ray_executor.size == 2 and len(ray_executor.actors) == 1
    assert [(layer.name, layer.on) for layer in ray_executor.layers] == [
        (layer.name, layer.on) for layer in sandbox_pool.layers]
    assert all(layer.on for layer in ray_executor.layers)


def test_humaneval_canonical_solutions_get_the_local_pools_verdicts(ray_executor, sandbox_pool, humaneval):
    problems = [humaneval_problem(row) for row in humaneval]
    codes = [row["prompt"] + row["canonical_solution"] for row in humaneval]

    def verdicts(executor) -> list:
        judge = Judge(executor)
        with ThreadPoolExecutor(4) as threads:
            reports = threads.map(lambda p, code: judge.judge(p, code, p.hidden_tests), problems, codes)
            return [(r.passed, [(v.index, v.status) for v in r.verdicts]) for r in reports]

    local, remote = verdicts(sandbox_pool), verdicts(ray_executor)
    assert len(remote) == 164 and all(passed for passed, _ in remote)
    assert remote == local


@pytest.fixture(scope="module")
def humaneval(humaneval_file):
    return read_jsonl(humaneval_file)


def test_hostile_programs_get_the_local_pools_verdicts(ray_executor, sandbox_pool):
    for name, program in HOSTILE.items():
        local, remote = run_hostile(sandbox_pool, name), run_hostile(ray_executor, name)
        assert local.status in program.statuses, (name, local)
        assert verdict(name, remote) == verdict(name, local), (name, local, remote)
    alive = ray_executor.run_program("print('alive')")
    assert (alive.status, alive.stdout) == ("ok", "alive\n")


def test_runs_spread_over_the_workers_in_order_and_async(ray_executor):
    jobs = [({"mode": "stdio", "code": f"import time\ntime.sleep(0.3)\nprint({i})"}, "", None) for i in range(4)]
    started = time.perf_counter()
    assert [r.stdout for r in ray_executor.map(jobs)] == [f"{i}\n" for i in range(4)]
    assert time.perf_counter() - started < 4 * 0.3  # two workers at once, never one after another

    async def both():
        return await asyncio.gather(*(ray_executor.arun({"mode": "stdio", "code": f"print({i} * 2)"})
                                      for i in range(3)))

    assert [r.stdout for r in asyncio.run(both())] == ["0\n", "2\n", "4\n"]


@pytest.mark.parametrize("how", ["ray.kill", "SIGKILL"])
def test_a_killed_actor_is_replaced_and_its_run_retried(ray_executor, how):
    [before] = ray_executor.actor_info()
    result = {}
    slow = "import time\ntime.sleep(1.5)\nprint('finished')"
    runner = threading.Thread(target=lambda: result.update(r=ray_executor.run_program(slow, limits=Limits(5.0))))
    runner.start()
    time.sleep(0.5)  # the run is in flight on the actor's pool
    if how == "ray.kill":
        ray.kill(ray_executor.actors[0], no_restart=False)
    else:
        os.kill(before["pid"], signal.SIGKILL)
    runner.join(timeout=60)
    assert (result["r"].status, result["r"].stdout) == ("ok", "finished\n"), result["r"].detail
    [after] = ray_executor.actor_info()
    assert after["pid"] != before["pid"] and after["size"] == 2
    assert ray_executor.run_program("print(6 * 7)").stdout == "42\n"


def test_code_rewards_and_the_rank_table_match_the_local_pool(ray_executor, sandbox_pool):
    from test_train_alignment import stdio
    from test_verify import BAD_SYNTAX, GOOD, UNDEFINED_NAME, WRONG

    from solidcoder.problem import Problem, TestCase
    from solidcoder.train.code_reward import CodeReward
    from solidcoder.verify.rank import DuplicateScorer, MajorityScorer
    from solidcoder.verify.table import rank_table
    from solidcoder.verify.weak import SyntaxVerifier, TestsVerifier

    square = stdio("sq", "4\n", "14\n")
    completions = ["```python\nn = int(input())\nprint(sum(i * i for i in range(n)))\n```", "print(1 / 0)",
                   "```python\nprint(14)\n```", "print(13)"]

    def rewards(executor):
        reward = CodeReward(Judge(executor), {"sq": square})
        return reward(prompts=[None] * 4, completions=completions, task=["code"] * 4, problem_id=["sq"] * 4)

    assert rewards(ray_executor) == rewards(sandbox_pool) == [1.0, 0.0, 1.0, 0.0]

    tests = [TestCase(kind="call", call=f"add({i}, 2)", expected=i + 2) for i in range(3)]
    add = Problem(id="add", kind="call", statement="", entry_point="add", public_tests=tests,
                  hidden_tests=[*tests, TestCase(kind="call", call="add(-5, 5)", expected=0)], time_limit_s=2.0)
    samples = {"add": [GOOD, GOOD, WRONG, BAD_SYNTAX, UNDEFINED_NAME]}

    def table(executor):
        judge = Judge(executor)
        chain = [SyntaxVerifier(), TestsVerifier(judge, first_n=2, time_limit_s=0.3)]
        found = asyncio.run(rank_table([add], samples, judge, chain, [MajorityScorer(judge), DuplicateScorer()],
                                       2))
        return [(r.filters, r.survivors, r.best_of_k) for r in found]

    assert table(ray_executor) == table(sandbox_pool)


def test_bench_on_ray_writes_the_local_rows_and_resumes_either_way(ray_executor, scripted_server, tmp_path):
    scripted_server.responder = canonical_responder(wrong={"below_zero"}, failing={"truncate_number"})
    address = ray.get_runtime_context().gcs_address
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"

    done = run_cli(bench_command(scripted_server.url, local_dir, "--concurrency", "2", limit=5))
    assert done.returncode == 0, done.stderr
    asked_locally = len(scripted_server.chat_requests())

    # The first three problems on one machine, then the run is resumed on the cluster with all five.
    done = run_cli(bench_command(scripted_server.url, ray_dir, "--concurrency", "2", limit=3))
    assert done.returncode == 0, done.stderr
    done = run_cli(bench_command(scripted_server.url, ray_dir, "--concurrency", "2", "--executor", f"ray:{address}",
                                 limit=5))
    assert done.returncode == 0, done.stderr
    assert "3 of 5 units to run (2 already done)" in done.stdout and "on Ray" in done.stdout
    # Every problem asked once per run directory, plus the outage asked again on resume (its unit is retried).
    assert len(scripted_server.chat_requests()) == 2 * asked_locally + 1

    def comparable(path):
        skip = {"wall_s", "model_s"}
        return sorted(({k: v for k, v in row.items() if k not in skip} for row in rows(path)), key=str)

    assert comparable(ray_dir / "results.jsonl") == comparable(local_dir / "results.jsonl")
    assert {r["id"] for r in rows(ray_dir / "errors.jsonl")} == {"HumanEval/2"}
    assert [r["error_kind"] for r in rows(ray_dir / "errors.jsonl")] == ["model", "model"]
    calls = {r["id"] for r in rows(ray_dir / "calls.jsonl")}
    assert calls == {r["id"] for r in rows(local_dir / "calls.jsonl")}  # paid replies logged by the driver

    # Resuming the cluster's run asks the model nothing new but the outage, and writes no result twice.
    asked = len(scripted_server.chat_requests())
    done = run_cli(bench_command(scripted_server.url, ray_dir, "--concurrency", "2", "--executor", f"ray:{address}",
                                 limit=5))
    assert done.returncode == 0, done.stderr
    assert "1 of 5 units to run (4 already done)" in done.stdout
    assert len(scripted_server.chat_requests()) == asked + 1
    keys = [r["key"] for r in rows(ray_dir / "results.jsonl")]
    assert len(keys) == len(set(keys)) == 4


def test_a_bench_unit_whose_actor_dies_is_rerun_on_the_replacement(ray_executor, scripted_server, tmp_path):
    import uuid

    from bench_support import HUMANEVAL

    from solidcoder.bench.distributed import DistributedTask, ModelRecipe, UnitSpec, prompt_texts
    from solidcoder.bench.runner import BenchRunner, RunSpec
    from solidcoder.bench.tasks import TaskRecipe
    from solidcoder.datasets import DataOptions, load_dataset
    from solidcoder.prompting import PromptLibrary
    from solidcoder.store import ResultStore

    scripted_server.responder = canonical_responder(delay_s=1.5)
    problems, _ = load_dataset("humaneval", DataOptions(data_file=HUMANEVAL, limit=1))
    recipe = ModelRecipe("openai/scripted-model", scripted_server.url, retries=1)
    spec = UnitSpec(run_id=uuid.uuid4().hex, model=recipe, prompts=prompt_texts(PromptLibrary.from_env()),
                    task=TaskRecipe("direct"))
    store = ResultStore(tmp_path)
    task = DistributedTask(problems, spec, ray_executor)
    runner = BenchRunner(spec=RunSpec("humaneval", "direct", recipe.spec, "h"), task=task, model=recipe.build(),
                         store=store, concurrency=1)
    [before] = ray_executor.actor_info()
    def kill_mid_call() -> None:  # once the unit's model call has reached the server, not after a guessed delay
        deadline = time.monotonic() + 60
        while not scripted_server.chat_requests() and time.monotonic() < deadline:
            time.sleep(0.02)
        ray.kill(ray_executor.actors[0], no_restart=False)

    killer = threading.Thread(target=kill_mid_call)
    killer.start()
    totals = asyncio.run(runner.run())
    killer.join()
    store.close()
    assert (totals.finished, totals.passed, totals.errors) == (1, 1, 0)
    assert ray_executor.actor_info()[0]["pid"] != before["pid"]
    assert len(scripted_server.chat_requests()) == 2  # the call the dead attempt was waiting for, asked again
    [row] = rows(tmp_path / "results.jsonl")
    assert row["passed"] and row["calls"] == 1 and len(rows(tmp_path / "calls.jsonl")) == 1
