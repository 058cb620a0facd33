"""Reading a run directory into views: a bench run's logs, or a `solve` run's trajectory.json; or every run in a
parent directory (`solve` keeps each run in a directory of its own under one parent), or one trajectory.json.

A bench unit's calls are the calls.jsonl rows under its key (ordered by their place in the unit; the template is
there since issue 31), its executions the executions.jsonl rows of its last try. Calls and executions go back in
order by `after_call`, in phases: a routed run's are split into its tiers by the calls each tier made (the notes'
`Route`), another run's are one phase named by its strategy, and the scoring (bench's hidden tests, `solve`'s final
check) is a phase of its own. Result rows are read as `ResultRow`s, a `solve` run's notes as `Notes`
(`solidcoder.store`). Every row is checked against its shape (`solidcoder.shapes`) as it is read: a field of the
wrong type is one line naming the file and line, never a crash.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from solidcoder import shapes
from solidcoder.core.executions import Execution
from solidcoder.errors import BadInput
from solidcoder.languages import tagged
from solidcoder.shapes import checked, checked_results, checked_rows
from solidcoder.show.views import Call, Line, Phase, ProblemView, Run, Scored
from solidcoder.store import CALLS, ERRORS, EXECUTIONS, RESULTS, RUNS, Notes, ResultRow, TierCost, run_labels
from solidcoder.wording import counted

TRAJECTORY = "trajectory.json"
SCORING = {"hidden": "scoring on the hidden tests", "kept": "scoring on the hidden tests",
           "final": "final check on the public tests"}


def load_run(path: Path) -> Run:
    """The run at `path`: a bench or `solve` run directory, a file in one (`trajectory.json`, `results.jsonl`...),
    or a parent of run directories (`.solidcoder/runs`: every run right under it, each configuration named with its
    directory); BadInput when it is none of these."""
    if path.is_file():
        return load_run(path.parent) if path.name in (RESULTS, ERRORS, CALLS, EXECUTIONS, RUNS) else \
            Run(str(path), "solve", [_solve_view(_json(path))])
    if not path.is_dir():
        raise BadInput(f"{path}: no such run directory or trajectory file")
    if _is_run(path):
        return _one_run(path)
    runs = sorted((child for child in path.iterdir() if child.is_dir() and _is_run(child)), key=lambda c: c.name)
    if not runs:
        raise BadInput(f"{path}: not a run directory (no {TRAJECTORY}, {RESULTS} or {ERRORS}), and no run directory "
                       f"under it")
    views = [replace(view, line=replace(view.line, config=f"{view.line.config} ({run.name})"))
             for run in runs for view in _one_run(run).problems]
    return Run(str(path), "runs", views)


def _is_run(path: Path) -> bool:
    return any((path / name).is_file() for name in (TRAJECTORY, RESULTS, ERRORS))


def _one_run(path: Path) -> Run:
    if (path / TRAJECTORY).is_file():
        return Run(str(path), "solve", [_solve_view(_json(path / TRAJECTORY))])
    return Run(str(path), "bench", _bench_views(path))


def find(run: Run, problem: str) -> list[ProblemView]:
    """The views of `problem` (one per configuration); BadInput naming a few known ids when there is none."""
    found = [view for view in run.problems if view.line.problem == problem]
    if not found:
        known = list(dict.fromkeys(view.line.problem for view in run.problems))
        raise BadInput(f"no problem {problem!r} in {run.path} (it has {len(known)}: {', '.join(known[:5])}"
                       f"{', ...' if len(known) > 5 else ''})")
    return found


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not JSON (or not UTF-8), a number too long
        raise BadInput(f"{path}: cannot read it: {exc}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not a trajectory (a JSON object)")
    return checked(data, shapes.TRAJECTORY, str(path))


# --- solve ---------------------------------------------------------------------------------------------------


def _solve_view(data: dict[str, Any]) -> ProblemView:
    outcome, usage = data.get("outcome") or {}, data.get("usage") or {}
    notes, steps = Notes.from_dict(outcome.get("notes") or {}), data.get("steps") or []
    calls = [_trajectory_call(i, step) for i, step in enumerate((s for s in steps if s.get("type") == "call"), 1)]
    executions = [Execution.from_dict(s) for s in steps if s.get("type") == "execution"]
    verdict = outcome.get("verified") if outcome.get("status") in ("verified", "unverified") else None
    problem = data.get("problem") or {}
    line = Line(problem=problem.get("id", "?"), config=tagged(data.get("strategy", "?"), problem.get("language")),
                passed=verdict, ended=_ended(notes, outcome.get("status", "")), calls=usage.get("calls", len(calls)),
                tokens=usage.get("tokens", 0), seconds=data.get("elapsed_s", 0.0))
    return _view(line, _phased(calls, executions, notes, data.get("strategy", "?")), notes, outcome.get("code", ""),
                 outcome.get("reason", "") or _why(notes))


def _trajectory_call(position: int, step: dict[str, Any]) -> Call:
    prompt = "\n\n".join(f"[{m.get('role')}]\n{m.get('content', '')}" for m in step.get("messages", []))
    return Call(position=position, template=step.get("template", "?"), prompt_tokens=step.get("prompt_tokens", 0),
                completion_tokens=step.get("completion_tokens", 0), seconds=step.get("latency_s", 0.0),
                prompt=prompt, reply=step.get("reply", ""), error=step.get("error", ""),
                replayed=bool(step.get("replayed")))


# --- bench ---------------------------------------------------------------------------------------------------


def _bench_views(path: Path) -> list[ProblemView]:
    results = checked_results(path / RESULTS, shapes.RESULT)
    finished = {row.key for row in results}
    failed = _last_error(checked_results(path / ERRORS, shapes.ERROR))
    rows = results + [row for row in failed if row.key not in finished]
    names = _config_names(rows, run_labels(checked_rows(path / RUNS, shapes.RUN)))
    calls, executions = _calls_by_key(path), _executions_by_key(path)
    views = [_bench_view(row, names, calls.get(row.key, []), executions.get(row.key, [])) for row in rows]
    configs = list(dict.fromkeys(view.line.config for view in views))
    return sorted(views, key=lambda view: (configs.index(view.line.config), natural(view.line.problem)))


def natural(problem: str) -> tuple:
    """A problem id's sort key with its numbers as numbers (HumanEval/2 before HumanEval/10)."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", problem))


