"""Per-site steady state on a train-then-evaluate script (issue 20, item 1):
the evaluation loop's first graphs are a new phase, not recompiles, and
--fail-on-recompile still fails on a real recompile in either loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO, run_cli
from tests.report_json import step_records

pytestmark = pytest.mark.e2e
SCRIPT = EXAMPLES / "scripts" / "train_eval.py"


def line_of(fragment: str) -> str:
    for number, line in enumerate(SCRIPT.read_text().splitlines(), start=1):
        if fragment in line:
            return f"{SCRIPT}:{number}"
    raise AssertionError(fragment)


def compile_json(out: Path, *args: str) -> tuple[int, dict, str]:
    result = run_cli(
        "compile", SCRIPT, "--out", out, "--format", "json", "--fail-on-recompile", "--", *args,
        cwd=REPO,
    )  # fmt: skip
    return result.code, json.loads(result.stdout), result.stderr


@pytest.fixture(scope="module")
def clean(capture_once) -> tuple[int, dict, str]:
    # The example's documented run, shared with its golden report.
    words = ("examples/scripts/train_eval.py", "--fail-on-recompile", "--", "--batch-size", "8")
    captured = capture_once("compile", *words)
    return captured.result.code, captured.report, captured.result.stderr


@pytest.fixture(scope="module")
def short_batches(tmp_path_factory) -> tuple[int, dict, str]:
    # 52 and 36 samples in batches of 8: each loop ends on a batch of 4.
    folder = tmp_path_factory.mktemp("short")
    args = ("--batch-size", "8", "--train-samples", "52", "--eval-samples", "36")
    return compile_json(folder / "run", *args)


def test_train_then_evaluate_passes_fail_on_recompile(clean):
    code, report, stderr = clean
    assert code == 0, stderr
    assert report["steady_state_compiles"] == 0
    assert not [e for e in report["events"] if e["cause"]["category"] == "first_compile"
                and e["steady_state"]]  # fmt: skip


def test_the_evaluation_loop_is_a_new_phase(clean):
    _, report, _ = clean
    phases = [(e["phase"], e["cause"]["location"]) for e in report["events"]]
    evaluation = [loc for phase, loc in phases if phase == "new_phase"]
    assert evaluation and set(evaluation) <= {
        line_of("in eval_loader"),
        line_of("correct += model"),
    }, phases
    assert [phase for phase, _ in phases][:2] == ["loop", "loop"]


def test_a_read_after_the_last_sync_is_after_the_loop(clean):
    """Item 3: the final accuracy read compiles outside every step."""
    _, report, _ = clean
    (event,) = [e for e in report["events"] if e["step"] is None]
    assert event["phase"] == "after_loop" and not event["steady_state"]
    assert event["cause"]["location"] == line_of("accuracy = (correct.float()")


def test_the_text_report_names_the_new_phase(tmp_path, clean):
    _, report, _ = clean
    result = run_cli("report", report["run_dir"], cwd=REPO)
    assert "After the loop (1):" in result.stdout and "step None" not in result.stdout
    assert "New phases (" in result.stdout
    assert "Steady-state recompiles" not in result.stdout
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]


def test_a_short_last_batch_recompiles_in_both_loops(short_batches):
    code, report, stderr = short_batches
    assert code == 1
    steady = [e for e in report["events"] if e["steady_state"]]
    assert [(e["phase"], e["cause"]["category"]) for e in steady] == [
        ("loop", "input_shape"),
        ("new_phase", "input_shape"),
    ], steady
    assert "2 steady-state recompiles" in stderr


@pytest.fixture(scope="module")
def fsdp(capture_once) -> dict:
    captured = capture_once("compile", "examples/scripts/train_fsdp.py", "--steps", "3")
    assert captured.result.code == 0, captured.result.stderr
    return captured.report


def test_a_wrappers_syncs_are_setup_and_steps_count_loop_iterations(fsdp):
    phases = [record["phase"] for record in step_records(fsdp)]
    assert phases[0] == "setup" and phases.count("loop") == 3, phases
    assert phases == sorted(phases, key=lambda phase: phase != "setup")  # setup, then the loop
    assert fsdp["steady_state_compiles"] == 0
    setup = [e for e in fsdp["events"] if e["phase"] == "setup"]
    assert setup and all(e["step"] < phases.index("loop") for e in setup)
    assert [e["cause"]["category"] for e in fsdp["events"] if e["phase"] == "loop"] == [
        "first_compile"
    ]


def test_steps_count_the_loops_iterations_and_the_timeline_starts_there(fsdp, tmp_path):
    """The report's steps are what --steps counts, not the wrapper's syncs, and
    the timeline ends the warm-up after the loop's own first iterations."""
    setup = sum(record["phase"] == "setup" for record in step_records(fsdp))
    assert (fsdp["steps"], fsdp["steps_requested"]) == (3, 3) and setup > 2
    text = run_cli("report", fsdp["run_dir"], cwd=REPO).stdout
    assert f"3 training steps after {setup} setup syncs" in text
    (line,) = [line for line in text.splitlines() if line.startswith("Steps: ")]
    marks = line.removeprefix("Steps: ").split("   ")[0]
    assert marks.index("┊") == setup and marks.index("│") == setup + 3, marks
    assert f"┊ loop starts after {setup} setup syncs" in line
    page = tmp_path / "report.html"
    assert run_cli("report", fsdp["run_dir"], "--output", page, cwd=REPO).code == 0
    assert page.read_text().count('class="setup-edge"') == 1


