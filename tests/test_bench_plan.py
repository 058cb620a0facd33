"""The bench plan: the command's options in, each decision out once (code or trace tasks, local or Ray, the model
recipe, the key rows are found by), with real datasets, strategies and prompt files; nothing called or written."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest
from bench_support import HUMANEVAL

from solidcoder.bench.distributed import ModelRecipe
from solidcoder.bench.plan import BenchOptions, plan_bench
from solidcoder.bench.tasks import TRACE_TEMPLATES, CodeTask, TaskRecipe, TraceTask
from solidcoder.datasets import DataOptions
from solidcoder.errors import BadInput
from solidcoder.execution.executor import ExecutorSpec
from solidcoder.strategies.simple import Direct


def code_options(run_dir: Path, **changes) -> BenchOptions:
    opts = BenchOptions("humaneval", "direct:n=1", "openai/m", run_dir, api_base="http://127.0.0.1:9/v1",
                        data=DataOptions(data_file=HUMANEVAL, limit=2), temperature=0.5, max_tokens=77, max_calls=3,
                        retries=2, role_models={}, threads=4)
    return replace(opts, **changes)


def trace_options(run_dir: Path, fixture_data: Path, **changes) -> BenchOptions:
    opts = BenchOptions("cruxeval-vars", "direct", "openai/m", run_dir, api_base="http://127.0.0.1:9/v1",
                        data=DataOptions(data_file=fixture_data / "cruxeval.jsonl", limit=2), max_tokens=64)
    return replace(opts, **changes)


def test_a_code_run_on_this_machine(tmp_path):
    plan = plan_bench(code_options(tmp_path / "run"))
    assert plan.task == TaskRecipe("direct:n=1", temperature=0.5, max_tokens=77)
    assert plan.where == ExecutorSpec("local")
    assert plan.model == ModelRecipe("openai/m", "http://127.0.0.1:9/v1", None, retries=2, roles=(), threads=4)
    assert plan.model.label == "openai/m"
    assert isinstance(plan.work.strategy, Direct) and plan.work.settings == plan.work.strategy.settings()
    assert [p.id for p in plan.work.items] == ["HumanEval/0", "HumanEval/1"]
    assert plan.work.templates == tuple(plan.work.strategy.templates)
    assert (plan.spec.dataset, plan.spec.strategy, plan.spec.model, plan.spec.samples) == (
        "humaneval", "direct:n=1", "openai/m", 1)
    assert not (tmp_path / "run").exists()  # planning writes nothing


def test_a_trace_run_has_no_strategy_and_keys_on_the_trace_task(tmp_path, fixture_data):
    plan = plan_bench(trace_options(tmp_path / "run", fixture_data))
    assert plan.task == TaskRecipe(None, temperature=None, max_tokens=64)
    assert plan.work.strategy is None
    assert plan.work.settings == {"task": "variable"} and plan.work.templates == TRACE_TEMPLATES
    assert [item.task for item in plan.work.items] == ["variable", "variable"]
    assert (plan.spec.dataset, plan.spec.strategy) == ("cruxeval-vars", "direct")


def test_one_factory_builds_the_task_a_local_run_and_a_ray_node_run(tmp_path, fixture_data, sandbox_pool):
    code = plan_bench(code_options(tmp_path / "code"))
    local = code.task.build(code.work.items, code.prompts, sandbox_pool, code.work.strategy)
    assert isinstance(local, CodeTask) and local.strategy is code.work.strategy
    assert (local.temperature, local.max_tokens, local.items) == (0.5, 77, code.work.items)
    shipped = pickle.loads(pickle.dumps(code.task))  # as a Ray node receives it in the unit's spec
    node = shipped.build([], code.prompts, sandbox_pool)  # the node builds its own strategy from the name
    assert isinstance(node, CodeTask) and node.strategy.settings() == code.work.settings
    assert (node.temperature, node.max_tokens) == (0.5, 77)
    trace = plan_bench(trace_options(tmp_path / "trace", fixture_data))
    task = trace.task.build(trace.work.items, trace.prompts, sandbox_pool, trace.work.strategy)
    assert isinstance(task, TraceTask) and task.max_tokens == 64 and task.items == trace.work.items


def test_ray_is_decided_once_and_keys_rows_as_a_local_run_does(tmp_path):
    local = plan_bench(code_options(tmp_path / "run"))
    for executor, address in (("ray", None), ("ray:10.0.0.1:6379", "10.0.0.1:6379")):
        plan = plan_bench(code_options(tmp_path / "run", executor=executor))
        assert plan.where == ExecutorSpec("ray", address)
        assert (plan.task, plan.model) == (local.task, local.model)
        assert plan.spec == local.spec  # a run started on a cluster resumes on this machine, and the other way


def test_the_key_changes_with_what_changes_answers_and_only_with_that(tmp_path):
    base = plan_bench(code_options(tmp_path / "run")).spec
    assert plan_bench(code_options(tmp_path / "other", workers=5, concurrency=2, label="x")).spec == base
    for change in ({"max_tokens": 78}, {"temperature": 0.6}, {"max_calls": None}, {"strategy": "direct"}):
        assert plan_bench(code_options(tmp_path / "run", **change)).spec.config_hash != base.config_hash, change
    roles = plan_bench(code_options(tmp_path / "run", strategy="solidcoder", role_models={"coder": "openai/c"}))
    assert roles.spec.model == "openai/m,coder=openai/c"
    assert roles.model.roles == (("coder", "openai/c"),)


@pytest.mark.parametrize(("changes", "message"), [
    ({"executor": "ray", "model": "local"}, "--executor ray sends model calls"),
    ({"executor": "ray", "model": "tiny.gguf"}, "--executor ray sends model calls"),
    ({"executor": "ray:"}, "--executor ray:ADDRESS needs an address"),
    ({"executor": "cluster"}, "--executor 'cluster'"),
    ({"dataset": "nope", "executor": "cluster"}, "nope"),  # the dataset is checked first, as before the plan
    ({"strategy": "no-such-strategy"}, "no-such-strategy"),
    ({"concurrency": 0}, "--concurrency must be at least 1"),
])
def test_bad_options_are_one_bad_input_before_anything_is_built(tmp_path, changes, message):
    with pytest.raises(BadInput, match=message.replace("(", r"\(")):
        plan_bench(code_options(tmp_path / "run", **changes))
    assert not (tmp_path / "run").exists()


def test_a_trace_dataset_takes_only_direct(tmp_path, fixture_data):
    with pytest.raises(BadInput, match="cruxeval-vars is a trace-inference task; only --strategy direct applies"):
        plan_bench(trace_options(tmp_path / "run", fixture_data, strategy="direct:n=1"))
