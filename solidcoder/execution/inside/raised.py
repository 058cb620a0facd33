"""The program's exception as a test in the judge sees it: built from the names and plain values the candidate
reported (`harness.exception_detail`), never from anything of the program's. Used by `proxies.py`."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

Made = Callable[[str, tuple], type]  # a judge-side class of that name under those bases (`Channel.made`)


class ProgramError(Exception):
    """The program raised an exception that is not a builtin one (its class name is in the message)."""


def _fresh(name: str, bases: tuple) -> type:
    return type(name if name.isidentifier() else "ProgramException", bases, {"__module__": "solution"})


def program_raised(name: str, message: str, where: str, detail: Any = None, made: Made = _fresh) -> Exception:
    """The program's exception as the test sees it: its own class where that is a stdlib exception class the judge
    already holds (`ValueError`, `statistics.StatisticsError`, `json.JSONDecodeError`), else a judge-side class of
    the same name under the most derived such class it inherits from (so `except ValueError` catches the program's
    `ValueError` subclass), with the program's args when they were plain. Never StopIteration or its kind, nor an
    exception that is not an `Exception` (a ProgramError naming it). `program_raised` keeps its text and where."""
    text = f"{name}: {message}" if message else name
    classes, args, attributes = _detail(detail, name)
    found = next((cls for cls in map(_held_class, classes) if cls is not None), None)
    if found is None or found is ProgramError:
        exc = ProgramError(text)
    else:
        exact = found if _held_class(classes[0]) is found else made(name, (found,))
        exc = _made(exact, args, message)
        for key, value in attributes.items():
            if type(key) is str and key.isidentifier() and not key.startswith("__"):
                with contextlib.suppress(Exception):
                    setattr(exc, key, value)
    exc.program_raised = (text, where)
    return exc


def _detail(detail: Any, name: str) -> tuple[list, tuple | None, dict]:
    """The reported classes (each a (module, qualified name) pair of strings), args and attributes; the name alone
    for a reply without them, as the builtin of that name."""
    if type(detail) is not tuple or len(detail) != 3 or type(detail[0]) is not tuple:
        return [("builtins", name)], None, {}
    classes = [c for c in detail[0] if type(c) is tuple and len(c) == 2 and all(type(x) is str for x in c)]
    args = detail[1] if type(detail[1]) is tuple else None
    return classes or [("builtins", name)], args, detail[2] if type(detail[2]) is dict else {}


def _held_class(named: tuple[str, str]) -> type | None:
    """The stdlib exception class of that module and qualified name, among modules the judge has already imported
    (a program's report never makes the judge import anything). StopIteration's kind and non-Exceptions are
    ProgramError: raised into a test's own loop (`all(map(candidate, cases))`) a StopIteration would end the loop
    early and pass the test (PEP 479 turns it into a RuntimeError in a generator for the same reason)."""
    module, qualname = named
    found = sys.modules.get(module) if module.split(".")[0] in _STDLIB else None
    for part in qualname.split(".") if found is not None else ():
        found = getattr(found, part, None) if part.isidentifier() else None
    if not isinstance(found, type) or not issubclass(found, BaseException):
        return None
    usable = issubclass(found, Exception) and not issubclass(found, (StopIteration, StopAsyncIteration))
    return found if usable else ProgramError


_STDLIB = sys.stdlib_module_names | {"builtins"}


def _made(cls: type, args: tuple | None, message: str) -> Exception:
    """An instance of `cls` with the program's args (its message alone when they were not plain), built by the
    class's own constructor where the args fit it."""
    args = (message,) if args is None else args
    try:
        return cls(*args)
    except Exception:  # noqa: BLE001 - a constructor that wants other arguments (UnicodeDecodeError's five)
        exc = cls.__new__(cls)
        exc.args = args
        return exc
