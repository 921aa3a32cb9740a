"""Click's own usage errors (a misspelt flag or command, a missing argument, a
value of the wrong type) as xlacli's one line and hint, exit 2 like every usage
error, instead of click's four lines of usage, "Try ...", a blank and "Error:"."""

from __future__ import annotations

import re
from typing import Any

from xlacli.errors import UsageError

try:  # typer 0.28 carries a click of its own
    from typer._click import exceptions as _click_errors
except ImportError:  # older typer runs on click itself
    from click import exceptions as _click_errors  # type: ignore[no-redef]

ClickError: type[Exception] = _click_errors.ClickException


class _NeverRaised(Exception):
    """Stands for an error this click does not have."""


# A bare `xlacli` raises it to print the help page (click 8.2 and later).
NoArgsIsHelp: type[Exception] = getattr(_click_errors, "NoArgsIsHelpError", _NeverRaised)

# Click's suggestion, "No such option: --stpes Did you mean --steps?", and typer's
# for commands, "No such command 'compil'. Did you mean 'compile'?".
_SUGGESTION = re.compile(r"\.?\s*\(?(?:Did you mean|Possible options:) (?P<what>.+?)\??\)?$")
# -o/--out given to a command that writes a file (--output), not a run folder.
_RUN_FOLDER_OPTION = re.compile(r"^(no such option: (?:-o|--out))\b")
# "'lazzy' is not one of 'lazy', 'dynamo', 'both'": the value and the choices.
_CHOICE = re.compile(r"'(?P<value>[^']*)' is not one of (?P<choices>'.*')")
# Click's words for a number that is none.
_PLAINER = {
    "is not a valid int range": "is not a whole number",
    "is not a valid integer": "is not a whole number",
}


def command_line_error(
    error: Any, argv: list[str] | None = None, commands: tuple[str, ...] = ()
) -> UsageError:
    """The error, worded as xlacli's, with the help page to read as its hint."""
    message = error.format_message().strip()
    suggestion = _SUGGESTION.search(message)
    if suggestion is not None:
        message = (
            message[: suggestion.start()].rstrip(" .") + f" (did you mean {suggestion['what']}?)"
        )
    else:
        message = message.rstrip(".")
    for said, plainer in _PLAINER.items():
        message = message.replace(said, plainer)
    message = message[:1].lower() + message[1:] + _closest_choice(message)
    path = _command_path(error, argv, commands)
    wrong_out = _RUN_FOLDER_OPTION.match(message)
    if wrong_out is not None and path in ("xlacli report", "xlacli diff-hlo"):
        message = (
            f"{wrong_out[1]} (did you mean --output FILE? -o and --out name the run "
            "folder compile, profile and check create)"
        )
    return UsageError(message, hint=f"`{path} --help` shows the usage")


def _command_path(error: Any, argv: list[str] | None, commands: tuple[str, ...]) -> str:
    """``xlacli compile`` for an error in compile's options (from the error's
    context, else from the words typed), else ``xlacli``."""
    context = getattr(error, "ctx", None)
    if context is not None and context.parent is not None:
        return str(context.command_path)
    command = next((word for word in argv or () if not word.startswith("-")), None)
    return f"xlacli {command}" if command in commands else "xlacli"


def _closest_choice(message: str) -> str:
    """`` (did you mean lazy?)`` for a choice one typo away, else ""."""
    import difflib

    choice = _CHOICE.search(message)
    if choice is None:
        return ""
    choices = re.findall(r"'([^']*)'", choice["choices"])
    close = difflib.get_close_matches(choice["value"], choices, 1, 0.6)
    return f" (did you mean {close[0]}?)" if close else ""
