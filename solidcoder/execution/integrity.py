"""Whether a test script changed what the judge process relies on, so that a long-lived judge knows it is unfit.

A snapshot is taken before the judge runs its first test script and compared after each run. It covers:

* the namespaces of the modules verdicts go through: the judge's own (`referee`, `wire`, `compare`, `harness`),
  `builtins`, `sys`, `os`, `json` and its parts, `math`, `cmath`, `re`, `select`, `signal`, `struct`, `time`,
  and that `sys.modules` still maps their names to them;
* the classes and functions the judge's own modules define: class dicts, function code and defaults;
* interpreter-wide state: trace and profile hooks, the recursion limit, the garbage collector, the alarm handler,
  and that no other thread runs.

It sees a name rebound to a value that is not equal to the old one (so not to one whose `__eq__` lies), not
changes inside an object that stays bound (a list's contents, a C object's state), and not audit hooks. A test
script is trusted to mean what it says; this catches what such a script changes by accident, not a deliberate
attack on the judge by its own tests. `SandboxConfig(judge_runs=1)` gives every run a fresh judge instead.
"""

from __future__ import annotations

import _thread
import gc
import signal
import sys
import types
from typing import Any

OWN_MODULES = ("solidcoder.execution.referee", "solidcoder.execution.wire", "solidcoder.execution.compare",
               "solidcoder.execution.harness")
STDLIB_MODULES = ("builtins", "sys", "os", "posix", "json", "json.decoder", "json.encoder", "json.scanner", "math",
                  "cmath", "re", "select", "signal", "struct", "time")


def _definitions(module: types.ModuleType) -> list[Any]:
    """The classes and functions `module` defines, and the functions inside those classes."""
    found = []
    for value in list(vars(module).values()):
        if getattr(value, "__module__", None) != module.__name__ or not isinstance(value, (type, types.FunctionType)):
            continue
        found.append(value)
        if isinstance(value, type):
            found += [fn for fn in vars(value).values() if isinstance(fn, types.FunctionType)]
    return found


def _function_state(fn: types.FunctionType) -> tuple:
    return fn.__code__, fn.__defaults__, fn.__kwdefaults__


def _interpreter_state() -> tuple:
    return (sys.gettrace(), sys.getprofile(), sys.getrecursionlimit(), gc.isenabled(),
            signal.getsignal(signal.SIGALRM), _thread._count())


class Integrity:
    """The snapshot, taken at construction; `intact()` says whether everything is still as it was."""

    def __init__(self) -> None:
        names = [name for name in OWN_MODULES + STDLIB_MODULES if name in sys.modules]
        self.modules = {name: sys.modules[name] for name in names}
        definitions = [d for name in OWN_MODULES if name in self.modules for d in _definitions(self.modules[name])]
        self.namespaces = [vars(m) for m in self.modules.values()] + [vars(c) for c in definitions
                                                                      if isinstance(c, type)]
        self.functions = [fn for fn in definitions if isinstance(fn, types.FunctionType)]
        self.copies = [dict(namespace) for namespace in self.namespaces]
        self.others = self._others()

    def _others(self) -> tuple:
        return ([_function_state(fn) for fn in self.functions], _interpreter_state(),
                [sys.modules.get(name) is module for name, module in self.modules.items()])

    def intact(self) -> bool:
        # == takes the identity shortcut for every unchanged value: C speed, tens of µs in all.
        return self.namespaces == self.copies and self._others() == self.others
