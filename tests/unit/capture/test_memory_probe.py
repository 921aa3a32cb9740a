"""The step probe in this process on XLA:CPU: autocast entered in a step and
still on at its end, and XLA:CPU's missing memory stats said once."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
pytest.importorskip("torch_xla")

from xlacli.child.memory_probe import StepProbe  # noqa: E402


def test_autocast_in_the_step_and_around_the_loop_are_both_seen():
    probe = StepProbe()
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):  # entered and left in the step
            pass
        with torch.autocast("cpu", enabled=False):  # off: nothing to say
            pass
        first = probe.step_facts()
        assert first["autocast"] == ["cpu:bf16"]
        # XLA:CPU has no allocator stats: what it said, once, then nothing.
        assert isinstance(first["memory_info"], str) and first["memory_info"]
        with torch.autocast("cpu", dtype=torch.float16):  # still on at the step's end
            second = probe.step_facts()
        assert second == {"autocast": ["cpu:f16"]}
        assert probe.step_facts() == {"autocast": []}
    finally:
        probe.close()
    entered = torch.amp.autocast_mode.autocast.__enter__
    assert entered.__module__.startswith("torch"), "close() puts torch's own __enter__ back"