def _bench_view(row: ResultRow, names: dict[str, str], calls: list[Call], executions: list[Execution]) -> ProblemView:
    notes = row.notes or Notes()
    sample = f" (sample {row.sample})" if row.sample else ""
    failed = f"error: {row.error}"[:200] if row.error is not None else ""
    line = Line(problem=row.id + sample, config=names.get(row.config_hash, "?"), passed=row.passed,
                ended=failed or _ended(notes, ""), calls=row.calls, tokens=row.tokens, seconds=row.wall_s)
    scored = None if row.tests_total is None else \
        Scored(row.tests_passed or 0, row.tests_total, row.first_failure or "")
    view = _view(line, _phased(calls, executions, notes, row.strategy), notes, row.code or "", failed or _why(notes))
    return replace(view, scored=scored)


def _last_error(rows: list[ResultRow]) -> list[ResultRow]:
    """The latest error row of each key (a unit retried and failed again is one unit)."""
    return list({row.key: row for row in rows}.values())


def _config_names(rows: list[ResultRow], labels: dict[str, str]) -> dict[str, str]:
    """config hash -> its name: the run's label or the strategy, with the hash where two would share a name."""
    hashes = list(dict.fromkeys(row.config_hash for row in rows))
    several = len({row.language or "python" for row in rows}) > 1  # then Python's are named too
    strategy = {row.config_hash: tagged(row.strategy or "?", row.language, python_too=several) for row in rows}
    names = {h: labels.get(h) or strategy[h] for h in hashes}
    shared = Counter(names.values())
    return {h: f"{name} @{h[:6]}" if shared[name] > 1 else name for h, name in names.items()}


def _calls_by_key(path: Path) -> dict[str, list[Call]]:
    found: dict[str, list[Call]] = defaultdict(list)
    for row in checked_rows(path / CALLS, shapes.CALL):
        key, _, rest = str(row.get("id", "")).partition("#")
        position = rest.split("#", 1)[0]
        if position.isdigit():
            found[key].append(_logged_call(int(position), row))
    return {key: sorted(calls, key=lambda call: call.position) for key, calls in found.items()}


