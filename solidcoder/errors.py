"""Every exception type the layers share: the stop causes are types, and no code reads a message to decide.

* `BadInput`: anything the user gave us that we cannot use (missing file, malformed problem, unknown dataset,
  broken template, bad flag). The CLI turns it into a one-line message and exit code 2, before any paid call.
* `ModelError`: the model could not answer (after retries). `ModelFatalError`: retrying cannot help.
  `BudgetExceeded`: a run-wide cap was reached, the run stops. `ProblemBudgetExceeded`: one problem used its
  `--max-calls`; its strategy answers with what it has and the run goes on.
* `InfrastructureError`: a failure outside the candidate; what it stopped is not scored, a bench unit is retried.
  `SandboxFailure` is the one sandbox failure: a worker that would not start, a run whose setup failed, a
  training batch with too many of those.
"""


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
