"""How the command line's help reads: as the docs write it (`Command`, `_readable`): `-h` or `--help` on every
command, `solve [OPTIONS] PROBLEM`, `--workers N`, a flag with nothing after it; and the one place where `BadInput`
becomes one line on stderr and exit code 2 (`Commands`)."""

from __future__ import annotations

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from solidcoder.errors import BadInput
from solidcoder.escaping import one_line

VALUE_NAMES = {"int": "N", "integer": "N", "integer range": "N", "float": "NUMBER", "float range": "NUMBER",
               "path": "PATH"}
HELP = {"help_option_names": ["-h", "--help"]}  # context settings: children inherit them

class _Argument(TyperArgument):
    """A positional argument as the docs write it: `PROBLEM` (`[PROBLEM]` when optional), no type beside it."""

    def _usage_display_name(self) -> str:
        return self.display_name_raw if self.required else f"[{self.display_name_raw}]"

    def display_type_rich(self, ctx) -> None:
        return None


def _readable(params: list) -> None:
    """Name each argument in capitals (`RUN_DIR...`), each option's value by its kind unless the option names it
    (`--workers N`, `--model [ROLE=]MODEL`), and nothing after a flag; typer would write `{problem}`, `<bool>`."""
    for param in params:
        if isinstance(param, TyperArgument):
            param.__class__ = _Argument  # a subclass that only changes how help shows it
            param.metavar = param.metavar or param.name.upper() + ("..." if param.nargs != 1 else "")
        elif param.metavar is None:
            param.metavar = "" if param.is_flag else VALUE_NAMES.get(_kind(param), "TEXT")


def _kind(param) -> str:
    """The option's click type name (typer up to 0.2x), or its annotation's (later typer keeps the annotation)."""
    if getattr(param, "type", None) is not None:
        return param.type.name
    described = param.type_descriptor
    return "path" if described.is_path else getattr(described.annotation, "__name__", "")


class _ReadableHelp:
    """Mixin for commands and groups: their parameters and their help option shown as `_readable` names them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _readable(self.params)

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        _readable([option] if option is not None else [])
        return option


class Command(_ReadableHelp, TyperCommand):
    """Every command's class (`@app.command(cls=Command)`): readable help."""


class Commands(_ReadableHelp, TyperGroup):
    """The command groups: readable help, and `BadInput` raised anywhere below becomes one line on stderr and exit
    code 2. The message may quote a file, a run directory or a program: its control characters and newlines are
    shown as escapes (`one_line`)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BadInput as exc:
            typer.echo(f"error: {one_line(str(exc))}", err=True)
            raise typer.Exit(2) from None
