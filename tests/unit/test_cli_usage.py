"""Click's usage errors as xlacli's one line, exit 2 (issue 27: bad flags)."""

from __future__ import annotations

import pytest

from xlacli.cli.main import main


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["compile", "m.py", "--stpes", "3"], "no such option: --stpes (did you mean --steps?)"),
        (["compil", "m.py"], "no such command 'compil' (did you mean 'compile'?)"),
        (
            ["compile", "m.py", "--mode", "lazzy"],
            "'lazzy' is not one of 'lazy', 'dynamo', 'both' (did you mean lazy?)",
        ),
        (["compile", "m.py", "--steps", "many"], "'many' is not a whole number"),
        (["report", "--format", "xml"], "'xml' is not one of"),
        (["diff-hlo", "a.txt"], "missing argument 'RIGHT'"),
    ],
)
def test_a_bad_flag_or_command_is_one_line_and_exit_2(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    first, *rest = err.splitlines()
    assert first.startswith("xlacli: error: ") and words in first, err
    assert rest and rest[-1].startswith("hint: `xlacli") and "--help` shows the usage" in rest[-1]
    assert "Usage:" not in err and "Try '" not in err and "Traceback" not in err


def test_help_and_version_still_exit_0(capsys):
    assert main(["compile", "--help"]) == 0
    assert "Usage: xlacli compile" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("xlacli ")


def test_no_arguments_shows_the_help(capsys):
    code = main([])
    captured = capsys.readouterr()
    assert "Usage: xlacli" in captured.out + captured.err
    assert code in (0, 2)


def test_help_and_version_as_words(capsys):
    assert main(["help", "diff-hlo"]) == 0
    assert "Usage: xlacli diff-hlo" in capsys.readouterr().out
    assert main(["help"]) == 0
    assert "Commands" in capsys.readouterr().out
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith("xlacli ")
