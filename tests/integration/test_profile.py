"""``xlacli profile`` on XLA:CPU: a trace TensorBoard and xprof can read, with the
step annotations, a summary over the completed steps, and clean failures."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import (
    MODELS,
    PYTHON_AS_AT_A_TERMINAL,
    REPO,
    assert_clean_error,
    run_cli,
    wait_for_events,
)
from xlacli.run_folder.events import STEP_TRACE_NAME

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    run = tmp_path_factory.mktemp("profile") / "run"
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--steps",
        "12",
        "--warmup",
        "3",
        "--name",
        "first",
        "--out",
        run,
        "--format",
        "json",
        cwd=REPO,
        live=True,  # the suite's one live profile of a model file: the trace is the point
    )
    assert result.code == 0, result.stderr
    return run, json.loads(result.stdout), result


def test_trace_is_where_tensorboard_reads_it(profiled):
    run, summary, _ = profiled
    session = run / "tensorboard" / "plugins" / "profile" / "first"
    assert summary["session"] == "first"
    xplanes = list(session.glob("*.xplane.pb"))
    assert len(xplanes) == 1
    assert {str(p) for p in session.glob("*.xplane.pb")} <= set(summary["trace_files"])


def test_trace_loads_with_the_profile_plugin(profiled):
    from xprof.convert import raw_to_tool_data

    run, _, _ = profiled
    xplane = next((run / "tensorboard").rglob("*.xplane.pb"))
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(xplane)], "overview_page", {})
    pages = json.loads(data)
    step_rows = [
        row
        for page in pages
        for row in page.get("rows", [])
        if str(row["c"][0]["v"]).startswith(STEP_TRACE_NAME)
    ]
    # The plugin reads our annotations as steps (it leaves out the first and
    # last, which it cannot bound).
    names = {row["c"][0]["v"] for row in step_rows}
    assert len(names) >= 10
    assert names <= {f"{STEP_TRACE_NAME} {n}" for n in range(3, 15)}


def test_trace_holds_the_step_annotations(profiled):
    run, _, _ = profiled
    trace = next((run / "tensorboard").rglob("*.trace.json.gz"))
    events = json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
    steps = sorted(int(e["args"]["step_num"]) for e in events if e.get("name") == STEP_TRACE_NAME)
    assert steps == list(range(3, 15))  # after 3 warm-up steps


def test_summary_json(profiled):
    _, summary, _ = profiled
    assert summary["steps"] == 12
    assert set(summary["step_time_s"]) >= {"p50", "p90", "max"}
    times = summary["step_time_s"]
    assert 0 < times["p50"] <= times["p90"] <= times["max"]
    assert summary["batch_size"] == 8 and summary["samples_per_s"] > 0
    assert set(summary["breakdown"]) >= {
        "window_s",
        "python_s",
        "op_tracing_s",
        "graph_s",
        "device_wait_s",
        "transfer_s",
        "compile_s",
        "harness_s",
        "device_busy_s",
        "overlap_s",
    }
    assert summary["window_compiles"] == 0 and summary["notes"] == []
    top = summary["top_ops"]
    assert top and set(top[0]) >= {"name", "time_s", "count", "source"}
    assert top[0]["count"] == 12 and top[0]["source"]
    assert [op["time_s"] for op in top] == sorted((op["time_s"] for op in top), reverse=True)
    assert any(op["kind"] == "kLoop" for op in top)  # joined to the optimized HLO
    (graph,) = summary["graphs"]
    assert graph["executions"] == 12 and graph["site"] == f"{REPO / 'examples' / 'mlp.py'}:24"


def test_summary_text(tmp_path):
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--steps",
        "5",
        "--warmup",
        "2",
        "--out",
        tmp_path / "run",
        cwd=REPO,
    )
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "5 profiled steps after 2 warm-up" in out
    assert "Step time  p50" in out and "samples/s (batch 8)" in out
    assert "The host, " in out and "waiting for the device" in out and "Top HLO ops" in out
    assert "Device time by user line" in out
    assert "View the trace: tensorboard --logdir" in result.stderr


def test_session_name_is_not_overwritten(profiled, tmp_path):
    run, _, _ = profiled
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--logdir",
        run / "tensorboard",
        "--name",
        "first",
        "--out",
        tmp_path / "again",
        cwd=REPO,
    )
    assert_clean_error(result, 2, "a profile session named 'first' already exists", "--force")


def test_unwritable_logdir(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_cli("profile", "examples/mlp.py", "--logdir", blocker / "logs", cwd=REPO)
    assert_clean_error(result, 4, "is not writable")


def test_port_in_use(tmp_path):
    with socket.socket() as server:
        server.bind(("localhost", 0))
        server.listen()
        port = server.getsockname()[1]
        result = run_cli(
            "profile",
            "examples/mlp.py",
            "--tensorboard",
            "--port",
            str(port),
            "--out",
            tmp_path / "run",
            cwd=REPO,
        )
    assert_clean_error(result, 2, f"port {port} is already in use")


def test_missing_profile_plugin(tmp_path):
    shadow = tmp_path / "shadow" / "xprof"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('xprof is not installed')\n")
    env = {"PYTHONPATH": f"{shadow.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    result = run_cli(
        "profile", "examples/mlp.py", "--tensorboard", "--out", tmp_path / "a", cwd=REPO, env=env
    )
    assert_clean_error(result, 4, "tensorboard-plugin-profile is not installed")
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--steps",
        "3",
        "--warmup",
        "1",
        "--out",
        tmp_path / "b",
        "--format",
        "json",
        cwd=REPO,
        env=env,
    )
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["source_of_op_times"] == "trace events"
    assert any("tensorboard-plugin-profile is not installed" in n for n in summary["notes"])


def test_sigint_keeps_a_loadable_trace(tmp_path):
    run = tmp_path / "run"
    process = subprocess.Popen(
        [
            *PYTHON_AS_AT_A_TERMINAL,
            "-m",
            "xlacli",
            "profile",
            str(MODELS / "slow.py"),
            "--steps",
            "50",
            "--warmup",
            "1",
            "--out",
            str(run),
            "--format",
            "json",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_events(run, '"traced": true', 3)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted during step" in stderr
    summary = json.loads(stdout)
    assert summary["interrupted"] and 3 <= summary["steps"] < 50
    from xprof.convert import raw_to_tool_data

    xplane = next((run / "tensorboard").rglob("*.xplane.pb"))
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(xplane)], "overview_page", {})
    assert json.loads(data)


def test_model_error_mid_profile_exits_3_with_a_summary(tmp_path):
    model = tmp_path / "fails.py"
    model.write_text(
        "import torch\n"
        "def get_model():\n    return torch.nn.Linear(4, 4)\n"
        "def get_inputs(step):\n"
        "    if step == 4:\n        raise RuntimeError('bad batch')\n"
        "    return torch.ones(2, 4)\n"
    )
    result = run_cli(
        "profile",
        model,
        "--steps",
        "10",
        "--warmup",
        "1",
        "--out",
        tmp_path / "run",
        "--format",
        "json",
    )
    assert_clean_error(result, 3, "get_inputs() raised RuntimeError: bad batch")
    summary = json.loads(result.stdout)
    assert summary["steps"] == 3  # steps 1, 2, 3 completed in the window
    assert list((tmp_path / "run" / "tensorboard").rglob("*.xplane.pb"))


def test_tensorboard_serves_the_logdir(tmp_path):
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            *PYTHON_AS_AT_A_TERMINAL,
            "-m",
            "xlacli",
            "profile",
            "examples/mlp.py",
            "--steps",
            "3",
            "--warmup",
            "1",
            "--out",
            str(tmp_path / "run"),
            "--tensorboard",
            "--port",
            str(port),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        body = None
        while time.monotonic() < deadline and body is None:
            try:
                with urllib.request.urlopen(f"http://localhost:{port}/data/plugins_listing") as r:
                    body = r.read().decode()
            except OSError:
                time.sleep(0.5)
        assert body is not None and "profile" in body
        time.sleep(1)  # xlacli prints the URL once it sees the port open (it polls)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            _, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{process.pid}/status").read_text()
            masks = [line for line in status.splitlines() if line.startswith(("SigIgn", "SigCgt"))]
            process.kill()
            _, stderr = process.communicate()
            log = tmp_path / "run" / "tensorboard.log"
            raise AssertionError(
                "xlacli did not end within 60 s of SIGINT "
                f"({masks}; this worker's SIGINT handler: {signal.getsignal(signal.SIGINT)}); "
                "its stderr:\n"
                + stderr
                + (f"\ntensorboard.log:\n{log.read_text()}" if log.exists() else "")
            ) from None
    assert f"http://localhost:{port}/#profile" in stderr


def test_a_step_that_syncs_itself_profiles(tmp_path):
    """The step annotation opens no IR scope, so a step() may sync or read values."""
    result = run_cli(
        "profile",
        MODELS / "user_code.py",
        "--steps",
        "4",
        "--warmup",
        "4",
        "--out",
        tmp_path / "run",
        "--format",
        "json",
        cwd=REPO,
    )
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["steps"] == 4
    assert sum(graph["executions"] for graph in summary["graphs"]) == 8  # 2 graphs a step


def test_only_the_model_comes_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.xlacli]\nmodel = "{REPO / "examples" / "mlp.py"}"\nsteps = 2\nwarmup = 1\n'
    )
    result = run_cli(
        "profile", "--steps", "3", "--out", tmp_path / "run", "--format", "json", cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["steps"], summary["warmup"]) == (3, 5)  # the check's settings stay its own


def test_report_of_a_profile_run_names_profile(profiled):
    """Issue 20, item 12: `xlacli report` on a profile run's folder said "xlacli compile"."""
    run, _, _ = profiled
    result = run_cli("report", run, cwd=REPO)
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    # The verdict comes first (issue 27), then the header naming the command.
    assert lines[1].startswith("xlacli profile "), result.stdout[:160]
    assert not [line for line in lines if line.startswith("xlacli compile ")]
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]
