"""Running the user's steps on the XLA device (child process only: imports torch).

A step: get the batch for that step, move it to the device, run the user's
``step`` (or a forward pass under ``no_grad``, or a training step with
``--train``), then ``torch_xla.sync()``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch_xla
import torch_xla.core.xla_model as xm

from xlacli.capture.discover import LoadedModel
from xlacli.capture.failures import describe_exception, failure_hint, format_user_traceback
from xlacli.child.callsites import InputOrigins
from xlacli.errors import ModelError, UsageError

# torch dtype -> XLA's primitive type names, as HLO and torch_xla's IR print them.
XLA_DTYPE_NAMES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "s64",
    torch.int32: "s32",
    torch.int16: "s16",
    torch.int8: "s8",
    torch.uint8: "u8",
    torch.bool: "pred",
    torch.complex64: "c64",
    torch.complex128: "c128",
}
_SCALAR_LEAVES = (bool, int, float, str, type(None))


def xla_type(tensor: torch.Tensor) -> str:
    """``f32[4,16]``: a tensor's type as XLA prints it."""
    dtype = XLA_DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype).replace("torch.", ""))
    return f"{dtype}[{','.join(str(d) for d in tensor.shape)}]"


def input_signature(batch: Any) -> list[str]:
    """One entry per leaf of the batch, named by its place in it:
    ``input 0 f32[4,16]``, ``input 'input_ids' s64[2,128]``, ``input 1[0] int 3``."""
    return [
        f"input {name} {xla_type(leaf) if isinstance(leaf, torch.Tensor) else _scalar(leaf)}"
        for name, leaf in _named_leaves(batch, top=True)
    ]


