"""The forward stack anomaly mode keeps for each autograd node while xlacli
records backward lines: the innermost user frame only, unless the user's own
anomaly mode wants the whole stack (issue 40)."""

from __future__ import annotations

import pytest
import torch
import torch.fx.traceback as fx_traceback

from xlacli.child.backward_sites import BackwardSites


def _forward() -> torch.Tensor:
    weight = torch.ones(3, requires_grad=True)
    return (weight * 2).sum()  # the line each node's stack names


FORWARD_LINE = _forward.__code__.co_firstlineno + 2


def _stack_of(loss: torch.Tensor) -> list[str]:
    return list(loss.grad_fn.next_functions[0][0].metadata["traceback_"])


def test_the_stack_is_the_innermost_user_frame_and_fx_gets_its_own_back() -> None:
    fx_own = fx_traceback.format_stack
    sites = BackwardSites()
    sites.start()
    try:
        stack = _stack_of(_forward())
        assert stack == [f'  File "{__file__}", line {FORWARD_LINE}, in _forward\n']
        assert sites._user_line(_forward().grad_fn) == f"{__file__}@{FORWARD_LINE}"
    finally:
        sites.stop()
    assert fx_traceback.format_stack is fx_own
    assert not torch.is_anomaly_enabled()


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_the_users_own_anomaly_mode_keeps_the_whole_stack() -> None:
    fx_own = fx_traceback.format_stack
    with torch.autograd.detect_anomaly(check_nan=False):
        sites = BackwardSites()
        sites.start()
        try:
            assert fx_traceback.format_stack is fx_own
            stack = _stack_of(_forward())
        finally:
            sites.stop()
        assert torch.is_anomaly_enabled()  # theirs, as they left it
    assert len(stack) > 2  # pytest's frames and this test's under the forward line
    assert f"line {FORWARD_LINE}, in _forward" in stack[-1]
    assert any(__file__ in entry and "test_the_users_own" in entry for entry in stack)


def test_a_paused_run_records_no_stack_and_a_restart_records_again() -> None:
    sites = BackwardSites()
    sites.start()
    sites.pause()
    try:
        assert "traceback_" not in _forward().grad_fn.metadata
        sites.start()
        assert _stack_of(_forward())[0].endswith(f"line {FORWARD_LINE}, in _forward\n")
    finally:
        sites.stop()


def test_fx_preserving_its_node_metadata_answers_for_itself() -> None:
    sites = BackwardSites()
    sites.start()
    try:
        with fx_traceback.preserve_node_meta():
            assert fx_traceback.format_stack() == [""]  # fx's stack, not the frames'
        assert fx_traceback.format_stack()[0].startswith('  File "')
    finally:
        sites.stop()


def _residual_stack(layers: int) -> torch.Tensor:
    hidden = torch.ones(4, requires_grad=True)
    for _ in range(layers):
        hidden = hidden + torch.tanh(hidden) * 0.5  # each node reached by two paths
    return hidden.sum()


def _distinct_nodes(loss: torch.Tensor) -> int:
    kept: dict[int, object] = {}
    pending = [loss.grad_fn]
    while pending:
        node = pending.pop()
        if id(node) not in kept:
            kept[id(node)] = node
            pending.extend(next_node for next_node, _ in node.next_functions if next_node)
    return len(kept)


def test_every_node_of_a_residual_graph_is_scoped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's node objects come and go during the walk: a walk that keeps only
    their ids skipped nodes whose id was reused, or walked a residual network's
    graph as a tree (a 12-layer GPT-2: 23 GB before the kernel killed it)."""
    scoped: list[tuple[str, int]] = []  # not the nodes: holding them would hide the fault
    sites = BackwardSites()
    monkeypatch.setattr(
        sites, "_scope_node", lambda node, scope: scoped.append((node.name(), node._sequence_nr()))
    )
    sites.start()
    try:
        loss = _residual_stack(40)
        sites._hook_graph(loss)
    finally:
        sites.stop()
    assert len(scoped) == _distinct_nodes(loss)
    assert len(set(scoped)) == len(scoped)
