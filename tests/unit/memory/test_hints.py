"""The hint for torch.utils.checkpoint on XLA."""

from xlacli.capture.failures import CHECKPOINT_HINT, exception_hint

ERROR = AttributeError("module 'torch' has no attribute 'xla'")


def test_torch_checkpoint_on_xla():
    frames = ["/m/step.py", "/venv/site-packages/torch/utils/checkpoint.py"]
    assert exception_hint(ERROR, frames) == CHECKPOINT_HINT
    assert "torch_xla.utils.checkpoint.checkpoint" in CHECKPOINT_HINT


def test_the_same_error_bare():
    hint = exception_hint(ERROR, ["/m/step.py"])
    assert "torch.xla" in hint and "torch_xla.utils.checkpoint.checkpoint" in hint


def test_other_errors():
    assert exception_hint(AttributeError("no attribute 'foo'"), []) is None
    assert exception_hint(ValueError("module 'torch' has no attribute 'xla'"), []) is None
