"""`solidcoder prompts`: list, show, export and check the prompt templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from solidcoder.cli.help import Command, Commands
from solidcoder.cli.options import PromptsDir
from solidcoder.wording import counted

prompts_app = typer.Typer(cls=Commands, no_args_is_help=True,
                          help="List, show and export the prompt templates.\n\n"
                          "Example: solidcoder prompts export my_prompts")


# Who renders a template besides the strategies (`make_strategy(name).templates`, listed by name): a command, or a
# strategy's option that adds a template of its own.
OTHER_USES = {
    "strategies/direct": ("solve --prerank",),
    "strategies/direct_qwen": ("solve --prerank",),
    "refinements/generated_tests": ("solve --selector agreement",),
    "tasks/trace_output": ("bench --dataset cruxeval",),
    "tasks/trace_variable": ("bench --dataset cruxeval-vars",),
    "train/code": ("train coderl+",),
    "train/alignment": ("train coderl+",),
    "train/alignment_released": ("train coderl+ (released variant)",),
    "verify/orm": ("train orm", "rank --orm", "solve --selector orm"),
}
OPTIONS = ("solidcoder-routed:oracle=shared", "solidcoder-routed:selector=agreement", "solidcoder-routed:guard=tests")


@prompts_app.command("list", cls=Command)
def prompts_list(prompts: PromptsDir = None) -> None:
    """List every template and which strategies and commands render it; an override (a template read from
    --prompts, $SOLIDCODER_PROMPTS or the user's config directory, not the built-in one) is marked `*` and its file
    listed below the table.

    Example: solidcoder prompts list --prompts my_prompts
    """
    from rich.console import Console

    from solidcoder.prompting import PromptLibrary

    sources, console = PromptLibrary.from_env(prompts).sources(), Console(highlight=False)
    with console.capture() as captured:
        console.print(_uses_table(sources, template_uses(), console.width))
    typer.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))
    for src in (s for s in sources if s.origin != "built-in"):
        typer.echo(f"* {src.name} ({src.origin}): {src.path}")


def template_uses() -> dict[str, list[str]]:
    """Template name -> what renders it: each strategy (solidcoder-routed's loop only as `:max_tier=2`, its tier 2),
    each strategy option that adds a template, then `OTHER_USES`."""
    from solidcoder.strategies import make_strategy, strategy_names

    routed = make_strategy("solidcoder-routed")
    uses: dict[str, list[str]] = {}
    for name in strategy_names():
        for template in make_strategy(name).templates:
            tier2 = name == "solidcoder-routed" and template in routed.full.templates
            uses.setdefault(template, []).append(f"{name}:max_tier=2" if tier2 else name)
    for option in OPTIONS:
        for template in set(make_strategy(option).templates) - set(routed.templates):
            uses.setdefault(template, []).append(option)
    for template, users in OTHER_USES.items():
        uses.setdefault(template, []).extend(users)
    return uses


def _uses_table(sources, uses: dict[str, list[str]], width: int):
    """Two columns; a template's users go one a line when they do not fit on one, so that none is broken."""
    from rich.table import Table

    room = width - 2 - max((len(src.name) + 1 for src in sources), default=0)

    table = Table(box=None, padding=(0, 2, 0, 0), caption_justify="left",
                  caption="solve runs solidcoder-routed unless --strategy NAME: strategies/direct (tiers 0 and 1); "
                          "its tier 2, the paper/ loop, runs only with :max_tier=2 or a loop flag (--plans, ...).")
    table.add_column("template", no_wrap=True)
    table.add_column("used by")
    for src in sources:
        mark = "" if src.origin == "built-in" else "*"
        users = uses.get(src.name, ["nothing built in"])
        table.add_row(f"{src.name}{mark}", ", ".join(users) if len(", ".join(users)) <= room else "\n".join(users))
    return table


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
    typer.echo(f"wrote {counted(len(written), 'template')} under {dest}; use them with --prompts {dest}")


@prompts_app.command("check", cls=Command)
def prompts_check(prompts: PromptsDir = None) -> None:
    """Render every template with placeholder values and split it into messages; exit 2 naming the file (and line)
    of the first error: an unknown variable, a syntax error, a missing '=== user ===' or a malformed header.

    Example: solidcoder prompts check --prompts my_prompts
    """
    from solidcoder.prompting import PromptLibrary, check_templates

    names = check_templates(PromptLibrary.from_env(prompts))
    typer.echo(f"{counted(len(names), 'template')} render")
