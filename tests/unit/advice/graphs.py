"""Hand-built graphs for the advisors: ops with Python stacks, as hlo.before.pb holds them."""

from __future__ import annotations

from xlacli.analysis.advice.inputs import AdviceInputs, GraphArtifacts
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.run_report import GraphRecord, RunReport

MODEL = "/project/model.py"
LIBRARY = "/lib/python3.11/site-packages/torch/nn/modules/module.py"
LINEAR = "/lib/python3.11/site-packages/torch/nn/modules/linear.py"
ROOTS = CodeRoots(("/lib/python3.11/",), "/xlacli/")

# A decoder: Block.forward (lines 5-8) called from the loop at line 14 of Decoder.forward.
SOURCE = """\
import torch

class Block(torch.nn.Module):
    def forward(self, x):
        x = self.attn(x)
        x = x + self.up(x)
        return torch.relu(x)

class Decoder(torch.nn.Module):
    def forward(self, x):
        x = self.embed(x)
        for layer in self.layers:
            y = x * 2
            x = layer(x)
        return self.head(x)
"""
CALL_LINE = 14
PLUMBING = (Frame("_wrapped_call_impl", LIBRARY, 1775), Frame("_call_impl", LIBRARY, 1786))
OUTER = (Frame("forward", MODEL, CALL_LINE), *PLUMBING[::-1], Frame("main", "/xlacli/run.py", 3))


def call(*inner: Frame) -> tuple[Frame, ...]:
    """A stack (innermost first) through the layer call at line 14."""
    return (*inner, PLUMBING[1], PLUMBING[0], *OUTER)


def block_ops(shape: str = "11[2,8]", extra: tuple[StackedOp, ...] = ()) -> list[StackedOp]:
    """One Block's ops: attention (a nested module call), a linear and a relu."""
    attn = Frame("forward", MODEL, 5)
    nested = call(Frame("attn", "/project/attn.py", 2), PLUMBING[1], PLUMBING[0], attn)
    return [
        StackedOp("aten__mm", nested, shape),
        StackedOp("aten__softmax", nested, shape),
        StackedOp("aten__addmm", call(Frame("forward", LINEAR, 134), *PLUMBING[::-1],
                                      Frame("forward", MODEL, 6)), shape),
        StackedOp("aten__add", call(Frame("forward", MODEL, 6)), shape),
        StackedOp("aten__relu", call(Frame("forward", MODEL, 7)), shape),
        StackedOp("xla__device_data", call(Frame("forward", MODEL, 6)), "11[]"),
        *extra,
    ]  # fmt: skip


def outside_ops(count: int) -> list[StackedOp]:
    """Ops of the embedding and the head, outside the loop."""
    frame = (Frame("forward", MODEL, 11), *OUTER[1:])
    return [StackedOp("aten__addmm", frame, "11[2,8]") for _ in range(count)]


def graph(graph_hash: str = "g1", compile_time_s: float = 2.0) -> GraphRecord:
    return GraphRecord(
        hash=graph_hash,
        site=None,
        trigger="step_end",
        frames=(),
        ir_nodes=None,
        hlo_instructions=None,
        optimized_hlo_instructions=None,
        fusions=None,
        input_bytes=None,
        output_bytes=None,
        temp_bytes=None,
        compilations=1,
        compile_time_s=compile_time_s,
        executions=1,
        execute_time_s=0.001,
        total_execute_time_s=0.001,
        first_step=0,
    )


def report(*graphs: GraphRecord, **fields: object) -> RunReport:
    values: dict = dict(
        model=MODEL, device="CPU", steps=4, steps_requested=4, train=False, run_dir="/run",
        compilations=len(graphs), executions=len(graphs), total_compile_time_s=1.0,
        total_execute_time_s=0.01, graphs=graphs,
    )  # fmt: skip
    values.update(fields)
    return RunReport(**values)


def inputs(stacks: list[StackedOp], compile_time_s: float = 2.0) -> AdviceInputs:
    record = graph(compile_time_s=compile_time_s)
    artifacts = GraphArtifacts(record, tuple(stacks))
    sources = {MODEL: SOURCE}
    return AdviceInputs((artifacts,), ROOTS, read_source=sources.get)


ADAMW = "/lib/python3.11/site-packages/torch/optim/adamw.py"
STEP_LINE = 30  # the model file's optimizer.step()


def update_ops(parameters: int, shape: str = "11[2,8]") -> list[StackedOp]:
    """``parameters`` parameters' optimizer updates of one shape: the same four
    computations and a constant each, under ``optimizer.step()``."""
    stack = (
        Frame("_single_tensor_adamw", ADAMW, 380),
        Frame("step", ADAMW, 220),
        Frame("train", MODEL, STEP_LINE),
    )
    update = ("aten__mul", "aten__add", "aten__sqrt", "aten__div", "prim__Constant")
    return [StackedOp(op, stack, shape) for _ in range(parameters) for op in update]
