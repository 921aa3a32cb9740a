"""``xlacli profile`` on examples written for issue 22: a script that drives
torch_xla's profiler itself, a script whose steps wait on the device, and a
transformer training step whose device time lands on the user's lines. Every
command the summary suggests is run as printed; the step and op times agree
with xprof's own converters on the same xplane."""

from __future__ import annotations

import dataclasses
import io
import json
import shlex
from pathlib import Path

import pytest
from rich.console import Console

from tests.conftest import REPO, run_cli
from xlacli.analysis.profile.host_split import tracing_note
from xlacli.analysis.profile.host_timeline import HOST_ROWS
from xlacli.analysis.profile.intervals import union
from xlacli.analysis.profile.summary import op_times_from_trace
from xlacli.parse.trace_events import parse_trace_events, read_trace_file
from xlacli.parse.xprof_tools import table_rows, tool_data
from xlacli.render.profile import ProfileView
from xlacli.render.view import show
from xlacli.report.profile import load_summary

pytestmark = pytest.mark.e2e
DECODER = REPO / "examples" / "decoder_lm.py"


def profile_json(out: Path, *args: str, live: bool = False) -> dict:
    result = run_cli(
        "profile", *args[:1], "--out", out, "--format", "json", *args[1:], cwd=REPO, live=live
    )
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def run_as_printed(command: str):
    """A command xlacli printed, run as a user pastes it (``xlacli`` is this checkout's)."""
    words = shlex.split(command)
    assert words[0] == "xlacli", command
    return run_cli(*words[1:], cwd=REPO, timeout=600)


@pytest.fixture(scope="module")
def self_profiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("self") / "run"
    script = "examples/scripts/train_self_profiled.py"
    args = ("--steps", "4", "--warmup", "2", "--", "--steps", "8", "--seconds", "1")
    # Live: the capture path of a script that runs torch_xla's profiler itself
    # (the child's window stands aside: child/profiler.py).
    return profile_json(out, script, *args, live=True)


def test_a_script_profiling_itself_gets_the_profiler(self_profiled):
    summary = self_profiled
    assert summary["stood_aside"] == "xp.trace_detached"
    assert any("stood aside" in note for note in summary["notes"])
    # Still the steps (by the child's clock) and the graphs they ran.
    assert summary["steps"] >= 4 and summary["step_time_s"]["p50"] > 0
    assert summary["graphs"] and summary["graphs"][0]["executions"] >= 3
    # Exactly the clocked steps' executions (one graph a step): not the warm-up's,
    # and none lagging into the next step (each clocked step waits for its device).
    assert summary["graphs"][0]["executions"] == summary["steps"]


def test_a_script_starting_its_trace_inside_the_window_keeps_the_steps_before(tmp_path):
    """torch_xla's own advice: start the trace after the compiles (step 4 here,
    inside xlacli's window): xlacli's trace of steps 2 and 3 is written first."""
    args = ("--steps", "6", "--warmup", "2", "--", "--steps", "8", "--seconds", "1")
    script = "examples/scripts/train_self_profiled.py"
    summary = profile_json(tmp_path / "run", script, *args, "--trace-at-step", "4")
    assert summary["stood_aside"] == "xp.trace_detached"
    assert any("stopped its trace there" in note for note in summary["notes"])
    assert summary["steps"] == 2 and summary["trace_files"]
    timeline = summary["breakdown"]
    assert sum(timeline[row] for row in HOST_ROWS) == pytest.approx(timeline["window_s"])


def test_compile_still_runs_the_self_profiling_script():
    result = run_cli(
        "compile",
        "examples/scripts/train_self_profiled.py",
        "--",
        "--steps",
        "4",
        "--seconds",
        "1",
        cwd=REPO,
    )
    assert result.code == 0, result.stderr


@pytest.fixture(scope="module")
def reads_loss(tmp_path_factory):
    """No warm-up: the compile lands inside the window, and the summary says
    which command explains it."""
    out = tmp_path_factory.mktemp("reads") / "run"
    script = "examples/scripts/train_reads_loss.py"
    return out, profile_json(out, script, "--steps", "5", "--warmup", "0", "--", "--steps", "6")


