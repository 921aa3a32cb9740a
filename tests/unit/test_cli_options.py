"""One meaning per flag, and help pages that list defaults, exit codes and examples."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from xlacli.cli.main import app

# typer carries its own click: options are told apart by their kind's name.
COMMAND = typer.main.get_command(app)
COMMANDS = sorted(COMMAND.commands)  # type: ignore[attr-defined]


def _is_option(param: object) -> bool:
    return getattr(param, "param_type_name", "") == "option"


# Options that switch something on: absent, they have no value to show.
OFF_WHEN_ABSENT = {"module", "max_compiles", "time_budget", "junit", "keep"}


def _options() -> dict[str, dict[str, tuple[str, str]]]:
    """Per flag, per command: (the parameter's name, its help) ."""
    flags: dict[str, dict[str, tuple[str, str]]] = {}
    for name in COMMANDS:
        for param in COMMAND.commands[name].params:
            if _is_option(param):
                for flag in (*param.opts, *param.secondary_opts):
                    flags.setdefault(flag, {})[name] = (param.name or "", param.help or "")
    return flags


def test_every_flag_names_one_parameter_in_every_command():
    for flag, uses in _options().items():
        names = {parameter for parameter, _ in uses.values()}
        assert len(names) == 1, f"{flag} means {names} across {sorted(uses)}"


def test_out_is_the_run_folder_and_output_the_file_written():
    flags = _options()
    assert set(flags["-o"]) == set(flags["--out"]) == {"check", "compile", "profile"}
    assert all("Run folder" in help_ for _, help_ in flags["--out"].values())
    assert set(flags["--output"]) == {"diff-hlo", "report"}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_page_lists_defaults_exit_codes_and_two_examples(command):
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    text = result.output
    assert "Exit codes: 0 ok" in text and "2 usage error" in text
    examples = text.split("Examples:")[1].split("Exit codes")[0]
    assert sum(line.strip().startswith("xlacli ") for line in examples.splitlines()) == 2
    for placeholder in ("<str>", "<int range>", "{RUN}", "{left}", "{LEFT}", "(3)"):
        assert placeholder not in text, placeholder
    for param in COMMAND.commands[command].params:
        if _is_option(param) and not param.is_flag and param.name not in OFF_WHEN_ABSENT:
            shown = param.show_default is not False and param.default is not None
            assert shown or "[default:" in (param.help or ""), (command, param.name)


@pytest.mark.parametrize("command", ["compile", "profile", "check"])
def test_run_commands_share_steps_train_and_format(command):
    flags = _options()
    for flag in ("--steps", "--warmup", "--train", "--no-train", "--optimizer", "--format"):
        assert command in flags[flag], (command, flag)


def _said_before_default(help_: str) -> str:
    """A help text up to its shown default."""
    return help_.partition("[default:")[0]


@pytest.mark.parametrize(
    "command",
    [
        "compile",
        "profile",
        "check",
    ],
)
def test_a_default_is_said_once_in_its_brackets(command):
    """Issue 38: "A script runs to its end unless given. [default: 3]" said two
    defaults apart; where a default comes from and a script's own go inside it."""
    for param in COMMAND.commands[command].params:
        said = _said_before_default(param.help or "")
        assert "unless given" not in said and "(else " not in said, (command, param.name, said)


def test_steps_defaults_say_where_they_come_from_and_a_scripts_own():
    def help_of(command: str, name: str) -> str:
        param = next(p for p in COMMAND.commands[command].params if p.name == name)
        return " ".join((param.help or "").split())

    assert help_of("compile", "steps").endswith("[default: 3; a script runs to its end]")
    # profile stops a script after its steps as it stops a model file.
    assert help_of("profile", "steps").endswith("[default: 50]")
    from xlacli.cli.options import steps_option
    from xlacli.defaults import CHECK

    option = steps_option(CHECK, "Steps.", configured="the baseline's, else [tool.xlacli] steps")
    assert option.help == (  # type: ignore[attr-defined]
        "Steps.  [default: the baseline's, else [tool.xlacli] steps, else 5; "
        "a script runs to its end]"
    )
