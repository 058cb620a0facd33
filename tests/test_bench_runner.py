"""The bench runner end to end: real HTTP to the scripted server, the real sandbox, the CLI as a subprocess."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from bench_support import bench_command, canonical_responder, entry_point_of, humaneval_rows, rows, run_cli
from processes import interruptible
from scripted_server import reply
from terminal import run_in_terminal

from solidcoder.bench.metrics import pass_at_k, summarize
from solidcoder.bench.runner import BenchRunner, RunSpec
from solidcoder.bench.tasks import CodeTask, TraceTask, parse_answer, same_value
from solidcoder.core.calls import Limiter
from solidcoder.datasets import DataOptions, load_dataset, load_trace_items
from solidcoder.models.base import BudgetConfig
from solidcoder.models.factory import ModelOptions, make_model
from solidcoder.prompting import PromptLibrary
from solidcoder.store import Notes, OracleRounds, ResultRow, ResultStore, read_results, repair_tail
from solidcoder.strategies import make_strategy

REPO = Path(__file__).resolve().parents[1]


def test_kill_mid_run_then_resume_loses_nothing_and_bills_nothing_twice(scripted_server, tmp_path):
    scripted_server.responder = canonical_responder(delay_s=0.4)
    run_dir = tmp_path / "run"
    command = bench_command(scripted_server.url, run_dir, "--concurrency", "2", limit=12)
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(rows(run_dir / "results.jsonl")) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows(run_dir / "results.jsonl")
    assert 4 <= len(before) < 12, "the kill must land in the middle of the run"
    requests_before = len(scripted_server.chat_requests())

    done = run_cli(command)
    assert done.returncode == 0, done.stderr
    after = rows(run_dir / "results.jsonl")
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 12
    assert after[: len(before)] == before  # append-only: finished rows untouched
    assert all(r["passed"] for r in after)
    asked = Counter(entry_point_of(r, humaneval_rows()) for r in scripted_server.chat_requests())
    finished_first = {r["id"] for r in before}
    problems, _ = load_dataset("humaneval", DataOptions(data_file=humaneval_rows_path(), limit=12))
    for p in problems:
        assert asked[p.entry_point] == 1 or p.id not in finished_first
    # Only calls in flight at the kill (at most --concurrency) may be asked again.
    assert len(scripted_server.chat_requests()) - 12 <= 2
    assert len(scripted_server.chat_requests()) > requests_before


def humaneval_rows_path():
    from bench_support import HUMANEVAL

    return HUMANEVAL


def test_failing_model_is_an_infrastructure_error_retried_on_resume(scripted_server, tmp_path):
    scripted_server.responder = canonical_responder(failing={"truncate_number"}, wrong={"below_zero"})
    run_dir = tmp_path / "run"
    first = run_cli(bench_command(scripted_server.url, run_dir, "--concurrency", "3"))
    assert first.returncode == 0, first.stderr
    assert "INFRA ERROR" in first.stdout and "1 infrastructure error (excluded" in first.stdout
    progress = r"\[\d/6\] HumanEval/\d sample 0: PASS, 1 model call, \d+ prompt \+ \d+ completion tokens, \d+\.\d s"
    assert re.search(progress, first.stdout), first.stdout
    results, errors = rows(run_dir / "results.jsonl"), rows(run_dir / "errors.jsonl")
    assert len(results) == 5 and [e["id"] for e in errors] == ["HumanEval/2"]
    assert errors[0]["error_kind"] == "model" and "500" in errors[0]["error"]
    [summary] = summarize(read_results(run_dir / "results.jsonl"), read_results(run_dir / "errors.jsonl"))
    assert summary.problems == 5 and summary.infra_errors == 1
    assert summary.pass1 == pytest.approx(4 / 5)  # the wrong answer is a failure, the outage is not scored

    report = run_cli([sys.executable, "-m", "solidcoder", "report", str(run_dir), "--html", str(tmp_path / "r.html")])
    assert report.returncode == 0 and "(1 infra)" in report.stdout
    html = (tmp_path / "r.html").read_text()
    external = re.findall(r"""(?:src|href|url)\s*[=(]\s*['"]?\s*(?:https?:)?//""", html)  # the page fetches nothing
    assert "<svg" in html and external == [] and "outage" in html  # the error's text (with its URL) is shown as text

    scripted_server.responder = canonical_responder(wrong={"below_zero"})
    second = run_cli(bench_command(scripted_server.url, run_dir))
    assert second.returncode == 0 and "1 of 6 units to run" in second.stdout
    [summary] = summarize(read_results(run_dir / "results.jsonl"), read_results(run_dir / "errors.jsonl"))
    assert summary.problems == 6 and summary.infra_errors == 0


def test_concurrency_overlaps_calls_and_never_exceeds_the_limit(scripted_server, sandbox_pool, tmp_path):
    scripted_server.responder = canonical_responder(delay_s=0.5)
    problems, _ = load_dataset("humaneval", DataOptions(data_file=humaneval_rows_path(), limit=8))
    model = make_model("openai/scripted-model", ModelOptions(api_base=scripted_server.url))
    task = CodeTask(problems, make_strategy("direct"), PromptLibrary.from_env(), sandbox_pool)
    store = ResultStore(tmp_path / "run")
    runner = BenchRunner(spec=RunSpec("humaneval", "direct", "m", "h"), task=task, model=model, store=store,
                         concurrency=4)
    totals = asyncio.run(runner.run())
    store.close()
    assert totals.finished == 8 and totals.passed == 8
    arrivals = sorted(r.at for r in scripted_server.chat_requests())
    # Two waves of four: the last call starts about 0.5 s after the first (serially it would be 3.5 s).
    assert arrivals[-1] - arrivals[0] < 1.2, f"calls started over {arrivals[-1] - arrivals[0]:.1f} s"
    in_window = max(sum(1 for b in arrivals if a <= b < a + 0.45) for a in arrivals)
    assert in_window == 4


def test_unknown_dataset_or_strategy_is_exit_2_and_writes_nothing(scripted_server, tmp_path):
    run_dir = tmp_path / "never"
    for extra, message in ((("--strategy", "nope"), "unknown strategy"), (("--concurrency", "0"), "--concurrency")):
        done = run_cli(bench_command(scripted_server.url, run_dir, *extra))
        assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = run_cli(bench_command(scripted_server.url, run_dir, "--ids", str(tmp_path / "missing.txt")))
    assert done.returncode == 2 and "--ids" in done.stderr
    assert not run_dir.exists()
    done = run_cli([sys.executable, "-m", "solidcoder", "report", str(tmp_path / "nothing")])
    assert done.returncode == 2 and "not a run directory" in done.stderr


def test_budget_exhaustion_stops_the_run(scripted_server, sandbox_pool, tmp_path):
    scripted_server.responder = canonical_responder()
    problems, _ = load_dataset("humaneval", DataOptions(data_file=humaneval_rows_path(), limit=6))
    options = ModelOptions(api_base=scripted_server.url)
    options.budget.config = BudgetConfig(max_calls=2)
    model = make_model("openai/scripted-model", options)
    task = CodeTask(problems, make_strategy("direct"), PromptLibrary.from_env(), sandbox_pool)
    store = ResultStore(tmp_path / "run")
    runner = BenchRunner(spec=RunSpec("humaneval", "direct", "m", "h"), task=task, model=model, store=store,
                         concurrency=1)
    totals = asyncio.run(runner.run())
    store.close()
    assert totals.finished == 2 and "budget" in totals.stopped and len(scripted_server.chat_requests()) == 2


def test_torn_last_line_is_cut_before_appending(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a", "passed": true}\n{"key": "b", "pas')
    assert repair_tail(path) > 0
    store = ResultStore(tmp_path)
    store.add_result(ResultRow(key="c", passed=False))
    store.close()
    assert [r["key"] for r in rows(path)] == ["a", "c"]


def test_pass_at_k_unbiased():
    assert pass_at_k(10, 0, 1) == 0 and pass_at_k(10, 10, 5) == 1
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    results = [ResultRow(key=f"{i}{s}", id=str(i), passed=s < i, dataset="d", strategy="s", model="m",
                         config_hash="h") for i in range(3) for s in range(2)]
    [summary] = summarize(results, [])
    assert summary.samples == 2 and summary.pass1 == pytest.approx((0 + 0.5 + 1) / 3)
    assert summary.pass_at[2] == pytest.approx((0 + 1 + 1) / 3)


def test_trace_inference_scored_against_the_tracer(scripted_server, sandbox_pool, fixture_data, tmp_path):
    items = load_trace_items("cruxeval", DataOptions(data_file=fixture_data / "cruxeval.jsonl", limit=2))
    answers = {items[0].code: f"Let me think.\nANSWER: {items[0].expected_text}", items[1].code: "ANSWER: 42"}

    def respond(received):
        return reply(next(a for c, a in answers.items() if c in received.body["messages"][-1]["content"]))

    scripted_server.responder = respond
    model = make_model("openai/scripted-model", ModelOptions(api_base=scripted_server.url))
    store = ResultStore(tmp_path / "run")
    task = TraceTask(items, PromptLibrary.from_env(), sandbox_pool)
    asyncio.run(BenchRunner(spec=RunSpec("cruxeval", "direct", "m", "h"), task=task, model=model, store=store,
                            concurrency=2).run())
    store.close()
    by_id = {r["id"]: r for r in rows(tmp_path / "run" / "results.jsonl")}
    assert by_id[items[0].id]["passed"] and not by_id[items[1].id]["passed"]


def test_variable_prediction_asks_about_a_local(sandbox_pool, fixture_data):
    [item] = load_trace_items("cruxeval-vars", DataOptions(data_file=fixture_data / "cruxeval.jsonl", limit=1))
    variable, value = asyncio.run(TraceTask([item], PromptLibrary.from_env(), sandbox_pool).truth(item))
    assert variable == "output" and value == [(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]


def test_exact_answers():
    assert same_value(parse_answer("so\nANSWER: [(1, 2)]"), [(1, 2)])
    assert not same_value(parse_answer("ANSWER: [[1, 2]]"), [(1, 2)])
    assert not same_value(parse_answer("ANSWER: True"), 1)
    assert not same_value(parse_answer("I cannot tell"), "I cannot tell")


def test_answers_in_the_forms_small_models_end_on():
    """Replies recorded from Qwen2.5-Coder-0.5B on CRUXEval, which ignore the `ANSWER:` line they were asked for."""
    assert parse_answer("Therefore the output is `'abc'`, i.e. `f('aBc') == 'abc'`") == "abc"
    assert parse_answer("So, `f({'1': 'a'}, [1]) == {'1': 'b'}`.") == {"1": "b"}
    assert parse_answer("The function returns `[3, 1]`.") == [3, 1]
    assert parse_answer("i.e. `ANSWER: (1, 2)`") == (1, 2)
    assert parse_answer("ANSWER: `[1]`\nbut I may be wrong") == [1]  # a tagged answer wins over the last line


def test_the_limiter_holds_at_most_n_calls_in_flight():
    limiter, in_flight, peak = Limiter(2), [0], [0]

    async def call() -> None:
        async with limiter.tasks:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
            await asyncio.sleep(0.01)
            in_flight[0] -= 1

    async def calls() -> None:
        await asyncio.gather(*(call() for _ in range(6)))

    asyncio.run(calls())
    assert peak[0] == 2


def test_cli_trace_task_and_strategy_check(scripted_server, fixture_data, tmp_path):
    scripted_server.default = reply("ANSWER: 0")
    base = [sys.executable, "-m", "solidcoder", "bench", "--dataset", "cruxeval-vars", "--data-file",
            str(fixture_data / "cruxeval.jsonl"), "--limit", "3", "--model", "openai/scripted-model",
            "--api-base", scripted_server.url, "--run-dir", str(tmp_path / "run")]
    done = run_cli(base)
    assert done.returncode == 0, done.stderr
    assert len(rows(tmp_path / "run" / "results.jsonl")) == 3
    refused = run_cli([*base, "--strategy", "cot"])
    assert refused.returncode == 2 and "only --strategy direct" in refused.stderr


def test_report_same_problems_compares_only_shared_problems(tmp_path):
    from solidcoder.bench.report import load_summaries

    store = ResultStore(tmp_path)
    for strategy, ids in (("direct", ["a", "b", "c"]), ("solidcoder", ["a"])):
        for pid in ids:
            store.add_result(ResultRow(key=f"{strategy}{pid}", id=pid, passed=pid == "a" or strategy == "direct",
                                       dataset="d", strategy=strategy, model="m", config_hash=strategy))
    store.close()
    everything = {s.strategy: (s.problems, s.pass1) for s in load_summaries([tmp_path])}
    shared = {s.strategy: (s.problems, s.pass1) for s in load_summaries([tmp_path], same_problems=True)}
    assert everything == {"direct": (3, 1.0), "solidcoder": (1, 1.0)}
    assert shared == {"direct": (1, 1.0), "solidcoder": (1, 1.0)}


def test_report_ids_scores_only_the_problems_the_file_names(tmp_path):
    store = ResultStore(tmp_path / "run")
    for pid in ("a", "b", "c"):
        store.add_result(ResultRow(key=pid, id=pid, passed=pid != "c", dataset="d", strategy="direct", model="m",
                                   config_hash="h"))
    store.close()
    (tmp_path / "ids.txt").write_text("b\nc\n")
    done = run_cli([sys.executable, "-m", "solidcoder", "report", str(tmp_path / "run"), "--ids",
                    str(tmp_path / "ids.txt")])
    assert done.returncode == 0, done.stderr
    assert "pass@1 50.0 % [9.5, 90.5] (95 %, 2 problems)" in done.stdout


def test_report_tells_two_configurations_of_one_method_apart_by_their_hash(tmp_path):
    from solidcoder.bench.report import load_summaries, pass_table

    store = ResultStore(tmp_path)
    for config, passed in (("aaaaaaaa1111", True), ("bbbbbbbb2222", False)):
        store.add_result(ResultRow(key=config, id="p", passed=passed, dataset="d", strategy="direct", model="m",
                                   config_hash=config))
    store.close()
    _, rows = pass_table(load_summaries([tmp_path]))
    assert [row[:2] for row in rows] == [["direct @aaaaaa (m)", "100.0"], ["direct @bbbbbb (m)", "0.0"]]


def test_ctrl_c_stops_cleanly_and_resume_completes(scripted_server, tmp_path):
    scripted_server.responder = canonical_responder(delay_s=0.3)
    run_dir = tmp_path / "run"
    command = bench_command(scripted_server.url, run_dir, "--concurrency", "2", limit=10)
    proc = interruptible(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(rows(run_dir / "results.jsonl")) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "rerun the same command to resume" in err
    finished = rows(run_dir / "results.jsonl")
    assert 3 <= len(finished) < 10
    assert run_cli(command).returncode == 0
    keys = [r["key"] for r in rows(run_dir / "results.jsonl")]
    assert len(keys) == len(set(keys)) == 10


def test_report_keeps_two_runs_of_one_configuration_in_two_directories_apart(tmp_path):
    from solidcoder.bench.report import load_summaries, pass_table

    for run, passed in (("first", True), ("again", False)):
        store = ResultStore(tmp_path / run)
        store.add_result(ResultRow(key="k", id="p", passed=passed, dataset="d", strategy="direct", model="m",
                                   config_hash="aaaaaaaa1111"))
        store.close()
    _, rows = pass_table(load_summaries([tmp_path / "first", tmp_path / "again"]))
    assert [row[:2] for row in rows] == [["direct @aaaaaa (m)", "100.0"], ["direct @aaaaaa in again (m)", "0.0"]]


def test_report_counts_how_each_oracle_round_ended(tmp_path):
    from solidcoder.bench.report import load_summaries, oracle_lines

    store = ResultStore(tmp_path)
    for pid, rounds in (("p", ["executed, passed", "malformed"]), ("q", ["rejected", "executed, failed"])):
        store.add_result(ResultRow(key=pid, id=pid, passed=True, dataset="d", strategy="solidcoder", model="m",
                                   config_hash="c", notes=Notes(oracle=OracleRounds(tuple(rounds)))))
    store.close()
    assert oracle_lines(load_summaries([tmp_path])) == [
        "d solidcoder (m): 4 oracle rounds, 2 executed a test (50%): executed, failed 1; executed, passed 1; "
        "malformed 1; rejected 1"]


def test_report_at_80_columns_cuts_no_cell_and_prints_paths_whole(tmp_path):
    """Two committed run directories side by side on an 80-column terminal: the cost table, too wide even wrapped, is
    stacked; nothing is cut with an ellipsis, and the report's path (longer than the terminal) is one whole line."""
    copies = [tmp_path / f"a-run-directory-with-a-name-long-enough-to-pass-eighty-columns-{name}" for name in "ab"]
    for copy, name in zip(copies, ("humaneval40_qwen05b_routed_onerequest", "mbpp40_qwen05b_routed_onerequest"),
                          strict=True):
        copy.mkdir()
        for part in ("results.jsonl", "errors.jsonl", "runs.jsonl"):
            shutil.copy(REPO / "benchmarks" / "results" / name / part, copy / part)
    page = copies[1] / "report.html"
    code, out = run_in_terminal([sys.executable, "-m", "solidcoder", "report", *map(str, copies), "--html", str(page)])
    assert code == 0, out
    wrote = f"wrote {page}"
    assert wrote in out.splitlines() and len(wrote) > 80 and page.is_file()
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines() if line != wrote), out
    assert "82.5" in out and "57.5" in out and "infra errors" in out  # both datasets, every cost column
