"""Prompt templates: Jinja2 files users can read, copy and override, rendered strictly.

Lookup order (first hit wins): `--prompts DIR`, `$SOLIDCODER_PROMPTS`, the user config directory
(`$XDG_CONFIG_HOME/solidcoder/prompts`, else `~/.config/solidcoder/prompts`), then the built-ins shipped with the
package. A template is named by its path without `.j2`, e.g. "paper/code". Rendering uses StrictUndefined, so a
missing variable is an error, never a silently empty prompt. A rendered template becomes chat messages by marker
lines `=== system ===`, `=== user ===`, `=== assistant ===` (see prompts/README.md); `check_templates` (`prompts
check`, and `solve` before its first model call) also rejects a template with no user message or a malformed
marker. `export` writes nothing when it would overwrite a file with other content (an edited copy), unless forced.
"""

from __future__ import annotations

import os
import re
import shutil
import traceback
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from solidcoder.errors import BadInput
from solidcoder.languages import PYTHON, language
from solidcoder.models.base import Message

if TYPE_CHECKING:
    import jinja2

    from solidcoder.problem import Problem

SUFFIX = ".j2"
_MARKER = re.compile(r"^=== (system|user|assistant) ===[ \t]*$", re.MULTILINE)
# A line meant as a marker: a role's name after `=` (`=== User ===`, `=== user`, ` === user ===`, `==user==`). A
# misspelt role (`=== usr ===`) is text: before the first marker an error, else it leaves no user message.
_HEADER_LIKE = re.compile(r"^[ \t]*=+[ \t]*(?i:system|user|assistant)\b.*$", re.MULTILINE)
_OPENS_FENCE = re.compile(r"```[\w+#-]*")
_HEADERS_ARE = "a message starts at a line that is exactly '=== system ===', '=== user ===' or '=== assistant ==='"

_COMMON = {"problem", "language", "io_mode", "entry_point"}

# What each built-in template is rendered with. All values are strings; `io_mode` is "call" (a function is
# called with arguments) or "stdin" (a program reads stdin and writes stdout); `entry_point` is "" for stdin.
LANGUAGE = PYTHON.prompt_name  # what a prompt rendered without a problem asks for; with one, its `language` says


def problem_text(problem: Problem) -> str:
    """The problem as the model sees it: the statement, plus the starter code when the statement lacks it."""
    starter = problem.starter_code.strip()
    if starter and starter not in problem.statement:
        return f"{problem.statement.rstrip()}\n\nStarter code:\n```python\n{starter}\n```"
    return problem.statement


def problem_variables(problem: Problem) -> dict[str, str]:
    """The variables most templates take: the problem as the model sees it, the language, I/O mode, entry point."""
    return {"problem": problem_text(problem), "language": language(problem.language).prompt_name,
            "io_mode": "call" if problem.kind == "call" else "stdin", "entry_point": problem.entry_point or ""}


