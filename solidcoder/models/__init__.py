"""The model layer: one small `Model` interface over API providers, OpenAI-compatible servers and llama.cpp.

Import backends from their modules; this package only re-exports the shared types, so importing it stays cheap.
"""

from solidcoder.errors import BudgetExceeded, ModelError, ModelFatalError
from solidcoder.models.base import Budget, BudgetConfig, Completion, Message, Model

__all__ = [
    "Budget",
    "BudgetConfig",
    "BudgetExceeded",
    "Completion",
    "Message",
    "Model",
    "ModelError",
    "ModelFatalError",
]
