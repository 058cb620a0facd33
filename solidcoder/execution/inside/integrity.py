"""Whether a test script changed what the judge process relies on, so that a long-lived judge knows it is unfit.

A snapshot is taken before the judge runs its first test script and compared after each run. It covers:

* the namespaces of the modules verdicts go through: the judge's own (`referee`, `wire`, `compare`, `harness`,
  `proxies`, `integrity`, `matching`), every stdlib module they import, `builtins`, `json`'s parts, and that
  `sys.modules` still maps their names to them; numpy, which the judge imports only to rebuild a program's array,
  is watched when loaded before the snapshot, and its appearance after it makes the judge unfit;
* the classes all these modules define that can be patched (class dicts), and any function's code or defaults
  replaced (heard by the audit hook below);
* interpreter-wide state: trace and profile hooks, the recursion limit, the garbage collector, the alarm handler,
  and that no other thread runs;
* contexts and settings a test script may change in passing: the decimal context (precision, rounding, exponent
  bounds, flags and traps), `sys.set_int_max_str_digits`, the switch interval, the warnings filters and default
  action, the environment, the working directory, and the namespaces of `decimal`, `fractions`, `warnings`,
  `collections`, `functools`, `itertools`, `operator` and `random`;
* audit hooks: one added after the snapshot is seen (by an audit hook of its own, which hears `sys.addaudithook`).

The check costs a fraction of a millisecond per run.

It sees any change to those namespaces (on CPython 3.11-3.13 by each dict's version tag, which changes with every
store of another object; elsewhere a name rebound to a value that is not equal to the old one), not changes inside
an object that stays bound (a list's contents, a C object's state). A judge process only ever
serves runs of one test script (`children.JudgeServer`), so this matters between runs of that same script only: a
script that changes what it relies on gets a fresh judge for its next run. `SandboxConfig(judge_runs=1)` gives
every run a fresh judge.
"""

from __future__ import annotations

import _thread
import ctypes
import decimal
import gc
import os
import signal
import sys
import types
import warnings

# Every module the judge's code imports (tests/test_judge_process.py checks this against the imports of referee.py
# and of every solidcoder module it reaches), and a few a test script changes in passing.
OWN_MODULES = ("solidcoder.execution.inside.referee", "solidcoder.execution.inside.wire",
               "solidcoder.execution.inside.compare", "solidcoder.execution.inside.harness",
               "solidcoder.execution.inside.proxies", "solidcoder.execution.inside.integrity", "solidcoder.matching",
               "solidcoder.execution.inside.raised", "solidcoder.execution.inside.stdlib_values")
STDLIB_MODULES = ("builtins", "sys", "os", "posix", "json", "json.decoder", "json.encoder", "json.scanner", "math",
                  "cmath", "re", "select", "signal", "struct", "time", "decimal", "fractions", "warnings",
                  "collections", "collections.abc", "functools", "itertools", "operator", "random", "_thread",
                  "contextlib", "ctypes", "fcntl", "gc", "io", "linecache", "socket", "threading", "traceback", "types",
                  "importlib", "importlib.util", "sysconfig", "array", "datetime")
# Imported by the judge only when needed (the wire decoder rebuilds a program's numpy array with numpy): watched when
# the snapshot finds it loaded; one that a run loads afterwards could have been changed before anyone looked, so a
# judge that sees it appear is replaced (a test script using numpy gets a fresh judge for each run).
LAZY_MODULES = ("numpy",)


_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a class nothing can patch (int, list, a C extension's)


def _classes(module: types.ModuleType) -> list[type]:
    """The classes `module` defines that a test script could patch."""
    return [value for value in list(vars(module).values()) if isinstance(value, type)
            and getattr(value, "__module__", None) == module.__name__ and not value.__flags__ & _IMMUTABLE_TYPE]


def _interpreter_state() -> tuple:
    return (sys.gettrace(), sys.getprofile(), sys.getrecursionlimit(), gc.isenabled(),
            signal.getsignal(signal.SIGALRM), _thread._count())


def _settings() -> tuple:
    """What a test script changes in passing: contexts, limits, filters, the environment, the directory."""
    context = decimal.getcontext()
    return (context.prec, context.rounding, context.Emin, context.Emax, context.capitals, context.clamp,
            dict(context.flags), dict(context.traps), sys.get_int_max_str_digits(), sys.getswitchinterval(),
            list(warnings.filters), warnings.defaultaction, dict(os.environ), os.getcwd())


class _AuditWatch:
    """Hears what leaves no other trace: an audit hook added after it (the `sys.addaudithook` event reaches the
    hooks already there), and a function's code or defaults replaced (`object.__setattr__` on a function)."""

    def __init__(self) -> None:
        self.seen = False
        sys.addaudithook(self)

    def __call__(self, event: str, args: tuple) -> None:
        if event == "sys.addaudithook" or event in _SETS and isinstance(args[0], types.FunctionType):
            self.seen = True


_SETS = ("object.__setattr__", "object.__delattr__")


class Integrity:
    """The snapshot, taken at construction; `intact()` says whether everything is still as it was."""

    def __init__(self) -> None:
        self.modules, self.namespaces = _WATCHED or watched()
        self.copies = self._current() if _VERSIONS else [dict(namespace) for namespace in self.namespaces]
        self.others = self._others()
        self.audit = _AuditWatch()

    def _current(self) -> list:
        """Each namespace's version tag (it changes with every change to the dict), else the namespaces."""
        return [_version(namespace) for namespace in self.namespaces] if _VERSIONS else self.namespaces

    def _others(self) -> tuple:
        return (_interpreter_state(), _settings(), [name in sys.modules for name in LAZY_MODULES],
                [sys.modules.get(name) is module for name, module in self.modules.items()])

    def intact(self) -> bool:
        return self._current() == self.copies and self._others() == self.others and not self.audit.seen


def watched() -> tuple[dict[str, types.ModuleType], list[dict]]:
    """The modules checked, and the namespaces: theirs and those of the classes they define."""
    names = OWN_MODULES + STDLIB_MODULES + LAZY_MODULES
    modules = {name: sys.modules[name] for name in names if name in sys.modules}
    classes = [c for module in modules.values() for c in _classes(module)]
    # A class's namespace is a read-only proxy of the dict that holds it: watch that dict.
    return modules, [vars(m) for m in modules.values()] + [gc.get_referents(vars(c))[0] for c in classes]


def prepare() -> None:
    """Find the namespaces once, in the zygote, so that every judge cloned from it starts its check without
    walking (and copying on write) every module."""
    global _WATCHED
    _WATCHED = watched()


_WATCHED: tuple[dict[str, types.ModuleType], list[dict]] | None = None
# CPython's dicts carry a version tag (PEP 509) that changes with every change: where it does, a check reads one
# number per namespace instead of comparing (and touching) every value. Checked on a probe, else the copies.
_VERSION_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p)  # PyDictObject: ob_refcnt, ob_type, ma_used, ma_version_tag


def _version(namespace: dict) -> int:
    return ctypes.c_uint64.from_address(id(namespace) + _VERSION_OFFSET).value


def _versions_work() -> bool:
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return False
    probe = {"key": 1}
    before = _version(probe)
    probe["key"] = 2
    changed = _version(probe)
    return before != changed and _version(probe) == changed


_VERSIONS = _versions_work()