TEMPLATE_VARIABLES: dict[str, set[str]] = {
    "paper/shift_left": {"problem", "language", "io_mode"},
    "paper/plan": {"problem", "language", "io_mode"},
    "paper/plan_check": {"problem", "plan"},
    "paper/plan_refine": {"problem", "plan"},
    "paper/code": _COMMON | {"plan"},
    "paper/simulate": {"problem", "plan", "code", "sample_input", "sample_output"},
    "paper/red_team": {"problem", "code", "io_mode", "entry_point"},
    "paper/red_team_structured": {"problem", "code", "io_mode", "entry_point"},
    "refinements/red_team_compact": {"problem", "code", "io_mode", "entry_point"},
    "refinements/red_team_shared": {"problem", "io_mode", "entry_point"},
    "refinements/generated_tests": {"problem", "io_mode", "entry_point", "count"},
    "paper/judge": {"problem", "test", "io_mode"},
    "paper/fix": {"problem", "code", "test", "failure", "language"},
    "paper/debug": {"problem", "plan", "code", "language", "test_report", "trace"},
    "paper/mental_execute": {"problem", "code", "test", "io_mode"},
    "strategies/direct": _COMMON,
    "strategies/direct_qwen": {"problem"},
    "strategies/cot": _COMMON,
    "strategies/self_planning": _COMMON,
    "strategies/analogical": _COMMON,
    "strategies/mapcoder_retrieval": {"problem", "language", "count"},
    "strategies/mapcoder_planning": {"problem", "language", "example"},
    "strategies/mapcoder_coding": _COMMON | {"plan"},
    "strategies/mapcoder_debugging": {"problem", "language", "plan", "code", "test_report"},
    "strategies/codesim_planning": {"problem", "language"},
    "strategies/codesim_debugging": {"problem", "language", "plan", "code", "test_report"},
    "strategies/ldb_debug": {"problem", "language", "code", "failing_test", "trace"},
    "strategies/ldb_fix": {"problem", "language", "code", "failing_test", "trace", "debug_reply", "test",
                           "actual_output"},
    "strategies/alphacodium_reflect": {"problem", "tests", "test_count"},
    "strategies/alphacodium_possible_solutions": {"problem", "language", "self_reflection", "tests_explanations",
                                                  "max_solutions"},
    "strategies/alphacodium_choose_best": {"problem", "self_reflection", "solutions", "solution_count"},
    "strategies/alphacodium_ai_tests": {"problem", "io_mode", "entry_point", "self_reflection", "tests_explanations",
                                        "ai_test_count"},
    "strategies/alphacodium_solve": _COMMON | {"self_reflection", "solution"},
    "strategies/alphacodium_analyze_failure": {"problem", "language", "self_reflection", "code", "error"},
    "strategies/alphacodium_fix_solution": _COMMON | {"code", "error", "what_went_wrong", "fixed_flow"},
    "strategies/alphacodium_analyze_and_fix": _COMMON | {"code", "error"},
    "train/code": _COMMON,
    "train/alignment": {"problem", "code", "io_mode", "program_input", "variable_names", "answer_lines"},
    "train/alignment_released": {"problem", "code", "io_mode", "program_input", "variable_names"},
    "verify/orm": {"problem", "code"},
    "tasks/trace_output": {"code", "input"},
    "tasks/trace_variable": {"code", "input", "variable"},
}
# Templates rendered as plain text, not split into chat messages: the input an outcome reward model scores.
PLAIN_TEXT_TEMPLATES = {"verify/orm"}


def builtin_dir() -> Path:
    """Built-ins: `solidcoder/prompts` in a wheel, the repository's top-level `prompts/` in a source checkout."""
    package = Path(__file__).resolve().parent
    installed = package / "prompts"
    return installed if installed.is_dir() else package.parent / "prompts"


def user_dir() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "solidcoder" / "prompts"


@dataclass(frozen=True)
class PromptSource:
    name: str
    path: Path
    origin: str  # "--prompts", "SOLIDCODER_PROMPTS", "user config", "built-in"


