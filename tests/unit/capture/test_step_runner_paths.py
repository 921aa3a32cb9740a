"""The model-file step's own paths, in this process on XLA:CPU: how ``--train``
finds a loss, how a nested batch reaches the device, and what a failing step,
a model without parameters or an unmovable model says. (The e2e tests of these
replay recorded children; the child's code runs here.)"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
torch_xla = pytest.importorskip("torch_xla")

from xlacli.capture.discover import LoadedModel  # noqa: E402
from xlacli.child.steps import (  # noqa: E402
    IGNORED_TRAIN_WARNING,
    INPUT_SPLIT_HINT,
    NONE_OUTPUT_WARNING,
    StepRunner,
    input_signature,
    move_model,
    to_device,
)
from xlacli.errors import ModelError, UsageError  # noqa: E402


class Outputs(torch.nn.Module):
    """A linear layer whose output is shaped as ``kind`` says."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.kind = kind

    def forward(self, x, *rest):
        y = self.linear(x)
        if self.kind == "dict-loss":
            return {"loss": y.pow(2).mean(), "logits": y}
        if self.kind == "no-tensor":
            return {"note": "nothing to train on"}
        return (y,)


def runner(
    kind: str,
    train: bool = True,
    inputs=lambda step: torch.ones(2, 4),
    optimizer: str = "adamw",
    mode: str = "lazy",
    **loaded,
):
    warnings: list[str] = []
    model = LoadedModel(
        model=Outputs(kind),
        inputs_for_step=inputs,
        step_fn=loaded.get("step_fn"),
        loss_fn=loaded.get("loss_fn"),
        entry_site="model.py:1",
        inputs_site="model.py:2",
        forward_inputs=loaded.get("forward_inputs"),
    )
    steps = StepRunner(
        model,
        torch_xla.device(),
        train=train,
        optimizer_name=optimizer,
        warn=warnings.append,
        mode=mode,
    )
    return steps, warnings


def test_train_uses_the_outputs_loss_and_runs_the_optimizer():
    steps, warnings = runner("dict-loss")
    before = steps.model.linear.weight.detach().cpu().clone()
    steps.run(0)
    assert isinstance(steps.optimizer, torch.optim.AdamW)
    assert not torch.equal(before, steps.model.linear.weight.detach().cpu())
    assert warnings == []


def test_train_without_a_loss_sums_the_first_tensor_and_says_so_once():
    steps, warnings = runner("tuple")
    steps.run(0)
    steps.run(1)
    assert warnings == ["no loss_fn and no .loss on the output: training on output.sum()"]


def test_train_with_no_tensor_out_is_a_usage_error_naming_loss_fn():
    steps, _ = runner("no-tensor")
    with pytest.raises(UsageError) as raised:
        steps.run(0)
    assert "--train needs a loss" in str(raised.value)
    assert "loss_fn" in (raised.value.hint or "")


def test_loss_fn_and_forward_inputs_split_the_batch():
    seen = []

    def loss_fn(output, batch):
        seen.append(type(batch).__name__)
        return output[0].sum()

    steps, _ = runner(
        "tuple",
        inputs=lambda step: {"x": torch.ones(2, 4), "labels": torch.zeros(2)},
        loss_fn=loss_fn,
        forward_inputs=lambda batch: {"x": batch["x"]},
    )
    steps.run(0)
    assert seen == ["dict"]


def test_inference_runs_under_no_grad():
    steps, _ = runner("tuple", train=False)
    steps.run(0)
    assert steps.optimizer is None and not steps.model.training


def test_labels_sent_to_forward_fail_the_step_with_the_split_hint():
    steps, _ = runner(
        "tuple", train=False, inputs=lambda step: (torch.ones(2, 4), torch.ones(2), torch.ones(2))
    )
    steps.model.forward = lambda x: (x,)  # takes one input; the batch has three
    with pytest.raises(ModelError) as raised:
        steps.run(0)
    assert "step 0 raised TypeError" in str(raised.value)
    assert raised.value.hint == INPUT_SPLIT_HINT


