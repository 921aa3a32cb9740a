"""The ``xlacli`` application and its one error boundary."""

from __future__ import annotations

import functools
import signal
import sys
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand

from xlacli import __version__
from xlacli.capture.signals import exit_on_sigterm
from xlacli.cli.usage import ClickError, NoArgsIsHelp, command_line_error
from xlacli.errors import EXIT_INTERRUPTED, XlacliError, internal_error

app = typer.Typer(
    name="xlacli",
    help="Compile, explain and profile PyTorch models on PyTorch/XLA.",
    no_args_is_help=True,
    # typer's standard --install-completion and --show-completion.
    add_completion=True,
    # Click's own help layout: it wraps and never crops an option's name at
    # 80 columns (rich's panels did), and reads no markup in help texts,
    # which name [tool.xlacli] literally.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def print_error(error: XlacliError) -> None:
    """``render.console.print_error``, imported when an error is printed: rich
    costs ~0.1 s to import, which a run pays before its child starts otherwise."""
    from xlacli.render.console import print_error as print_rich_error

    print_rich_error(error)


def error_boundary(command: Callable[..., int | None]) -> Callable[..., None]:
    """Turn a command's return code and expected errors into typer exits.

    Expected failures (``XlacliError``) become one line on stderr and their
    exit code; anything else is a bug in xlacli: one line too, exit 5, its
    traceback kept in a file the line names (``errors.internal_error``).
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            code = command(*args, **kwargs)
        except XlacliError as error:
            print_error(error)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            print("xlacli: interrupted", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except (typer.Exit, typer.Abort, ClickError):
            raise
        except Exception as error:  # a bug in xlacli: still one line and an exit code
            bug = internal_error(error, f"running `{command.__name__.removesuffix('_command')}`")
            print_error(bug)
            raise typer.Exit(bug.exit_code) from None
        if code:
            raise typer.Exit(code)

    return wrapper


def _version_callback(value: bool) -> None:
    if value:
        print(f"xlacli {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version."
    ),
) -> None:
    """Compile, explain and profile PyTorch models on PyTorch/XLA."""


class _PlainUsage(TyperCommand):
    """Usage lines as the README writes them: ``diff-hlo LEFT RIGHT``, not typer's
    ``{LEFT} {RIGHT}`` for required arguments."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


def _register() -> tuple[str, ...]:
    # Command modules are imported here, not at their definition, so that each
    # stays a plain function that tests can call without the typer app.
    from xlacli.cli import check as check_cmd
    from xlacli.cli import compile as compile_cmd
    from xlacli.cli import diff_hlo, options
    from xlacli.cli import profile as profile_cmd
    from xlacli.cli import report as report_cmd
    from xlacli.cli import runs as runs_cmd

    script_settings = options.SCRIPT_ARGS_SETTINGS
    commands: list[tuple[str, Callable[..., int | None], dict[str, Any], tuple[str, ...]]] = [
        (
            "compile",
            compile_cmd.compile_command,
            script_settings,
            (
                "xlacli compile examples/dynamic_shapes.py --steps 4",
                "xlacli compile train.py --steps 20 -- --lr 0.1",
            ),
        ),
        (
            "profile",
            profile_cmd.profile_command,
            script_settings,
            (
                "xlacli profile examples/mlp.py --steps 20",
                "xlacli profile examples/transformer.py --mode both --steps 20",
            ),
        ),
        (
            "check",
            check_cmd.check_command,
            script_settings,
            (
                "xlacli check examples/mlp.py --baseline base.json --update-baseline",
                "xlacli check --junit check.xml --github",
            ),
        ),
        (
            "report",
            report_cmd.report_command,
            {},
            ("xlacli report", "xlacli report .xlacli/runs/mlp-20260101-120000 --output run.html"),
        ),
        (
            "runs",
            runs_cmd.runs_command,
            {},
            ("xlacli runs", "xlacli runs --keep 10 --remove-failed"),
        ),
        (
            "diff-hlo",
            diff_hlo.diff_hlo_command,
            {},
            (
                "xlacli diff-hlo RUN 28af78c9 51cb4b5d",
                "xlacli diff-hlo runs/plain runs/ckpt --details",
            ),
        ),
    ]
    for name, command, settings, examples in commands:
        app.command(
            name, cls=_PlainUsage, context_settings=settings, epilog=options.epilog(*examples)
        )(error_boundary(command))
    return tuple(name for name, *_ in commands)


COMMAND_NAMES = _register()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code.

    SIGTERM outside a capture ends xlacli at once (exit 130); during a
    capture, ``capture.signals`` takes SIGINT and SIGTERM over to stop the
    child first and keep the partial report.
    """
    previous = exit_on_sigterm()
    words = _spelt_out(argv)
    try:
        code = app(args=words, prog_name="xlacli", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except NoArgsIsHelp as help_page:  # bare `xlacli`: the help
        help_page.show()  # type: ignore[attr-defined]
        return int(help_page.exit_code)  # type: ignore[attr-defined]
    except ClickError as error:  # a bad flag or command: one line, exit 2
        print_error(command_line_error(error, words, COMMAND_NAMES))
        return int(getattr(error, "exit_code", 2))
    except typer.Abort:
        print("xlacli: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except KeyboardInterrupt:  # before a command started (typer builds its commands)
        print("xlacli: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _spelt_out(argv: list[str] | None) -> list[str]:
    """What a newcomer types for help and the version, as the options they are:
    ``xlacli help compile`` is ``xlacli compile --help``, ``xlacli version`` is
    ``xlacli --version``."""
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["help"]:
        return [*words[1:2], "--help"]
    if words == ["version"]:
        return ["--version"]
    return words