class PromptLibrary:
    """The templates visible under one lookup order, and strict rendering of them."""

    def __init__(self, dirs: list[tuple[str, Path]]):
        self.dirs = dirs

    @cached_property
    def env(self) -> jinja2.Environment:
        # Built on first use: `prompts list` never renders, and importing jinja2 costs ~50 ms of CLI startup.
        import jinja2

        loaders = [jinja2.FileSystemLoader(str(path)) for _, path in self.dirs]
        return jinja2.Environment(
            loader=jinja2.ChoiceLoader(loaders),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # prompts are plain text, not HTML
        )

    @classmethod
    def from_env(cls, prompts_dir: Path | None = None) -> PromptLibrary:
        """The standard lookup order; `prompts_dir` is the `--prompts` option."""
        dirs: list[tuple[str, Path]] = []
        if prompts_dir is not None:
            if not prompts_dir.is_dir():
                raise BadInput(f"--prompts: no such directory: {prompts_dir}")
            dirs.append(("--prompts", prompts_dir))
        env_dir = os.environ.get("SOLIDCODER_PROMPTS")
        if env_dir:
            if not Path(env_dir).is_dir():
                raise BadInput(f"SOLIDCODER_PROMPTS: no such directory: {env_dir}")
            dirs.append(("SOLIDCODER_PROMPTS", Path(env_dir)))
        if user_dir().is_dir():
            dirs.append(("user config", user_dir()))
        dirs.append(("built-in", builtin_dir()))
        return cls(dirs)

    def sources(self) -> list[PromptSource]:
        """Every visible template with the file that wins for its name, sorted by name."""
        found: dict[str, PromptSource] = {}
        for origin, root in self.dirs:
            for path in sorted(root.rglob(f"*{SUFFIX}")):
                name = path.relative_to(root).as_posix().removesuffix(SUFFIX)
                found.setdefault(name, PromptSource(name, path, origin))
        return [found[name] for name in sorted(found)]

    def source(self, name: str) -> PromptSource:
        for src in self.sources():
            if src.name == name:
                return src
        raise BadInput(f"unknown prompt {name!r}; `solidcoder prompts list` shows the available ones")

    def template(self, name: str) -> jinja2.Template:
        import jinja2

        try:
            return self.env.get_template(name + SUFFIX)
        except jinja2.TemplateNotFound:
            raise BadInput(f"unknown prompt {name!r}; `solidcoder prompts list` shows the available ones") from None
        except jinja2.TemplateSyntaxError as exc:
            raise BadInput(f"{exc.filename or name}:{exc.lineno}: template syntax error: {exc.message}") from None

    def render(self, name: str, **variables: Any) -> str:
        import jinja2

        template = self.template(name)
        try:
            return template.render(**variables)
        except jinja2.UndefinedError as exc:
            raise BadInput(_undefined_message(template, exc)) from None

    def messages(self, name: str, **variables: Any) -> list[Message]:
        """The rendered template as chat messages, each carrying the template's name."""
        return split_messages(self.render(name, **variables), template=name)

    def export(self, dest: Path, force: bool = False) -> list[Path]:
        """Copy every visible template (the winning file for each name) under `dest`, keeping names. A file there
        with other content (an edited template) is overwritten only with `force`; else nothing is written."""
        pairs = [(src.path, dest / (src.name + SUFFIX)) for src in self.sources()]
        _check_export(dest, pairs, force)
        for path, target in pairs:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        return [target for _, target in pairs]


def _check_export(dest: Path, pairs: list[tuple[Path, Path]], force: bool) -> None:
    """Raise `BadInput`, before anything is written, when an export could not write every file or, without `force`,
    would overwrite a file whose content differs from its template's."""
    blocked = next(filter(None, (_in_the_way(dest, target) for _, target in pairs)), None)
    if blocked is not None:
        raise BadInput(f"cannot export to {dest}: {blocked}")
    edited = [target for path, target in pairs if target.exists() and target.read_bytes() != path.read_bytes()]
    if edited and not force:
        more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
        raise BadInput(f"{edited[0]} exists and differs from the template{more}; nothing written: use --force to "
                       "overwrite")


def _in_the_way(dest: Path, target: Path) -> str | None:
    """Why `target` cannot be written: a directory where the file goes, or a file where one of its folders (up to
    `dest`) goes; None when nothing is in the way."""
    if target.is_dir():
        return f"{target} is a directory"
    folders = [folder for folder in target.parents if folder == dest or dest in folder.parents]
    return next((f"{f} is a file, not a directory" for f in folders if f.exists() and not f.is_dir()), None)


def split_messages(text: str, template: str | None = None) -> list[Message]:
    """Split rendered text at marker lines; text without markers is one user message."""
    parts = _MARKER.split(text)
    if len(parts) == 1:
        return [Message("user", text.strip(), template)]
    if parts[0].strip():
        raise BadInput(f"prompt has text before its first '=== role ===' marker: {parts[0].strip()[:60]!r}")
    pairs = list(zip(parts[1::2], parts[2::2], strict=True))
    messages = [Message(role, body.strip(), template) for role, body in pairs if body.strip()]
    if messages and messages[-1].role == "assistant":  # a prefix the reply continues: its last newline kept
        messages[-1] = Message("assistant", _prefix(pairs[-1][1]), template)
    return messages


