"""Advice that sees the whole training step (issue 37), on models written for it under
tests/assets/models/advice/: the backward pass at the forward lines it differentiates,
one bucket advice per site that keeps training right, and value reads torch_xla makes
for the user."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from tests.conftest import ASSETS, Capture, run_cli
from xlacli.analysis.advice.compile_cost import backward_scope
from xlacli.parse.hlo_stacks import read_hlo_stacks

pytestmark = pytest.mark.e2e
MODELS = ASSETS / "models" / "advice"
DATA = "(data and constants: parameters, inputs)"


def line_of(path: Path, fragment: str) -> str:
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if fragment in line)
    return f"{path.relative_to(ASSETS.parent.parent)}:{number}"


@pytest.fixture(scope="module")
def trained(capture_once) -> Capture:
    captured = capture_once("compile", MODELS / "trained_stack.py", "--steps", "2")
    assert captured.result.code == 0, captured.result.stderr
    return captured


def _portable(location: str | None) -> str | None:
    root = str(ASSETS.parent.parent) + "/"
    return location.replace(root, "") if location else location


def test_the_backward_pass_is_at_the_forward_lines_it_differentiates(trained: Capture) -> None:
    cost = trained.report["compile_cost"]
    lines = {_portable(line["location"]): line for line in cost["lines"]}
    # The graphs' own ops by kind: what the data bucket may hold is parameters,
    # inputs and constants, nothing the backward pass made.
    kinds: Counter[str] = Counter()
    for graph in trained.report["graphs"]:
        for op in read_hlo_stacks(trained.run / graph["files"]["hlo_stacks"]) or ():
            kinds["data" if op.op_type in ("xla__device_data", "prim__Constant") else "op"] += 1
    data = lines[None]["hlo_instructions"]
    assert data <= kinds["data"], (data, kinds)
    assert data < 0.1 * cost["hlo_instructions"]
    # The MLP's line: its forward ops and the ones that differentiate it.
    mlp = lines[line_of(MODELS / "trained_stack.py", "# the MLP")]
    assert 0 < mlp["backward_hlo_instructions"] < mlp["hlo_instructions"]
    # optimizer.step() is no backward; loss.backward() itself made only a few ops
    step = lines[line_of(MODELS / "trained_stack.py", "optimizer.step()")]
    assert step["backward_hlo_instructions"] == 0
    # The text shows each line's backward share; no row is a library's line.
    text = trained.result.stdout
    table = text[text.index("Where your graphs come from") :]
    mlp_row = next(row for row in table.splitlines() if row.startswith(mlp_location(mlp)))
    share = mlp["backward_hlo_instructions"] / mlp["hlo_instructions"]
    assert f"{share:.0%}" in mlp_row.split()
    assert "backward" in table.splitlines()[1]
    assert "site-packages" not in json.dumps(cost["lines"])


def mlp_location(line: dict) -> str:
    return str(_portable(line["location"]))


def _compiled(capture_once, model: str, steps: int) -> Capture:
    captured = capture_once("compile", MODELS / model, "--steps", str(steps))
    assert captured.result.code == 0, captured.result.stderr
    return captured


def _bucket_block(text: str) -> str:
    start = text.index("Bucket advice")
    return text[start : text.index("compilations (", start)]


def test_padded_labels_are_padded_with_the_ignored_index(capture_once, tmp_path: Path) -> None:
    """Tokens and labels change length together: one advice for the site, the labels
    (the loss's target) padded with -100, which cross_entropy ignores."""
    captured = _compiled(capture_once, "padded_labels.py", 8)
    (advice,) = captured.report["bucket_advice"]
    assert advice["dimension"] == "input 0, dim 1"
    assert advice["padded_with"] == ["input 1"]
    assert advice["targets"] == [["input 1", "nll_loss"]]
    assert not advice["drop_last"]
    assert "pad_to_bucket(tensor, value=-100)" in advice["code"]
    assert "ignore_index=-100" in advice["code"]
    block = _bucket_block(captured.result.stdout)
    assert block.count("Bucket advice") == 1
    assert "input 1 is the loss's target (nll_loss): pad it with ignore_index=-100" in block
    # The snippet runs, and the padded labels cost the loss nothing.
    namespace: dict = {}
    exec(advice["code"], namespace)
    pad = namespace["pad_to_bucket"]
    labels = torch.tensor([[1, 2, 3, 4, 0, 1, 2]])
    logits = torch.randn(1, 7, 5)
    padded_logits = pad(logits, dim=1, value=0.0)
    padded = pad(labels, value=-100)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
    padded_loss = torch.nn.functional.cross_entropy(padded_logits.flatten(0, 1), padded.flatten())
    assert torch.allclose(loss, padded_loss)
    # The page says the same as the terminal: one block, the same edges.
    page = tmp_path / "run.html"
    assert run_cli("report", captured.run, "--output", page).code == 0
    html = page.read_text()
    assert html.count('class="advice buckets"') == 1
    edges = ", ".join(map(str, advice["options"][advice["chosen"]]["edges"]))
    assert f"EDGES = ({edges},)" in html or f"EDGES = ({edges})" in html


def test_a_short_last_batch_is_offered_drop_last_first(capture_once) -> None:
    captured = _compiled(capture_once, "last_batch.py", 6)
    (advice,) = captured.report["bucket_advice"]
    assert advice["dimension"] == "input 0, dim 0"
    assert advice["sizes"] == [[4, 2], [8, 4]]
    assert advice["drop_last"]
    code = advice["code"]
    assert code.index("drop_last=True") < code.index("def pad_to_bucket")
    assert advice["targets"] == [["input 1", "nll_loss"]]
    block = _bucket_block(captured.result.stdout)
    assert "drop_last=True removes it" in block
    assert "advised: drop the last batch, or pad it" in block


def test_a_metrics_librarys_tolist_is_priced_at_the_users_line(capture_once) -> None:
    """transformers' ``to_py_obj`` calls ``.tolist()``: torch_xla copies the
    predictions for the user, inside the library; the read is at the user's call,
    timed."""
    pytest.importorskip("transformers")
    captured = _compiled(capture_once, "metrics_tolist.py", 4)
    model = MODELS / "metrics_tolist.py"
    costs = {_portable(cost["location"]): cost for cost in captured.report["value_read_costs"]}
    library = costs[line_of(model, "# the metrics library's read")]
    assert library["reads_per_step"] == pytest.approx(1.0)
    assert library["read_time_s"] is not None and library["extra_time_s"] > 0
    # the labels' .tolist() reads data already on the device: no graph, still a read
    labels = costs[line_of(model, "labels.tolist()")]
    assert labels["executions_per_step"] == 0
    assert labels["reads_per_step"] == pytest.approx(1.0)
    assert labels["read_time_s"] is not None


def test_an_eager_loops_reads_are_priced(capture_once) -> None:
    """In eager mode every op has run before the read: no graph is forced, but each
    read waits for the device and copies."""
    script = ASSETS / "scripts" / "advice" / "eager_reads.py"
    captured = capture_once("compile", script, "--", "--steps", "4")
    assert captured.result.code == 0, captured.result.stderr
    (cost,) = captured.report["value_read_costs"]
    assert _portable(cost["location"]) == line_of(script, "# the read")
    assert cost["kind"] == "item"
    assert cost["reads_per_step"] == pytest.approx(1.0)
    assert cost["executions_per_step"] == 0
    assert cost["read_time_s"] is not None
    assert "read every k steps" in cost["fix"]
    assert "Value reads" in captured.result.stdout


def test_a_shallow_trained_stack_is_found_with_its_backward_and_not_advised(
    trained: Capture,
) -> None:
    """The two layers' forward and backward make the share: the stack is found, and
    scan_layers is not advised, with why: the optimizer's update, shown apart, would
    compile afresh for each scanned layer."""
    call = line_of(MODELS / "trained_stack.py", "hidden = layer(hidden)")
    found = [a for a in trained.report["scan_advice"] if _portable(a["call_site"]) == call]
    assert found, trained.report["scan_advice"]
    for advice in found:
        assert advice["layers"] == 2 and advice["identical"]
        assert advice["module_list"] == "self.layers"
        assert not advice["pays"] and advice["code"] == ""
        assert advice["optimizer_instructions"] > 0
        assert advice["not_advised_because"] == ["sliced_update"]
        assert advice["advised_from_layers"] == 0
    assert "scan_layers would not pay here" in trained.result.stdout
    assert "the optimizer's per-parameter update: " in trained.result.stdout


@pytest.fixture(scope="module")
def deep(capture_once) -> Capture:
    """Twelve of the same layers, trained with AdamW by xlacli's own loop."""
    model = f"{MODELS / 'trained_stack.py'}:deep_model"
    captured = capture_once("compile", model, "--train", "--optimizer", "adamw", "--steps", "2")
    assert captured.result.code == 0, captured.result.stderr
    return captured


def _ops(captured: Capture, graph_hash: str) -> list:
    graph = next(g for g in captured.report["graphs"] if g["hash"] == graph_hash)
    return read_hlo_stacks(captured.run / graph["files"]["hlo_stacks"]) or []


def test_a_trained_stack_counts_forward_and_backward_and_shows_the_optimizer_apart(
    deep: Capture, tmp_path: Path
) -> None:
    """Issue 37: the layers' share is their forward and backward, the optimizer's
    per-parameter update is its own figure, and the stack not advised says why
    (each scanned layer's update compiled afresh) and that no depth pays, in the
    JSON, the terminal and the page. Counted again here from the graph's own ops."""
    model = MODELS / "trained_stack.py"
    call = line_of(model, "hidden = layer(hidden)")
    layer_lines = {line_of(model, fragment) for fragment in ("h = self.norm", "x = x + self.att")}
    layer_lines.add(line_of(model, "# the MLP"))
    advice_list = deep.report["scan_advice"]
    assert len(advice_list) == len(deep.report["graphs"]) == 2  # AdamW's first step, and on
    for advice in advice_list:
        assert _portable(advice["call_site"]) == call
        assert advice["layers"] == 12 and advice["identical"]
        ops = _ops(deep, advice["graph_hash"])
        update = [op for op in ops if any("/torch/optim/" in f.file for f in op.stack)]
        assert advice["optimizer_instructions"] == len(update)
        assert advice["optimizer_share"] == pytest.approx(len(update) / len(ops))
        # the layers' forward (through the call line) and backward (at their lines)
        forward = [
            op for op in ops if any(f"{_portable(f.file)}:{f.line}" == call for f in op.stack)
        ]
        backward = [op for op in ops if _portable(backward_scope(op.op_name)) in layer_lines]
        assert backward, "the layers' backward is attributed to their lines"
        assert advice["block_instructions"] == len(forward) + len(backward)
        assert advice["share"] + advice["optimizer_share"] <= 1
        assert not advice["pays"] and advice["code"] == ""
        assert advice["not_advised_because"] == ["sliced_update"]
        assert advice["advised_from_layers"] == 0
        assert advice["sliced_update_compile_time_s"] > 0.75 * advice["per_layer_compile_time_s"]
    text = deep.result.stdout
    # Both training graphs hold the same stack and the same verdict: one block in the
    # terminal names both graphs; the page and the JSON keep each graph's advice.
    assert text.count("the optimizer's per-parameter update: ") == 1
    graphs = [advice["graph_hash"][:8] for advice in deep.report["scan_advice"]]
    assert f"graphs {', '.join(graphs)}" in text
    assert "it would pay at no depth of these layers" in text
    page = tmp_path / "run.html"
    assert run_cli("report", deep.run, "--output", page).code == 0
    html = page.read_text()
    assert html.count("The optimizer&#39;s per-parameter update: ") == 2
    assert "each scanned layer&#39;s gradient leaves the loop as a slice" in html


def test_an_evaluation_loop_over_batches_gets_no_scan_advice(capture_once) -> None:
    """Six batches' forwards in one graph (the loop never syncs): the repeats are
    batches, not layers, whether the loop's own line or nn.Sequential's loop over its
    modules inside it looks like a stack."""
    script = ASSETS / "scripts" / "advice" / "eval_loop.py"
    captured = capture_once("compile", script)
    assert captured.result.code == 0, captured.result.stderr
    assert captured.report["scan_advice"] == []
    assert "Scan advice" not in captured.result.stdout