@pytest.fixture(scope="module")
def log_every(tmp_path_factory) -> tuple[int, dict, str]:
    out = tmp_path_factory.mktemp("log_every") / "run"
    script = EXAMPLES / "scripts" / "train_log_every.py"
    result = run_cli(
        "compile", script, "--out", out, "--format", "json", "--fail-on-recompile", "--",
        "--steps", "10", "--log-every", "3", cwd=REPO,
    )  # fmt: skip
    return result.code, json.loads(result.stdout), result.stderr


def test_a_log_every_n_steps_graph_is_periodic_not_a_recompile(log_every):
    """Item 1: the running loss's reset, folded into the step after each log,
    makes a second graph at the warm training site; it alternates with the
    first and is cached when it comes round again: a periodic graph."""
    code, report, stderr = log_every
    assert code == 0, stderr
    assert report["steady_state_compiles"] == 0
    read, periodic = [e for e in report["events"] if e["phase"] == "periodic"]
    # The log's read, a graph of its own in the same step, is part of it; it is
    # the user's own line, not inside a library (no Dynamo frame of ours).
    assert read["cause"]["category"] == "host_sync" and read["step"] == 3
    assert read["cause"]["library_location"] is None
    # running_loss starts as a device tensor: its first graph is no Python-number accumulator
    assert "python_accumulator" not in [e["cause"]["category"] for e in report["events"]]
    assert periodic["cause"]["category"] == "graph_structure" and periodic["step"] == 3
    ran = [record["graph_hashes"] for record in step_records(report)]
    assert [step for step, hashes in enumerate(ran) if periodic["graph_hash"] in hashes] == [
        3,
        6,
        9,
    ]
    text = run_cli("report", report["run_dir"], cwd=REPO).stdout
    assert "Periodic graphs (2:" in text and "Steady-state recompiles" not in text


def test_a_loaders_first_batch_flushing_the_setup_is_no_training_step(tmp_path):
    """The loop's opening sync (MpDeviceLoader's first batch, a torch_xla.compile
    function's clearing sync) runs the setup's pending work: --steps 3 is three
    runs of the training graph, after one setup step."""
    script = EXAMPLES / "scripts" / "train_loader_setup.py"
    out = tmp_path / "run"
    result = run_cli("compile", script, "--steps", "3", "--out", out, "--format", "json", cwd=REPO)
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    phases = [(record["phase"], record["graph_hashes"]) for record in step_records(report)]
    (training,) = [g["hash"] for g in report["graphs"] if g["trigger"] == "torch_xla_compile"]
    assert phases[0][0] == "setup" and training not in phases[0][1]
    assert phases[1:] == [("loop", [training])] * 3 and report["steps"] == 3
