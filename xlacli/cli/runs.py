"""``xlacli runs``: the saved runs by name (newest first), and removing old ones."""

from __future__ import annotations

from typing import Annotated

import typer


def runs_command(
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep",
            min=0,
            metavar="N",
            help="Remove all but the newest N runs.",
            show_default=False,
        ),
    ] = None,
    failed: Annotated[
        bool, typer.Option("--remove-failed", help="Remove the runs that failed or never finished.")
    ] = False,
) -> int:
    """List the runs under .xlacli/runs: name, command, verdict and age, newest
    first; any of them is `xlacli report NAME`. --keep and --remove-failed
    delete run folders (only folders xlacli made)."""
    from rich.markup import escape

    from xlacli import api
    from xlacli.paths import display_path
    from xlacli.render.console import plain_table, print_message, print_trimmed, stdout_console
    from xlacli.units import format_age

    folder = api.runs_folder()
    entries = api.list_runs(folder)
    if keep is not None or failed:
        removed = api.remove_runs(keep, failed=failed, runs=entries)
        for entry in removed:
            print_message(f"removed {escape(display_path(entry.path))}")
        print_message(f"{len(removed)} removed, {len(entries) - len(removed)} kept")
        return 0
    if not entries:
        print_message(f"no run yet in {escape(display_path(folder))}")
        return 0
    table = plain_table(("run", "left"), ("command", "left"), ("verdict", "left"), ("age", "right"))
    for entry in entries:
        style = "red" if entry.failed else ""
        table.add_row(
            entry.name,
            entry.command,
            f"[{style}]{escape(entry.verdict)}[/]" if style else escape(entry.verdict),
            format_age(entry.age_s),
        )
    print_trimmed(stdout_console(), table)
    return 0
