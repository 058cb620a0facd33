"""The languages a program may be written in: one `Language` entry each, read through a problem's `language` field.

An entry holds everything decided by the language alone: how prompts name it, the code-fence tags reply extraction
accepts, the source file's name, how the sandbox builds and runs it, and its time-limit rule. Adding a language is
one entry here, its templates where they differ, and tests (`docs/architecture.md`'s recipe).

Python runs inside the sandbox's own harness (a zygote clone, no `run` command). A compiled language is built once
per source in the sandbox (`compile` writes `binary` in the run's directory; `execution/build.py` caches it by
source hash within a run) and then run as `run`; an interpreted one (JavaScript) has only `run`.

The time-limit rule: every language gets the dataset's own limit (`Problem.time_limit_s`) times `time_factor`, which
is 1 for all of them: Python gets no extra time (the datasets here give one limit for every language, and the
published Python baselines run under it), so C++ and JavaScript get exactly the dataset's limit too.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass

from solidcoder.errors import BadInput

CPP_FLAGS = ("-std=c++17", "-O2", "-pipe")  # the one place C++'s compiler flags live
# How C++ is linked: statically and stripped. A binary runs once per test, and a dynamic one spends 0.6 ms of each
# run loading libstdc++ (1.1 ms against 0.5 ms per start here), more than a test of a small program takes. The
# 1.7 MB it weighs is written once per build into a sealed memfd that every run executes in place
# (`execution/sealed.py`); linking statically adds about 0.05 s to a build.
CPP_LINK = ("-static", "-s")


@dataclass(frozen=True)
class Build:
    """How the sandbox compiles a source: `command` run in the run's directory, writing `output` there; its own
    limits (`wall_s`, `memory_mb`, `max_processes` for the driver's children, `max_output_kb` of diagnostics,
    `max_file_mb` for the binary and temporary files)."""

    command: tuple[str, ...]
    output: str
    wall_s: float = 30.0
    memory_mb: int = 2048
    max_processes: int = 16
    max_output_kb: int = 256
    max_file_mb: int = 64


@dataclass(frozen=True)
class Language:
    """`name` as `Problem.language` and `--language` hold it; `prompt_name` as templates say it (`{{ language }}`);
    `fence_tags` the tags of a reply's code block taken as this language ("" is an untagged block); `source` the
    program's file name in the run's directory; `build` its compile step (None: run from source); `run` the command
    that runs it (empty: the sandbox's own Python harness); `toolchain` the executable it needs on the machine,
    `libraries` the files its toolchain must find (static libraries);
    `suffixes` the file suffixes `check PROGRAM` reads as this language; `time_factor` the time-limit rule."""

    name: str
    prompt_name: str
    fence_tags: tuple[str, ...]
    source: str
    run: tuple[str, ...] = ()
    build: Build | None = None
    toolchain: str = ""
    libraries: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    time_factor: float = 1.0

    @property
    def native(self) -> bool:
        """Run by a command of its own (compiled or interpreted), not by the sandbox's Python harness."""
        return bool(self.run)

    def time_limit_s(self, dataset_limit_s: float) -> float:
        return dataset_limit_s * self.time_factor


PYTHON = Language("python", "Python 3", ("", "python", "py", "python3"), "solution.py", suffixes=(".py",))
CPP = Language("cpp", "C++17", ("cpp", "c++", "cc", "cxx"), "solution.cpp", run=("./solution",),
               build=Build(("g++", *CPP_FLAGS, *CPP_LINK, "-o", "solution", "solution.cpp"), "solution"),
               toolchain="g++", libraries=("libc.a", "libstdc++.a"), suffixes=(".cpp", ".cc", ".cxx", ".c++"))
JAVASCRIPT = Language("javascript", "JavaScript (Node.js)", ("javascript", "js", "node", "nodejs"), "solution.js",
                      run=("node", "solution.js"), toolchain="node", suffixes=(".js", ".mjs"))
LANGUAGES = {entry.name: entry for entry in (PYTHON, CPP, JAVASCRIPT)}
DEFAULT = PYTHON.name  # a problem file without `language`


def language(name: str) -> Language:
    """The entry called `name`; a ValueError naming the known ones when there is none (a problem file's field)."""
    if name not in LANGUAGES:
        raise ValueError(f"field 'language' must be one of {tuple(LANGUAGES)}, got {name!r}")
    return LANGUAGES[name]


def tagged(name: str, program_language: str | None, python_too: bool = False) -> str:
    """A configuration's name as reports and `show` print it: with the programs' language when not Python, and with
    Python's too when `python_too` (a report or run holding programs in several languages)."""
    shown = program_language or PYTHON.name
    return f"{name} [{shown}]" if python_too or shown != PYTHON.name else name


def chosen(name: str) -> Language:
    """The entry `--language NAME` asks for, its toolchain on this machine; BadInput otherwise, before any call."""
    if name not in LANGUAGES:
        raise BadInput(f"--language {name!r}: choose one of {', '.join(LANGUAGES)}")
    entry = LANGUAGES[name]
    if entry.toolchain and shutil.which(entry.toolchain) is None:
        raise BadInput(f"--language {name} needs {entry.toolchain}, which is not installed (scripts/test.sh installs "
                       "it from the system's packages)")
    missing = missing_libraries(entry)
    if missing:
        raise BadInput(f"--language {name}: {entry.toolchain} finds no {', '.join(missing)} to link with (install "
                       "the C library's and libstdc++'s development packages: libc6-dev and libstdc++-dev, or "
                       "glibc-static and libstdc++-static)")
    return entry


def for_problem(name: str, kind: str, where: str) -> Language:
    """The entry `name` (`chosen`: its toolchain installed) for a problem of `kind`; BadInput for a call problem in a
    language other than Python, `where` saying which (its tests are Python calls)."""
    entry = chosen(name)
    if entry.native and kind == "call":
        raise BadInput(f"{where} is a call problem (a function called with arguments, tested by Python calls); "
                       f"{entry.name} programs are judged on standard input and output only")
    return entry


def missing_libraries(entry: Language) -> list[str]:
    """The entry's `libraries` its toolchain does not find."""
    return [name for name in entry.libraries if not _found(entry.toolchain, name)]


@functools.cache  # asked once per process: `chosen` runs for every command, dataset and problem file
def _found(toolchain: str, name: str) -> bool:
    """Whether the compiler driver finds library file `name` (`-print-file-name` answers the bare name when not)."""
    try:
        answer = subprocess.run([toolchain, f"-print-file-name={name}"], capture_output=True, text=True, timeout=30,
                                check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return answer not in ("", name)


def by_suffix(path: str) -> Language:
    """The language of a program file by its suffix; Python when none matches (`check`'s default)."""
    lowered = path.lower()
    return next((entry for entry in LANGUAGES.values() if lowered.endswith(entry.suffixes)), PYTHON)