def _prefix(body: str) -> str:
    """A final assistant message as the reply's start: stripped, but for the newline after a code fence it opens
    on its last line (the reply's program starts on the next line, as the model would write it)."""
    kept = body.strip()
    return kept + "\n" if _OPENS_FENCE.fullmatch(kept.rsplit("\n", 1)[-1]) else kept


def _undefined_message(template: jinja2.Template, exc: jinja2.UndefinedError) -> str:
    filename = template.filename or template.name
    line = next(
        (f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__)) if f.filename == template.filename),
        None,
    )
    where = f"{filename}:{line}" if line else filename
    return f"{where}: template uses an unknown variable: {exc.message}"


def sample_variables(name: str, io_mode: str = "call") -> dict[str, str]:
    """Placeholder values for every variable `name` receives, e.g. {"problem": "<problem>"}."""
    values = {var: f"<{var}>" for var in TEMPLATE_VARIABLES[name]}
    if "io_mode" in values:
        values["io_mode"] = io_mode
    if "entry_point" in values:
        values["entry_point"] = "solve" if io_mode == "call" else ""
    return values


def check_templates(library: PromptLibrary) -> list[str]:
    """Render every known template in both I/O modes and split it into messages; raise `BadInput` at the first
    broken one."""
    for name in TEMPLATE_VARIABLES:
        _check_declared(library, name)
        for mode in ("call", "stdin"):
            _check_messages(library, name, mode)
    return list(TEMPLATE_VARIABLES)


def _check_messages(library: PromptLibrary, name: str, mode: str) -> None:
    """A chat template's message headers are well formed and one of its messages is the user's (text without any
    header is one user message); a plain-text template is only rendered."""
    text = library.render(name, **sample_variables(name, mode))
    if name in PLAIN_TEXT_TEMPLATES:
        return
    path = library.source(name).path
    _check_headers(path, text)
    try:
        roles = [message.role for message in split_messages(text, template=name)]
    except BadInput as exc:
        raise BadInput(f"{path}: {exc}") from None
    if "user" not in roles:
        raise BadInput(f"{path}: no '=== user ===' message (rendered with io_mode={mode} it holds only: "
                       f"{', '.join(roles) or 'nothing'}); {_HEADERS_ARE}")


def _check_headers(path: Path, text: str) -> None:
    """Raise at the first line that looks like a message header and is not one, e.g. `=== User ===`."""
    for found in _HEADER_LIKE.finditer(text):
        if not _MARKER.fullmatch(found.group(0)):
            header = found.group(0).strip()
            line = _line_of(path.read_text(), header)
            raise BadInput(f"{path}:{line}: malformed message header {header!r}; {_HEADERS_ARE}")


def _check_declared(library: PromptLibrary, name: str) -> None:
    """Catch unknown variables even inside branches that sample values do not reach."""
    import jinja2
    from jinja2 import meta

    path = library.source(name).path
    source = path.read_text()
    try:
        used = meta.find_undeclared_variables(library.env.parse(source))
    except jinja2.TemplateSyntaxError as exc:
        raise BadInput(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from None
    unknown = sorted(used - TEMPLATE_VARIABLES[name])
    if unknown:
        line = _line_of(source, unknown[0])
        known = ", ".join(sorted(TEMPLATE_VARIABLES[name]))
        raise BadInput(f"{path}:{line}: template uses an unknown variable {unknown[0]!r}; {name} receives: {known}")


def _line_of(source: str, needle: str) -> int:
    """The number of the first line of `source` that holds `needle` (1 when none does)."""
    return next((i for i, text in enumerate(source.splitlines(), 1) if needle in text), 1)