def test_host_rows_sum_to_the_window(reads_loss):
    _, summary = reads_loss
    timeline = summary["breakdown"]
    window = timeline["window_s"]
    assert sum(timeline[row] for row in HOST_ROWS) == pytest.approx(window, rel=1e-9)
    assert all(0 <= timeline[row] <= window for row in HOST_ROWS)
    assert timeline["device_wait_s"] > 0  # each `loss.item()` waits for its graph
    assert timeline["compile_s"] > 0  # no warm-up
    assert 0 < timeline["device_busy_s"] <= window
    assert 0 <= timeline["overlap_s"] <= timeline["device_busy_s"]


def test_no_op_is_counted_twice(reads_loss):
    """On each thread the ops' self times add up to the time an op ran."""
    run, summary = reads_loss
    events = read_trace_file(next(run.rglob("*.trace.json.gz")))
    threads = {e.thread for e in events if "hlo_op" in e.args}
    for thread in threads:
        ops = [e for e in events if e.thread == thread and "hlo_op" in e.args]
        busy = sum(b - a for a, b in union((e.start_s, e.end_s) for e in ops))
        assert sum(t for *_, t, _ in op_times_from_trace(ops)) == pytest.approx(busy, rel=1e-6)
    names = [op["name"] for op in summary["top_ops"]]
    assert len(names) == len(set(names))


def test_the_suggested_compile_command_runs_as_printed(reads_loss):
    _, summary = reads_loss
    note = next(n for n in summary["notes"] if "inside the profiled window" in n)
    command = note.rpartition("explained: ")[2]
    assert command.endswith("-- --steps 6")  # the script's own arguments kept
    assert run_as_printed(command).code == 0


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    out = tmp_path_factory.mktemp("decoder") / "run"
    return out, profile_json(
        out, "examples/decoder_lm.py", "--train", "--steps", "4", "--warmup", "2"
    )


def line_of(text: str) -> int:
    return 1 + DECODER.read_text().splitlines().index(text)


def test_device_time_lands_on_the_users_lines(decoder):
    _, summary = decoder
    assert summary["line_share"] >= 0.9
    lines = {row["line"].rpartition("/")[2]: row for row in summary["lines"]}
    ff = lines[f"decoder_lm.py:{line_of('        x = x + self.ff(self.norm2(x))')}"]
    assert ff["forward_s"] > 0 and ff["backward_s"] > 0  # backward ops at their forward line
    # Every op at a user line: a copy XLA adds of a weight the step updates in place
    # is at the update's line; a copy of an input no output overwrites reads no op of
    # the user's (it reaches the top ops only when the machine's load shifts timings).
    assert all(op["user_line"] or op["kind"] == "copy" for op in summary["top_ops"])
    assert any(op["backward"] for op in summary["top_ops"])


def test_the_comparison_command_runs_as_printed(decoder):
    _, summary = decoder
    command = summary["compare_command"]
    assert "--train" in command and "--mode both" in command
    assert run_as_printed(command).code == 0


def test_the_advice_keeps_its_command_on_one_line_at_80_columns(decoder, monkeypatch):
    run, summary_json = decoder
    summary = load_summary(run)
    split = {"tracing_share": 0.8, "ops_per_step": 400.0}
    advised = dataclasses.replace(
        summary, tracing_advice=tracing_note(split, "lazy", summary.compare_command)
    )
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, highlight=False, soft_wrap=False)
    show(ProfileView(advised), "text", console)
    assert summary_json["compare_command"] in buffer.getvalue().splitlines()


def test_step_and_op_times_agree_with_xprof(decoder):
    run, summary = decoder
    xplane = next(run.rglob("*.xplane.pb"))
    log = run / "xprof-test.log"
    steps = {
        row["stepnum"]: row["stepTimeMs"] / 1e3
        for row in table_rows(tool_data(xplane, "overview_page", log))
        if str(row.get("stepnum", "")).startswith("xlacli_step ")
    }
    ours = {
        f"xlacli_step {summary['warmup'] + i}": t for i, t in enumerate(summary["step_times_s"])
    }
    shared = sorted(set(steps) & set(ours))
    assert shared  # xprof leaves out the steps it cannot bound
    for step in shared:
        assert ours[step] == pytest.approx(steps[step], rel=0.05), step
    xprof_ops = {
        op: seconds
        for _, op, seconds, _ in op_times_from_trace(
            parse_trace_events(tool_data(xplane, "trace_viewer", log))
        )
    }
    for op in summary["top_ops"][:5]:
        assert op["time_s"] == pytest.approx(xprof_ops[op["name"]], rel=0.05), op["name"]
