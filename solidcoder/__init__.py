"""solidcoder: make language models write correct code by executing instead of imagining."""

__version__ = "0.1.0"
