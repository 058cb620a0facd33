"""`solidcoder prompts`: list, show, export and check the prompt templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solidcoder.cli.help import Command, Commands
from solidcoder.cli.options import PromptsDir

prompts_app = typer.Typer(cls=Commands, no_args_is_help=True,
                          help="List, show and export the prompt templates.\n\n"
                          "Example: solidcoder prompts export my_prompts")


@prompts_app.command("list", cls=Command)
def prompts_list(prompts: PromptsDir = None) -> None:
    """List every template and the file that wins for it.

    Example: solidcoder prompts list --prompts my_prompts
    """
    from solidcoder.prompting import PromptLibrary

    for src in PromptLibrary.from_env(prompts).sources():
        typer.echo(f"{src.name:32} {src.origin:18} {src.path}")


@prompts_app.command("show", cls=Command)
def prompts_show(
    name: Annotated[str, typer.Argument(help='Template name, e.g. "paper/code".')], prompts: PromptsDir = None
) -> None:
    """Print the template NAME as it will be used (after override lookup).

    Example: solidcoder prompts show paper/code
    """
    from solidcoder.prompting import PromptLibrary

    typer.echo(PromptLibrary.from_env(prompts).source(name).path.read_text(), nl=False)


@prompts_app.command("export", cls=Command)
def prompts_export(
    dest: Annotated[Path, typer.Argument(help="Directory to copy the templates into.")], prompts: PromptsDir = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite files in DEST that differ (edited ones).")] = False,
) -> None:
    """Copy every template into DEST, ready to edit and use with --prompts DEST; exit 2, writing nothing, when that
    would overwrite a file with other content (an edited copy) unless --force.

    Example: solidcoder prompts export my_prompts
    """
    from solidcoder.prompting import PromptLibrary

    written = PromptLibrary.from_env(prompts).export(dest, force=force)
    typer.echo(f"wrote {len(written)} templates under {dest}; use them with --prompts {dest}")


@prompts_app.command("check", cls=Command)
def prompts_check(prompts: PromptsDir = None) -> None:
    """Render every template with placeholder values and split it into messages; exit 2 naming the file (and line)
    of the first error: an unknown variable, a syntax error, a missing '=== user ===' or a malformed header.

    Example: solidcoder prompts check --prompts my_prompts
    """
    from solidcoder.prompting import PromptLibrary, check_templates

    names = check_templates(PromptLibrary.from_env(prompts))
    typer.echo(f"{len(names)} templates render")
