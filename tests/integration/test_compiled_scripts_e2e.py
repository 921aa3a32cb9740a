"""Scripts that use torch.compile(backend="openxla"), eager mode with
torch_xla.compile, or change a sharding themselves, end to end on XLA:CPU,
each compared with a bare run of the same script (torch_xla's counters and
Dynamo's ``torch._dynamo.utils.counters``). One capture per script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ASSETS, EXAMPLES, REPO, run_cli
from tests.recorded_cli import run_bare
from tests.report_json import step_records

pytestmark = pytest.mark.e2e
COMPILED = EXAMPLES / "scripts" / "compiled"
BARE = ASSETS / "scripts" / "bare_counters.py"


def line_of(script: str, fragment: str) -> str:
    path = Path(script) if "/" in script else COMPILED / script
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fragment in line:
            return f"{path}:{number}"
    raise AssertionError(f"{fragment!r} not in {path}")


def capture(
    capture_once,
    folder: Path,
    script: str,
    *args: str,
    options: tuple[str, ...] = (),
    devices: int = 0,
    torch_logs: str = "",
) -> dict:
    """``xlacli compile SCRIPT -- ARGS``, shared with every test that runs the same
    command (the golden reports run each example's documented one), and the bare
    run's counters in ``folder`` (``devices``: an SPMD script on that many XLA:CPU
    devices; ``torch_logs``: the bare run's ``TORCH_LOGS``, its stderr kept as
    ``bare_log``)."""
    path = Path(script) if "/" in script else COMPILED / script
    if devices:
        options = (*options, "--devices", str(devices))
    shown = path.relative_to(REPO).as_posix()  # as the examples' docstrings name it
    captured = capture_once("compile", shown, *options, *(("--", *args) if args else ()))
    assert captured.result.code == 0, captured.result.stderr
    assert "Traceback" not in captured.result.stderr
    bare = folder / "bare.json"
    env = {}
    if devices:
        env["CPU_NUM_DEVICES"] = str(devices)
    if torch_logs:
        env["TORCH_LOGS"] = torch_logs
    completed = run_bare([BARE, bare, path, *args], env=env, output=bare)
    assert completed.returncode == 0, completed.stderr
    return {
        "report": captured.report,
        "run": captured.run,
        "bare": json.loads(bare.read_text()),
        "bare_log": completed.stderr,
    }


@pytest.fixture(scope="module")
def dynamo_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("dynamo"), "train_dynamo.py", "--steps", "6"
    )


def test_dynamo_counts_equal_a_bare_run(dynamo_run):
    report, bare = dynamo_run["report"], dynamo_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"] > 0
    assert report["dynamo"]["counters"]["frames"] == bare["dynamo"]["frames"]
    # One frame compile, as Dynamo counts it (AOTAutograd's backward is not one).
    assert len(report["dynamo"]["frames"]) == bare["dynamo"]["frames"]["total"] == 1


def test_the_openxla_bridge_syncs_are_not_steps(dynamo_run):
    report = dynamo_run["report"]
    # --steps 6: six loop iterations, each ended by the script's torch_xla.sync().
    assert report["steps"] == 6
    assert [s["step"] for s in step_records(report)] == list(range(6))
    assert all(e["step"] == 0 for e in report["events"])  # the bridge's compiles: step 0


def test_a_healthy_torch_compile_loop_has_no_recompile_and_no_value_read(dynamo_run):
    report = dynamo_run["report"]
    assert report["steady_state_compiles"] == 0
    assert not [e for e in report["events"] if e["steady_state"]]
    assert not [e for e in report["events"] if e["cause"]["category"] == "host_sync"]
    assert sum(s["value_reads"] for s in step_records(report)) == 0
    assert not [g for g in report["graphs"] if g["trigger"] == "host_sync"]


@pytest.fixture(scope="module")
def eager_run(capture_once, tmp_path_factory) -> dict:
    return capture(capture_once, tmp_path_factory.mktemp("eager"), "train_eager.py", "--steps", "6")


def test_eager_counts_equal_uncached_compile(eager_run):
    report, bare = eager_run["report"], eager_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"]
    assert report["executions"] == bare["ExecuteComputation"]
    assert sum(s["compilations"] for s in step_records(report)) == bare["UncachedCompile"]


def test_eager_op_graphs_and_torch_xla_compile_graphs_are_told_apart(eager_run):
    graphs = eager_run["report"]["graphs"]
    compiled = [g for g in graphs if g["trigger"] == "torch_xla_compile"]
    eager = [g for g in graphs if g["trigger"] == "eager"]
    # The step closure's check runs in torch_xla.compile's first sync, where
    # eager mode is off: a value read of its own.
    [read] = [g for g in graphs if g["trigger"] == "host_sync"]
    assert read["site"] == line_of("train_eager.py", "assert not torch.isnan(loss).item()")
    assert len(compiled) == 2 and len(eager) == len(graphs) - 3 > 0
    assert {g["site"] for g in compiled} == {line_of("train_eager.py", "compiled_step(x, y)")}
    # Each graph is paired with its own HLO module (the eager ones are tiny).
    assert all(g["hlo_instructions"] > 20 for g in compiled if g.get("hlo_instructions"))


def test_the_later_torch_xla_compile_recompile_is_at_its_step(eager_run):
    report = eager_run["report"]
    assert [s["executions"] > 0 for s in step_records(report)] == [True] * 6
    # One run of the compiled step per step: the step closure's eager op is no step.
    compiled = {g["hash"] for g in report["graphs"] if g["trigger"] == "torch_xla_compile"}
    assert [len(compiled & set(s["graph_hashes"])) for s in step_records(report)] == [1] * 6
    late = [e for e in report["events"] if e["steady_state"]]
    assert {e["step"] for e in late} == {4}
    graph = next(e for e in late if not e["cause"]["detail"].startswith("eager op"))
    assert graph["cause"]["category"] == "input_shape"
    assert graph["cause"]["location"] == line_of("train_eager.py", "x = torch.randn(rows")


@pytest.fixture(scope="module")
def eager_loop_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("eager_loop"), "eager_loop.py", "--steps", "6"
    )


def test_an_eager_loop_that_never_syncs_has_a_step_per_optimizer_step(eager_loop_run):
    report, bare = eager_loop_run["report"], eager_loop_run["bare"]
    assert report["steps"] == 6 and report["error"] is None
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"]
    assert sum(s["compilations"] for s in step_records(report)) == bare["UncachedCompile"]
    # The eager ops' and the compiled forward's compiles: the first step, and the longer batch.
    assert {e["step"] for e in report["events"]} == {0, 4}


def test_an_eager_loops_compiled_forward_recompiles_at_the_call_with_the_batch_line(
    eager_loop_run,
):
    guards = [
        e for e in eager_loop_run["report"]["events"] if e["cause"]["category"] == "dynamo_guard"
    ]
    assert guards and all(e["step"] == 4 and e["steady_state"] for e in guards)
    call = line_of("eager_loop.py", "loss = ((compiled(x) - target)")
    for event in guards:  # the forward graph and its backward
        assert event["cause"]["location"] == call
        assert [a["location"] for a in event["cause"]["also"]] == [
            line_of("eager_loop.py", "x = torch.randn(rows, 16")
        ]


@pytest.fixture(scope="module")
def guard_run(capture_once, tmp_path_factory) -> dict:
    return capture(capture_once, tmp_path_factory.mktemp("guard"), "guard_value.py", "--steps", "5")


def test_guard_counts_equal_a_bare_run(guard_run):
    report, bare = guard_run["report"], guard_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"] == 2
    assert report["dynamo"]["recompiles"] == bare["dynamo"]["frames"]["total"] - 1 == 1
    assert report["steps"] == 5


def test_a_guard_failure_is_one_explanation_at_the_line_that_read_the_value(guard_run):
    report = guard_run["report"]
    [recompile] = [e for e in report["events"] if e["steady_state"]]
    assert recompile["step"] == 3
    cause = recompile["cause"]
    assert cause["category"] == "dynamo_guard"
    assert cause["location"] == line_of("guard_value.py", "return h * self.scale")
    assert "self.scale == 1.0" in cause["detail"]
    assert [a["location"] for a in cause["also"]] == [
        line_of("guard_value.py", "model.scale = 0.5")
    ]
    # No unlocated twin: the IR comparison's constant is folded into this one.
    assert [e["cause"]["category"] for e in report["events"]] == ["first_compile", "dynamo_guard"]


def test_torch_logs_recompiles_names_the_same_line(guard_run, tmp_path):
    completed = subprocess.run(
        [sys.executable, COMPILED / "guard_value.py", "--steps", "5"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "TORCH_LOGS": "recompiles", "PJRT_DEVICE": "CPU"},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    line = line_of("guard_value.py", "return h * self.scale").rpartition(":")[2]
    assert f"guard_value.py:{line} in forward" in completed.stderr


@pytest.fixture(scope="module")
def argument_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("argument"), "guard_argument.py", "--steps", "6",
        torch_logs="recompiles",
    )  # fmt: skip


def steady_causes(report: dict) -> dict[int, dict]:
    """Each steady-state recompile's cause, by step."""
    return {e["step"]: e["cause"] for e in report["events"] if e["steady_state"]}


