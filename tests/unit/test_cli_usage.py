"""Click's usage errors as xlacli's one line, exit 2 (issue 27: bad flags)."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize(
    ("argv", "option", "shown"),
    [
        (["compile", "train.py", "--epochs", "1"], "--epochs", "compile train.py -- --epochs 1"),
        (
            ["profile", "train.py", "--epochs", "1", "--steps", "2"],
            "--epochs",
            "xlacli profile train.py --steps 2 -- --epochs 1",
        ),
        (
            ["compile", "train.py", "--lr=0.1", "--", "--epochs", "1"],
            "--lr",
            "xlacli compile train.py -- --epochs 1 --lr=0.1",
        ),
        (
            ["check", "-m", "pkg.train", "--config", "a b.yaml"],
            "--config",
            "-- --config 'a b.yaml'",
        ),
    ],
)
def test_a_scripts_arguments_before_the_double_dash_are_shown_after_it(capsys, argv, option, shown):
    """Issue 38: ``xlacli compile train.py --epochs 1`` said "no such option:
    --epochs (did you mean --nproc, --steps?)"."""
    assert main(argv) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"xlacli: error: no such option: {option} "), first
    assert "a script's own arguments go after --: " in first and shown in first, first
    assert "did you mean" not in first


def test_a_typo_of_our_own_flag_is_still_named_beside_a_script(capsys):
    assert main(["compile", "train.py", "--stpes", "3"]) == 2
    assert "(did you mean --steps?)" in capsys.readouterr().err


def test_a_command_that_runs_no_script_says_nothing_of_scripts(capsys):
    assert main(["report", "--epochs", "1"]) == 2
    assert "script" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["compile", "profile", "check"])
def test_steps_no_run_could_reach_are_refused(capsys, command):
    """Issue 34: 10**23 steps was taken, and printed back float-rounded."""
    assert main([command, "model.py", "--steps", "99999999999999999999999"]) == 2
    err = capsys.readouterr().err
    assert "--steps" in err and "1<=x<=1000000000" in err and "Traceback" not in err
    assert "e+" not in err and "99999999999999991611392" not in err


def test_a_bug_in_a_command_is_one_line_and_exit_5(capsys, monkeypatch, tmp_path):
    """Anything else than an expected error is a bug in xlacli: one line, exit 5,
    its traceback in a file the line names, never on the terminal."""
    from xlacli import api

    def broken(*args, **kwargs):
        raise KeyError("an injected bug")

    monkeypatch.setattr(api, "list_runs", broken)
    monkeypatch.chdir(tmp_path)
    code = main(["runs"])
    err = capsys.readouterr().err
    assert code == 5, err
    assert "xlacli: error: xlacli failed while running `runs`: KeyError" in err
    assert "Traceback" not in err
    kept = err.split("its traceback is in ")[1].split(":")[0].strip()
    assert "an injected bug" in Path(kept).read_text()