def test_a_nested_batch_moves_leaf_by_leaf_and_a_stranger_leaf_is_named():
    device = torch_xla.device()
    batch = {"ids": [torch.ones(2), (torch.zeros(1), 3)], "flag": True, "name": "b"}
    moved = to_device(batch, device)
    assert moved["ids"][0].device.type == "xla" and isinstance(moved["ids"], list)
    assert isinstance(moved["ids"][1], tuple) and moved["ids"][1][1] == 3
    assert moved["flag"] is True and moved["name"] == "b"
    with pytest.raises(UsageError) as raised:
        to_device({"ids": [object()]}, device)
    assert "inputs['ids'][0] is builtins.object" in str(raised.value)


def test_train_needs_parameters():
    class Frozen(torch.nn.Module):
        def forward(self, x):
            return x * 2

    loaded = LoadedModel(Frozen(), lambda step: torch.ones(2), None, None, "m.py:1", "m.py:2")
    with pytest.raises(UsageError, match="no trainable parameters"):
        StepRunner(loaded, torch_xla.device(), train=True, optimizer_name="sgd", warn=print)


def test_a_model_that_cannot_move_is_the_models_error_with_a_memory_hint():
    class Huge(torch.nn.Module):
        def to(self, *args, **kwargs):
            raise RuntimeError("failed to allocate 80 GB")

    with pytest.raises(ModelError) as raised:
        move_model(Huge(), torch_xla.device())
    assert "moving the model to the XLA device raised RuntimeError" in str(raised.value)
    assert "do not fit in memory" in (raised.value.hint or "")


def test_a_batch_signature_names_scalars_and_dataclass_fields():
    import dataclasses

    @dataclasses.dataclass
    class Batch:
        ids: object
        mask: object

    batch = (torch.ones(2, 3), 3, Batch(torch.zeros(4, dtype=torch.int64), None))
    assert input_signature(batch) == [
        "input 0 f32[2,3]",
        "input 1 int 3",
        "input 2.ids s64[4]",
        "input 2.mask NoneType None",
    ]


def test_a_user_step_with_train_says_train_is_ignored_and_sgd_is_the_other_optimizer():
    def step(model, batch, step):
        return model(batch)

    steps, warnings = runner("tuple", step_fn=step)
    assert warnings == [IGNORED_TRAIN_WARNING] and steps.optimizer is None
    sgd, _ = runner("tuple", optimizer="sgd")
    assert type(sgd.optimizer) is torch.optim.SGD


def test_dynamo_mode_compiles_the_users_step_not_the_forward():
    def step(model, batch, step):
        return model(batch)

    dynamo, _ = runner("tuple", train=False, mode="dynamo", step_fn=step)
    assert dynamo._step_fn is not step and dynamo._forward is dynamo.model


def test_a_forward_returning_none_is_said_once_at_the_first_step():
    steps, warnings = runner("tuple", train=False)
    steps.model.forward = lambda x: None
    steps.run(0)
    steps.run(1)
    assert warnings == [NONE_OUTPUT_WARNING]


def test_a_failing_step_without_an_arity_mistake_has_no_split_hint():
    def step(model, batch, step):
        raise ValueError("a bad batch")

    steps, _ = runner("tuple", train=False, step_fn=step)
    with pytest.raises(ModelError) as raised:
        steps.run(0)
    assert "step 0 raised ValueError: a bad batch" in str(raised.value)
    assert raised.value.hint is None


def test_a_sync_or_device_wait_that_fails_is_the_steps_graph_failing(monkeypatch):
    # XLA's own failures (a compile error, a device lost) surface in these two calls.
    import xlacli.child.steps as steps_module

    def fails(*args, **kwargs):
        raise RuntimeError("INTERNAL: compile failed")

    steps, _ = runner("tuple", train=False)
    monkeypatch.setattr(steps_module.torch_xla, "sync", fails)
    with pytest.raises(ModelError, match="failed to compile or run step 0's graph: RuntimeError"):
        steps.run(0)
    monkeypatch.undo()
    monkeypatch.setattr(steps_module.xm, "wait_device_ops", fails)
    with pytest.raises(ModelError, match="failed to compile or run step 4's graph"):
        steps.finish(4)