def test_argument_guard_counts_equal_a_bare_run(argument_run):
    report, bare = argument_run["report"], argument_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"]
    assert len(report["dynamo"]["frames"]) == bare["dynamo"]["frames"]["total"] == 3
    assert report["dynamo"]["recompiles"] == 2
    assert report["steps"] == 6


def test_a_guard_on_a_number_argument_names_the_read_and_the_caller(argument_run):
    recompiles = steady_causes(argument_run["report"])
    cause = recompiles[2]
    assert cause["category"] == "dynamo_guard"
    assert cause["location"] == line_of("guard_argument.py", "return h * scale")
    assert "scale == 1.0" in cause["detail"]
    assert [a["location"] for a in cause["also"]] == [
        line_of("guard_argument.py", "scale = 1.0 if step < 2 else 0.5"),
        line_of("guard_argument.py", "            scaled(x, scale)"),
    ]
    # TORCH_LOGS=recompiles in a bare run names the same guard and line.
    line = cause["location"].rpartition(":")[2]
    assert f"guard_argument.py:{line} in scaled" in argument_run["bare_log"]


def test_a_guard_on_a_tensor_arguments_shape_names_its_first_read_and_the_caller(argument_run):
    recompiles = steady_causes(argument_run["report"])
    assert sorted(recompiles) == [2, 4]
    cause = recompiles[4]
    assert cause["category"] == "dynamo_guard"
    assert cause["location"] == line_of("guard_argument.py", "h = torch.tanh(proj(x))")
    assert "tensor 'x' size mismatch" in cause["detail"]
    assert [a["location"] for a in cause["also"]] == [
        line_of("guard_argument.py", "x = torch.randn(rows, 16)"),
        line_of("guard_argument.py", "            scaled(x, scale)"),
    ]
    assert "tensor 'x' size mismatch" in argument_run["bare_log"]