def _scalar(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"


def _named_leaves(value: Any, name: str = "", *, top: bool = False) -> list[tuple[str, Any]]:
    """The leaves of a nested batch or output, each with its path: ``0``,
    ``'mask'``, ``1[0]``, ``.logits``."""
    if isinstance(value, dict):
        items = [(f"{key!r}" if top else f"{name}[{key!r}]", v) for key, v in value.items()]
    elif isinstance(value, (tuple, list)):
        items = [(f"{i}" if top else f"{name}[{i}]", v) for i, v in enumerate(value)]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [(f"{name}.{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    else:
        return [("0" if top else name, value)]
    return [leaf for item_name, item in items for leaf in _named_leaves(item, item_name)]


def _leaves(value: Any) -> list[Any]:
    return [leaf for _, leaf in _named_leaves(value, top=True)]


def check_batch(batch: Any, step: int) -> None:
    """A batch must hold a tensor: plain numbers would reach ``forward`` and
    fail there, deep in torch, instead of naming ``get_inputs``.

    Raises:
        UsageError: naming what ``get_inputs`` returned.
    """
    if isinstance(batch, torch.Tensor) or any(
        isinstance(leaf, torch.Tensor) for leaf in _leaves(batch)
    ):
        return
    shown = repr(batch)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise UsageError(
        f"get_inputs({step}) returned {type(batch).__name__} {shown}, which holds no tensor; "
        "expected a tensor, or a tuple, list or dict of tensors",
        hint="build the inputs with torch, e.g. return torch.randint(0, 100, (4, 16))",
    )


def to_device(batch: Any, device: torch.device, where: str = "inputs") -> Any:
    """Move every tensor of a nested batch to the device; scalars pass through.

    Raises:
        UsageError: a leaf is neither a tensor nor a plain scalar.
    """
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device, f"{where}[{key!r}]") for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        moved = [to_device(value, device, f"{where}[{i}]") for i, value in enumerate(batch)]
        return type(batch)(moved) if isinstance(batch, list) else tuple(moved)
    if isinstance(batch, _SCALAR_LEAVES):
        return batch
    raise UsageError(
        f"{where} is {type(batch).__module__}.{type(batch).__name__}; expected a tensor, "
        "or a tuple, list or dict of tensors",
        hint="return torch tensors from get_inputs(), e.g. torch.from_numpy(array)",
    )


@dataclass
class StepRunner:
    """Runs the user's steps on the device."""

    loaded: LoadedModel
    device: torch.device
    train: bool
    optimizer_name: str
    warn: Callable[[str], None]
    # Right after each step's sync, given when it returned (the recorder's
    # ``synced``: waits for the device when the run needs it); returns when
    # the step ended.
    after_sync: Callable[[float], float] = lambda ended: ended
    mode: str = "lazy"  # "dynamo": the step (or forward) runs under torch.compile

    def __post_init__(self) -> None:
        self.model = move_model(self.loaded.model, self.device)
        if self.train and self.loaded.step_fn is not None:  # reliability: say it
            self.warn(IGNORED_TRAIN_WARNING)
        if self.loaded.step_fn is None:
            # The user's own step() decides its modes; ours are inference or --train.
            self.model.train(self.train)
        self.optimizer = None
        if self.train and self.loaded.step_fn is None:
            self.optimizer = _make_optimizer(self.optimizer_name, self.model)
        self._warned_sum_loss = False
        self._input_origins = InputOrigins()  # the user's line behind each input
        # --mode dynamo: the user's step, else the model's forward, under torch.compile.
        self._step_fn = self.loaded.step_fn
        self._forward: Any = self.model
        if self.mode == "dynamo":
            from xlacli.child.dynamo import compile_with_openxla

            if self._step_fn is not None:
                self._step_fn = compile_with_openxla(self._step_fn)
            else:
                self._forward = compile_with_openxla(self.model)

    def run(self, step: int) -> dict[str, Any]:
        """Run one step and sync; returns what the step event records about it.

        The clock spans what a bare loop's would (the batch, its move, the
        step, the sync, and the device wait when the run waits): xlacli's own
        bookkeeping (the batch's signature, the recorder) runs outside it.
        """
        started = time.perf_counter()
        if self._input_origins.enabled:
            host_batch, origins = self._input_origins.call(
                lambda: self.loaded.inputs_for_step(step), lambda b: _named_leaves(b, top=True)
            )
        else:
            host_batch, origins = self.loaded.inputs_for_step(step), {}
        check_batch(host_batch, step)
        batch = to_device(host_batch, self.device)
        try:
            result = self._run_user_step(batch, step)
        except (UsageError, ModelError):
            raise
        except (Exception, SystemExit) as error:
            raise ModelError(
                f"step {step} raised {describe_exception(error)}",
                details=format_user_traceback(error),
                hint=failure_hint(error) or self._split_hint(error, batch),
            ) from None
        ended = self._sync(step)
        wall_time_s = ended - started
        if result is None and self.loaded.step_fn is None and step == 0:
            self.warn(NONE_OUTPUT_WARNING)
        del result  # kept alive until the sync, as the contract says
        return {
            "wall_time_s": wall_time_s,
            "input_signature": input_signature(host_batch),
            "input_origins": origins,
        }

    def _run_user_step(self, batch: Any, step: int) -> Any:
        if self._step_fn is not None:
            return self._step_fn(self.model, batch, step)
        if not self.train:
            with torch.no_grad():
                return call_model(self._forward, self._forward_batch(batch))
        assert self.optimizer is not None
        self.optimizer.zero_grad(set_to_none=True)
        output = call_model(self._forward, self._forward_batch(batch))
        loss = self._loss(output, batch)
        loss.backward()
        self.optimizer.step()
        return loss

    def _forward_batch(self, batch: Any) -> Any:
        """What forward() takes: ``forward_inputs(batch)`` when the file defines it."""
        hook = self.loaded.forward_inputs
        return batch if hook is None else hook(batch)

    def _split_hint(self, error: BaseException, batch: Any) -> str | None:
        """Labels that went to forward(): say how the batch is split."""
        wrong_arity = isinstance(error, TypeError) and "positional argument" in str(error)
        if wrong_arity and self.loaded.step_fn is None and isinstance(batch, (tuple, list)):
            return INPUT_SPLIT_HINT
        return None

    def _loss(self, output: Any, batch: Any) -> torch.Tensor:
        if self.loaded.loss_fn is not None:
            return self.loaded.loss_fn(output, batch)
        loss = output.get("loss") if isinstance(output, dict) else getattr(output, "loss", None)
        if isinstance(loss, torch.Tensor):
            return loss
        tensor = next((leaf for leaf in _leaves(output) if isinstance(leaf, torch.Tensor)), None)
        if tensor is None:
            raise UsageError(
                "--train needs a loss: the model returned no tensor",
                hint="define loss_fn(output, batch) in the model file",
            )
        if not self._warned_sum_loss:
            self.warn("no loss_fn and no .loss on the output: training on output.sum()")
            self._warned_sum_loss = True
        return tensor.float().sum()

    def _sync(self, step: int) -> float:
        """Sync; returns when the step ended (``after_sync`` says)."""
        try:
            torch_xla.sync()
            return self.after_sync(time.perf_counter())
        except Exception as error:
            raise _step_failed(step, error) from None

    def finish(self, last_step: int) -> None:
        """Wait for the last steps' device work (a step need not wait for its
        own): a failure there is the last step's."""
        try:
            xm.wait_device_ops()
        except Exception as error:
            raise _step_failed(last_step, error) from None


def _step_failed(step: int, error: Exception) -> ModelError:
    return ModelError(
        f"torch_xla failed to compile or run step {step}'s graph: {type(error).__name__}: {error}",
        details=format_user_traceback(error),
    )


# --- reliability (issue 9): messages and the model's move to the device ---
IGNORED_TRAIN_WARNING = (
    "--train and --optimizer are ignored: the model file defines step(), which runs "
    "each step its own way (call optimizer.step() in it to train)"
)
NONE_OUTPUT_WARNING = (
    "forward() returned None: nothing was computed on the XLA device, so no graph is "
    "compiled; return the output tensor(s) from forward()"
)
INPUT_SPLIT_HINT = (
    "the whole batch from get_inputs() goes to forward(*batch) (a dict: forward(**batch)) "
    "and to loss_fn(output, batch); to keep labels out of forward(), define "
    "forward_inputs(batch) in the model file, e.g. `return batch[0]`"
)


def move_model(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """``model.to(device)``; a failure there (out of memory) is the model's (exit 3).

    Raises:
        ModelError: with the user's frames and, for memory, what to try.
    """
    try:
        return model.to(device)
    except (Exception, SystemExit) as error:
        memory = isinstance(error, MemoryError) or "allocate" in str(error).lower()
        raise ModelError(
            f"moving the model to the XLA device raised {describe_exception(error)}",
            details=format_user_traceback(error),
            hint="the model's weights do not fit in memory: try a smaller model or dtype"
            if memory
            else None,
        ) from None


# --- end reliability ---


def call_model(model: torch.nn.Module, batch: Any) -> Any:
    """Call the model the way the batch is shaped: dict -> kwargs, tuple -> args."""
    if isinstance(batch, dict):
        return model(**batch)
    if isinstance(batch, (tuple, list)):
        return model(*batch)
    return model(batch)


def _make_optimizer(name: str, model: torch.nn.Module) -> torch.optim.Optimizer:
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise UsageError("--train: the model has no trainable parameters")
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3)
    return torch.optim.SGD(params, lr=1e-2)
