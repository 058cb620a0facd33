"""Every exception type the layers share: the stop causes are types, and no code reads a message to decide.

* `BadInput`: anything the user gave us that we cannot use (missing file, malformed problem, unknown dataset,
  broken template, bad flag). The CLI turns it into a one-line message and exit code 2, before any paid call.
* `ModelError`: the model could not answer (after retries). `ModelFatalError`: retrying cannot help.
  `BudgetExceeded`: a run-wide cap was reached, the run stops. `ProblemBudgetExceeded`: one problem used its
  `--max-calls`; its strategy answers with what it has and the run goes on.
* `InfrastructureError`: a failure outside the candidate; what it stopped is not scored, a bench unit is retried.
  `InternalError`: any exception no layer expected, as one unit's infrastructure error (never the run's end).
  `SandboxFailure` is the one sandbox failure: a worker that would not start, a run whose setup failed, a
  training batch with too many of those.
* `UnreadableCode` (a `SyntaxError`) and `UnreadableText` (a `ValueError`): untrusted text past `parsing.py`'s bounds
  on size or nesting; callers treat them as they treat code or data that does not parse.
"""

from __future__ import annotations


class BadInput(Exception):
    """The user's input is unusable; the message names the problem in one line."""


class ModelError(Exception):
    """The model could not answer (after retries); the message says what happened and what to do."""


class ModelFatalError(ModelError):
    """Retrying cannot help: bad credentials, a malformed request, a prompt longer than the context window."""


class BudgetExceeded(ModelError):
    """A run-wide cap on calls, tokens or cost was reached; the run should stop."""


class ProblemBudgetExceeded(BudgetExceeded):
    """This problem used its `--max-calls`; strategies answer with their best code so far, the run goes on."""


class InfrastructureError(Exception):
    """A failure outside the candidate (the sandbox, not the program); the unit is retried on resume."""


class SandboxFailure(InfrastructureError):
    """The sandbox itself failed: never the program's verdict."""


class InternalError(InfrastructureError):
    """An exception no layer expected (a bug, or an input no bound caught), as one unit's infrastructure error: one
    line naming the exception and the innermost solidcoder line it came from. It ends that unit, never the run."""

    @classmethod
    def of(cls, exc: BaseException) -> InternalError:
        tb, where = exc.__traceback__, ""
        while tb is not None:
            path = tb.tb_frame.f_code.co_filename.replace("\\", "/")
            if "/solidcoder/" in path:
                where = f" (at {path.rsplit('/solidcoder/', 1)[1]}:{tb.tb_lineno})"
            tb = tb.tb_next
        first = (str(exc).splitlines() or [""])[0][:300]
        return cls(f"unexpected {type(exc).__name__}: {first}{where}")


class UnreadableCode(SyntaxError):
    """Python source or a tree past the parse bounds (size, nesting): read as a program that does not parse."""


class UnreadableText(ValueError):
    """JSON or other data text past the parse bounds (size, nesting): read as text that does not decode."""
