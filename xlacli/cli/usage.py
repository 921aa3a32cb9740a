"""Click's own usage errors (a misspelt flag or command, a missing argument, a
value of the wrong type) as xlacli's one line and hint, exit 2 like every usage
error, instead of click's four lines of usage, "Try ...", a blank and "Error:"."""

from __future__ import annotations

import re
import shlex
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
# Commands that pass a script its own arguments, after ``--``.
_SCRIPT_COMMANDS = ("xlacli compile", "xlacli profile", "xlacli check")
_NO_SUCH_OPTION = re.compile(r"^no such option: (?P<option>\S+)")
# How close a flag must be to one of ours to be a typo of it rather than the script's.
_TYPO_CUTOFF = 0.75
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
    path = _command_path(error, argv, commands)
    script_flag = _script_argument(message, suggestion, path, argv or [])
    if script_flag is not None:
        return UsageError(script_flag, hint=f"`{path} --help` shows the usage")
    if suggestion is not None:
        message = (
            message[: suggestion.start()].rstrip(" .") + f" (did you mean {suggestion['what']}?)"
        )
    else:
        message = message.rstrip(".")
    for said, plainer in _PLAINER.items():
        message = message.replace(said, plainer)
    message = message[:1].lower() + message[1:] + _closest_choice(message)
    wrong_out = _RUN_FOLDER_OPTION.match(message)
    if wrong_out is not None and path in ("xlacli report", "xlacli diff-hlo"):
        message = (
            f"{wrong_out[1]} (did you mean --output FILE? -o and --out name the run "
            "folder compile, profile and check create)"
        )
    return UsageError(message, hint=f"`{path} --help` shows the usage")


def _script_argument(
    message: str, suggestion: re.Match[str] | None, path: str, argv: list[str]
) -> str | None:
    """For a flag none of ours is close to, given to a command that runs scripts
    (``xlacli compile train.py --epochs 1``): the message saying a script's own
    arguments go after ``--``, with the command that does so; else None."""
    unknown = _NO_SUCH_OPTION.match(message[:1].lower() + message[1:])
    if unknown is None or path not in _SCRIPT_COMMANDS:
        return None
    option = unknown["option"].rstrip(".")
    ours = re.findall(r"--?[\w-]+", suggestion["what"]) if suggestion is not None else []
    import difflib

    if difflib.get_close_matches(option, ours, 1, _TYPO_CUTOFF):
        return None  # a typo of one of ours: click's "did you mean" says it
    return (
        f"no such option: {option} (a script's own arguments go after --: "
        f"{_with_script_arguments(argv, option)})"
    )


def _with_script_arguments(argv: list[str], option: str) -> str:
    """The command typed, with the unknown flag and the values after it moved
    behind ``--`` (after the script's arguments already there)."""
    name = option.split("=")[0]
    at = next((i for i, word in enumerate(argv) if word.split("=")[0] == name), None)
    if at is None:
        return "xlacli " + " ".join(argv)
    end = at + 1
    while end < len(argv) and not argv[end].startswith("-"):
        end += 1
    moved, rest = argv[at:end], argv[:at] + argv[end:]
    if "--" not in rest:
        rest.append("--")
    words = [*rest, *moved]
    return "xlacli " + " ".join(shlex.quote(word) for word in words)


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