SWITCH = str(EXAMPLES / "scripts" / "spmd" / "sharding_switch.py")


@pytest.fixture(scope="module")
def sharding_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("shard"), SWITCH, "--steps", "5", devices=4
    )


def test_sharding_switch_counts_equal_a_bare_run(sharding_run):
    report, bare = sharding_run["report"], sharding_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"] == 3
    assert report["executions"] == bare["ExecuteReplicated"] + bare["ExecuteComputation"]


def test_a_changed_mark_sharding_is_a_sharding_recompile_at_its_line(sharding_run):
    report = sharding_run["report"]
    [recompile] = [e for e in report["events"] if e["steady_state"]]
    assert recompile["step"] == 3
    cause = recompile["cause"]
    assert cause["category"] == "sharding", cause
    assert cause["location"] == line_of(SWITCH, "xs.mark_sharding(hidden, mesh, spec)")
    assert "(data, None)" in cause["detail"] and "(None, model)" in cause["detail"]
    assert cause["detail"].index("(data, None)") < cause["detail"].index("(None, model)")


LOADER = str(EXAMPLES / "scripts" / "spmd" / "data_parallel_loader.py")


@pytest.fixture(scope="module")
def loader_run(capture_once, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("loader")
    run = capture(capture_once, folder, LOADER, "--steps", "4", devices=4)
    text = run_cli("report", run["run"], cwd=REPO)
    assert text.code == 0, text.stderr
    return {**run, "text": text.stdout}


def test_loader_counts_equal_a_bare_run(loader_run):
    report, bare = loader_run["report"], loader_run["bare"]
    assert report["compilations"] == bare["UncachedCompile"]
    assert report["executions"] == bare["ExecuteReplicated"] + bare["ExecuteComputation"]


def test_the_mesh_given_only_to_mp_device_loader_is_recorded(loader_run):
    spmd = [g["spmd"] for g in loader_run["report"]["graphs"] if g["spmd"]]
    assert spmd and all(s["mesh"]["axis_names"] == ["data"] for s in spmd)
    assert "no mesh recorded" not in loader_run["text"]
    assert "mesh 4 (data)" in loader_run["text"]


def test_replicated_inputs_are_one_line_and_the_json_keeps_them_all(loader_run):
    text = loader_run["text"]
    spmd = loader_run["report"]["graphs"][0]["spmd"]
    replicated = [t for t in spmd["inputs"] if t["axes"].startswith("replicated")]
    assert len(replicated) == 6  # every weight and bias of the model
    assert text.count(f"{len(replicated)} inputs replicated on every device") == len(
        [g for g in loader_run["report"]["graphs"] if g["spmd"]]
    )
    assert "(data, None, None, None)" in text  # the split batch keeps its row
    assert not [line for line in text.splitlines() if line.strip().startswith("input 0 ")]


def test_the_gradient_all_reduce_has_the_backward_line(loader_run):
    spmd = loader_run["report"]["graphs"][0]["spmd"]
    backward = line_of(LOADER, "        loss.backward()")
    gradients = [op for op in spmd["collectives"] if op["bytes"] > 4]  # not the loss's scalars
    assert gradients and all(op["location"] == backward for op in gradients)


def test_device_memory_under_spmd_is_said_plainly(loader_run):
    text = loader_run["text"]
    assert "the virtual SPMD device has no memory statistics" in text
    assert "Check failed" not in text


@pytest.fixture(scope="module")
def break_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("break"), "train_graph_break.py", "--steps", "4"
    )


