"""Recompile explanations that point at the exact user line (issue 8), on real
training loops in examples/recompile/: a change inside a library traced to the
user's call, an input traced to the line that made it, lazy-tensor patterns,
healthy loops that look suspicious. One capture per example, shared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.integration.test_recompile_e2e import documented_run, line_of, torch_xla_compiles

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def capture(capture_once):
    """``capture(example, steps=5)``: the JSON report of the example's documented
    run, shared with every test (and the golden reports) that runs it."""

    def run(example: str, steps: int = 5) -> dict:
        return documented_run(capture_once, example, steps).report

    return run


def recompiles(report: dict) -> list[dict]:
    """Every compile but the first of each sync site, in order."""
    return [e for e in report["events"] if e["compared_with"] is not None]


def only(events: list[dict]) -> dict:
    assert len(events) == 1, events
    return events[0]


# example -> (step, category, fragment of the user's line, library file or None)
CASES = {
    # 1: the change is inside a library; the user's line is the call into it.
    "grad_accumulation": (3, "graph_structure", "model.opt.step()", "torch/optim/sgd.py"),
    "lr_warmup": (1, "constant_value", "model.opt.step()", "torch/optim/sgd.py"),
    "encoder_dropout": (3, "graph_structure", "hidden = self.encoder(x)", "torch/nn/functional.py"),
    # 2: the input's line is the one that made the tensor.
    "short_last_batch": (2, "input_shape", "return DATA[start : start + BATCH]", None),
    "trim_padding": (3, "input_shape", "return tokens[:, : int(lengths.max())]", None),
    # 3: the node torch.cat gained, not the temperature's scalar beside it.
    "feature_queue": (1, "graph_structure", "bank = torch.cat([features.detach(), *QUEUE])", None),
    # 4: step 0's shared transpose must not hide the data-dependent shape.
    "masked_labels": (1, "data_dependent_shape", "cross_entropy(logits[keep]", None),
    # 5a: optimizer state is warm-up, at the opt.step() line.
    "optimizer_state": (1, "optimizer_state", "model.opt.step()", "torch/optim/adam.py"),
}


@pytest.mark.parametrize("example", sorted(CASES))
def test_category_and_exact_user_line(capture, example):
    step, category, fragment, library = CASES[example]
    report = capture(example)
    assert len(report["events"]) == report["compilations"] == torch_xla_compiles(report)
    event = next(e for e in recompiles(report) if e["step"] == step)
    cause = event["cause"]
    assert cause["category"] == category, cause
    assert cause["location"] == line_of(example, fragment), cause
    if library is None:
        assert cause["library_location"] is None, cause
    else:
        assert library in cause["library_location"], cause


def test_optimizer_state_is_expected_warm_up_with_nothing_to_fix(capture):
    report = capture("optimizer_state")
    event = only(recompiles(report))
    assert event["cause"]["hint"] is None and not event["steady_state"]
    assert "optimizer state created at the first opt.step()" in event["cause"]["detail"]
    assert report["steady_state_compiles"] == 0


def test_a_scheduler_zero_learning_rate_is_a_baked_constant(capture):
    cause = only(recompiles(capture("lr_warmup")))["cause"]
    assert "torch_xla bakes in as a constant" in cause["detail"]
    assert cause["hint"] and cause["also"] == []


def test_data_dependent_shape_is_not_hidden_by_a_permute(capture):
    report = capture("masked_labels")
    categories = [e["cause"]["category"] for e in recompiles(report)]
    assert categories == ["data_dependent_shape", "data_dependent_shape"]
    assert all("permute" not in e["cause"]["detail"] for e in report["events"])


def test_the_queue_names_the_tensor_cat_gained(capture):
    events = recompiles(capture("feature_queue"))
    assert [e["step"] for e in events] == [1, 2, 3, 4]
    assert "(new: xla::device_data f32[8,16])" in events[0]["cause"]["detail"]


def test_unsynced_decode_loop_is_one_pattern_at_the_loop_line(capture):
    report = capture("unsynced_decode", steps=3)
    line = line_of("unsynced_decode", "if (token == EOS).all():")
    first, *loop = [e for e in report["events"] if e["cause"]["location"] == line]
    assert first["cause"]["category"] == "host_sync"
    assert [e["cause"]["category"] for e in loop] == ["unsynced_loop"] * 3
    assert "torch_xla.sync() once per iteration" in loop[0]["cause"]["hint"]
    assert "IR nodes over 4 value reads" in loop[-1]["cause"]["detail"]


def test_a_value_read_inside_a_library_shows_the_call_and_a_fix(capture):
    report = capture("library_read")
    line = line_of("library_read", "    nn.utils.clip_grad_norm_(model.parameters()")
    reads = [e for e in report["events"] if e["cause"]["category"] == "host_sync"]
    assert [e["cause"]["location"] for e in reads] == [line, line]
    assert all(e["cause"]["library_location"] for e in reads)
    assert "a library reads a tensor value" in reads[0]["cause"]["hint"]
    assert report["steady_state_compiles"] == 0


def test_a_read_in_a_helper_gives_the_call_as_also(capture):
    event = only(
        [e for e in capture("log_helper")["events"] if e["cause"]["category"] == "host_sync"]
    )
    assert event["cause"]["location"] == line_of("log_helper", "HISTORY.append(loss.item())")
    (also,) = event["cause"]["also"]
    assert also["location"] == line_of("log_helper", "        log_metrics(step, loss)")


@pytest.mark.parametrize("example", ["ema_teacher", "ignore_index", "optimizer_state", "stable"])
def test_healthy_loops_that_look_suspicious_raise_no_alarm(capture, example):
    report = capture(example)
    assert report["steady_state_compiles"] == 0
    assert report["compilations"] == torch_xla_compiles(report)
    for event in recompiles(report):  # step 1's compile, if any, is named as expected
        assert event["cause"]["category"] in ("optimizer_state", "lazy_artefact"), event
        assert event["cause"]["hint"] is None


def test_terminal_shows_user_line_library_line_and_group(capture):
    result = run_cli("report", capture("grad_accumulation")["run_dir"], cwd=REPO)
    assert result.code == 0, result.stderr
    assert line_of("grad_accumulation", "model.opt.step()", relative=True) in result.stdout
    assert "│ model.opt.step()" in result.stdout
    assert "(inside torch/optim/sgd.py:" in result.stdout
    result = run_cli("report", capture("unsynced_decode", steps=3)["run_dir"], cwd=REPO)
    assert result.code == 0, result.stderr
    assert "unsynced_loop ×3" in result.stdout
    assert "fix: call torch_xla.sync() once per iteration" in result.stdout


def test_saved_report_keeps_also(capture):
    from xlacli.report.run_report import load_report

    report = capture("log_helper")
    loaded = load_report(Path(report["run_dir"]))
    (event,) = [e for e in loaded.events if e.cause.category == "host_sync"]
    assert event.cause.also[0].location == line_of("log_helper", "        log_metrics(step, loss)")


def test_diff_hlo_names_the_users_line_inside_the_optimizer(capture):
    """diff-hlo's source column walks torch.optim's line out to the user's call (issue 27)."""
    report = capture("lr_warmup")
    event = only(recompiles(report))
    graphs = (report["run_dir"], event["compared_with"][:8], event["graph_hash"][:8])
    result = run_cli("diff-hlo", *graphs, "--format", "json", cwd=REPO)
    assert result.code == 1, result.stderr
    sources = [p["source"] for p in json.loads(result.stdout)["patterns"] if p["source"]]
    user = line_of("lr_warmup", "model.opt.step()")
    walked = [s for s in sources if f"{s['file']}:{s['line']}" == user]
    assert walked and all("torch/optim/" in s["library"] for s in walked), sources
    assert not [s for s in sources if "/torch/optim/" in s["file"]], sources  # none left behind
    text = run_cli("diff-hlo", *graphs, "--details", cwd=REPO)
    shown = line_of("lr_warmup", "model.opt.step()", relative=True)
    assert f"{shown} (inside torch/optim/" in text.stdout, text.stdout


@pytest.mark.parametrize(
    ("example", "steps", "trained"), [("lr_warmup", 5, True), ("unsynced_decode", 3, False)]
)
def test_a_model_files_own_step_is_called_what_it_did(capture, tmp_path, example, steps, trained):
    """Text, JSON and HTML agree on training, whoever drove it (issue 27, item 3)."""
    report = capture(example, steps=steps)
    assert report["train"] is False  # no --train: the model file's own step() ran
    assert report["trained"] is trained
    text = run_cli("report", report["run_dir"], cwd=REPO)
    title = next(line for line in text.stdout.splitlines() if line.startswith("xlacli compile"))
    assert (f"{steps} training steps" in title) is trained, title
    page = tmp_path / "run.html"
    assert run_cli("report", report["run_dir"], "--output", page, cwd=REPO).code == 0
    mode = "training" if trained else "inference"
    assert f"<dt>mode</dt><dd>{mode}</dd>" in page.read_text()