def _logged_call(position: int, row: dict[str, Any]) -> Call:
    completion = row.get("completion") or {}
    return Call(position=position, template=row.get("template", ""),
                prompt_tokens=completion.get("prompt_tokens", 0),
                completion_tokens=completion.get("completion_tokens", 0), seconds=completion.get("latency_s", 0.0),
                reply=completion.get("text", ""))


def _executions_by_key(path: Path) -> dict[str, list[Execution]]:
    """Each unit's executions of its last try (the try that wrote its result)."""
    tries: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for row in checked_rows(path / EXECUTIONS, shapes.EXECUTION):
        tries[row.get("key", "")].setdefault(row.get("attempt", ""), []).append(row)
    return {key: [Execution.from_dict(r) for r in sorted(list(by_try.values())[-1], key=lambda r: r.get("n", 0))]
            for key, by_try in tries.items()}


# --- both ----------------------------------------------------------------------------------------------------


def _view(line: Line, phases: list[Phase], notes: Notes, program: str, why: str) -> ProblemView:
    oracle = notes.oracle
    return ProblemView(line=line, phases=phases, program=program, why=why, strategy_stages=list(notes.stages or ()),
                       kept=list(notes.kept or ()), rejected=list(oracle.rejections) if oracle else [],
                       oracle_rounds=list(oracle.outcomes) if oracle else [],
                       executions_recorded=any(isinstance(s, Execution) for phase in phases for s in phase.steps))


def _tier(notes: Notes) -> int | None:
    """The routing tier the run ended in (None: not a routed run)."""
    return notes.route.tier if notes.route else None


def _ended(notes: Notes, status: str) -> str:
    """Where the run ended: routing's tier, else the last stage the strategy ran, else the run's status."""
    if _tier(notes) is not None:
        return f"tier {_tier(notes)}"
    return (list(notes.stages or ()) or [status or "-"])[-1]


def _why(notes: Notes) -> str:
    """Why this program is the answer, from what the strategy recorded."""
    where = "the strategy" if _tier(notes) is None else f"tier {_tier(notes)}"
    if notes.verified:
        return f"{where} accepted it: at least one test ran and it passed every test it ran"
    if notes.stopped:
        return f"not verified: the run stopped ({notes.stopped}); the answer is the best program seen"
    if notes.verified is not None:
        return "not verified: no stage accepted a program; the answer is the best program seen"
    return "the strategy runs no tests of its own: its program is the answer"


def _phased(calls: list[Call], executions: list[Execution], notes: Notes, name: str) -> list[Phase]:
    """Calls and the strategy's executions in the order they happened, by tier for a routed run; the scoring last."""
    scoring = [e for e in executions if e.purpose in SCORING]
    steps = sorted([*calls, *(e for e in executions if e.purpose not in SCORING)], key=_order)
    tiers = notes.route.tiers if notes.route else ()
    phases = _tiered(steps, tiers) if tiers else [Phase(name or "run", steps)]
    return phases + ([Phase(SCORING[scoring[0].purpose], scoring)] if scoring else [])


def _order(step: Call | Execution) -> tuple[int, int]:
    """Call n, then the executions made after it (`sorted` keeps their order), then call n + 1."""
    return (step.position, 0) if isinstance(step, Call) else (step.after_call, 1)


def _tiered(steps: list[Call | Execution], tiers: tuple[TierCost, ...]) -> list[Phase]:
    """Each step to the tier whose calls it follows: tiers run in order, each making `calls` calls."""
    bounds, total = [], 0
    for tier in tiers:
        total += tier.calls
        bounds.append(total)
    grouped: list[list[Call | Execution]] = [[] for _ in tiers]
    for step in steps:
        index = _order(step)[0]
        grouped[next((i for i, bound in enumerate(bounds) if index <= bound), len(tiers) - 1)].append(step)
    return [Phase(f"tier {tier.tier}", group, _cost(tier)) for tier, group in zip(tiers, grouped, strict=True)]


def _cost(tier: TierCost) -> str:
    return f"{counted(tier.calls, 'call')}, {tier.tokens} tokens, {tier.s} s"