def test_graph_break_counts_equal_a_bare_run(break_run):
    report, bare = break_run["report"], break_run["bare"]
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"]
    assert report["dynamo"]["counters"]["frames"] == bare["dynamo"]["frames"]
    assert len(report["dynamo"]["frames"]) == bare["dynamo"]["frames"]["total"]
    assert sum(b["count"] for b in report["dynamo"]["graph_breaks"]) == sum(
        bare["dynamo"]["graph_break"].values()
    )
    assert report["steps"] == 4 and report["error"] is None


def test_the_graph_break_has_its_reason_and_line(break_run):
    report = break_run["report"]
    item_line = line_of("train_graph_break.py", "if loss.item() > 100.0")
    [graph_break] = report["dynamo"]["graph_breaks"]
    assert graph_break["location"] == item_line
    assert "Tensor.item()" in graph_break["reason"]
    [event] = [e for e in report["events"] if e["cause"]["category"] == "graph_break"]
    assert event["cause"]["location"] == item_line
    assert "Tensor.item()" in event["cause"]["detail"]


def test_torch_logs_graph_breaks_names_the_same_line(break_run):
    completed = subprocess.run(
        [sys.executable, COMPILED / "train_graph_break.py", "--steps", "2"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "TORCH_LOGS": "graph_breaks", "PJRT_DEVICE": "CPU"},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    file, _, line = break_run["report"]["dynamo"]["graph_breaks"][0]["location"].rpartition(":")
    assert f"{file}:{line}" in completed.stderr


@pytest.fixture(scope="module")
def library_break_run(capture_once, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("library-break")
    captured = capture(capture_once, folder, "graph_break_in_library.py", "--steps", "4")
    shown = run_cli("report", captured["run"], cwd=REPO)
    assert shown.code == 0, shown.stderr
    return {**captured, "text": shown.stdout}


def test_a_break_inside_a_library_is_at_the_users_call(library_break_run):
    report, bare = library_break_run["report"], library_break_run["bare"]
    assert report["compilations"] == bare["UncachedCompile"]
    assert sum(b["count"] for b in report["dynamo"]["graph_breaks"]) == sum(
        bare["dynamo"]["graph_break"].values()
    )
    call = line_of("graph_break_in_library.py", "grid = torchvision.utils.make_grid(")
    breaks = report["dynamo"]["graph_breaks"]
    # Dynamo names torchvision/utils.py as "user code"; the user's line is the call.
    assert breaks and all(b["location"] == call for b in breaks)
    assert all("/torchvision/utils.py:" in b["library_location"] for b in breaks)
    assert "Tensor.item()" in breaks[0]["reason"]
    events = [e for e in report["events"] if e["cause"]["category"] == "graph_break"]
    assert events and all(e["cause"]["location"] == call for e in events)
    assert all("/torchvision/utils.py:" in e["cause"]["library_location"] for e in events)
    text = library_break_run["text"]
    assert "graph_break_in_library.py:" in text and "(inside " in text


@pytest.fixture(scope="module")
def no_grad_run(capture_once, tmp_path_factory) -> dict:
    return capture(
        capture_once, tmp_path_factory.mktemp("no-grad"), "eval_no_grad.py", "--epochs", "2"
    )


def test_an_evaluation_under_no_grad_is_one_recompile_at_its_call(no_grad_run):
    report, bare = no_grad_run["report"], no_grad_run["bare"]
    assert report["compilations"] == bare["UncachedCompile"]
    assert len(report["dynamo"]["frames"]) == bare["dynamo"]["frames"]["total"]
    [guard] = [e for e in report["events"] if e["cause"]["category"] == "dynamo_guard"]
    call = line_of("eval_no_grad.py", "logits = model(x)")
    assert guard["cause"]["location"] == call
    assert "grad_mode" in guard["cause"]["detail"]
    [changed] = guard["cause"]["also"]
    assert changed["location"] == line_of("eval_no_grad.py", "        with torch.no_grad():")
    assert not guard["steady_state"] and report["steady_state_compiles"] == 0
    # no compile without its user line (the backward graphs: at loss.backward())
    assert all(e["cause"]["location"] for e in report["events"])
    [recompiled] = [f for f in report["dynamo"]["frames"] if f["guard_failure"]]
    assert recompiled["guard_read"] == call
