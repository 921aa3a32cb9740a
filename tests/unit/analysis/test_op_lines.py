"""Every op at a user line: through its stack, its backward scope, what a
fusion or call holds, or what an op XLA added reads."""

import pytest

from xlacli.analysis.profile.op_lines import OPTIMIZER_STEP, Attribution, LineFinder, lines_by_time
from xlacli.hlo import parse_hlo
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.hlo_stacks import StackedOp

ROOTS = CodeRoots(("/lib/",), "/xlacli/")
LINEAR = Frame("forward", "/lib/site-packages/torch/nn/modules/linear.py", 134)
USER = Frame("forward", "/u/model.py", 12)
HARNESS = Frame("_run_user_step", "/xlacli/capture/steps.py", 223)
SGD = Frame("_single_tensor_sgd", "/lib/site-packages/torch/optim/sgd.py", 375)

HLO = """HloModule m

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %inner = f32[4]{0} exponential(%p)
  ROOT %root = f32[4]{0} maximum(%inner, %inner)
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %dot.1 = f32[4]{0} multiply(%a, %a)
  %dot.2 = f32[4]{0} multiply(%dot.1, %a)
  %copy.3 = f32[4]{0} copy(%dot.2)
  %sgd.4 = f32[4]{0} add(%copy.3, %a)
  %step.6 = f32[4]{0} subtract(%sgd.4, %a)
  ROOT %fusion.5 = f32[4]{0} fusion(%step.6), kind=kLoop, calls=%fused
}
"""

STACKS = [
    StackedOp("aten__mm", (LINEAR, USER), name="dot.1", op_name="aten__mm"),
    # A backward op: no frames on the autograd thread, the child's scope instead.
    StackedOp("aten__mm", (), name="dot.2", op_name="xlacli_backward_of@/u/model.py@12.3/aten__mm"),
    StackedOp("", (), name="copy.3", op_name=""),  # XLA added it: no metadata
    StackedOp("aten__add", (SGD, HARNESS), name="sgd.4", op_name="aten__add"),
    StackedOp("", (), name="fusion.5", op_name=""),
    # A script's own optimizer.step() (line 40): the user's line, as an optimizer update.
    StackedOp("aten__sub", (SGD, Frame("train", "/u/train.py", 40)), name="step.6", op_name="s"),
    StackedOp("aten__exp", (Frame("f", "/u/model.py", 20),), name="inner", op_name="aten__exp"),
    StackedOp("aten__max", (Frame("f", "/u/model.py", 21),), name="root", op_name="aten__max"),
]


@pytest.fixture
def find():
    module = parse_hlo(HLO)
    finder = LineFinder(module, STACKS, ROOTS)
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    return lambda name: finder.find(by_name[name])


def test_the_users_frame_not_the_library_line(find):
    assert find("dot.1") == Attribution("/u/model.py:12", backward=False)


def test_a_backward_op_at_its_forward_line(find):
    assert find("dot.2") == Attribution("/u/model.py:12", backward=True)


def test_an_op_xla_added_at_what_it_reads(find):
    assert find("copy.3") == Attribution("/u/model.py:12", backward=True)


def test_a_fusion_at_its_roots_line(find):
    assert find("fusion.5") == Attribution("/u/model.py:21", backward=False)


def test_the_optimizer_step_xlacli_runs_is_its_own_row(find):
    assert find("sgd.4") == Attribution(OPTIMIZER_STEP, backward=False, optimizer=True)
    assert find("a") is None  # a parameter has no line


def test_a_scripts_optimizer_step_is_its_line_as_an_update(find):
    assert find("step.6") == Attribution("/u/train.py:40", backward=False, optimizer=True)


def test_lines_by_time_sum_forward_and_backward():
    forward = Attribution("/u/model.py:12", backward=False)
    backward = Attribution("/u/model.py:12", backward=True)
    other = Attribution("/u/model.py:30", backward=False)
    rows, share = lines_by_time([(3.0, forward), (2.0, backward), (1.0, other), (2.0, None)])
    assert [(r.line, r.time_s, r.forward_s, r.backward_s) for r in rows] == [
        ("/u/model.py:12", 5.0, 3.0, 2.0),
        ("/u/model.py:30", 1.0, 1.0, 0.0),
    ]
    assert share == pytest.approx(6.0 / 8.0)


def test_lines_by_time_keep_the_optimizers_update_apart():
    update = Attribution("/u/train.py:40", backward=False, optimizer=True)
    forward = Attribution("/u/train.py:40", backward=False)
    rows, _ = lines_by_time([(3.0, update), (1.0, forward)])
    assert [(r.time_s, r.forward_s, r.backward_s, r.optimizer_s) for r in rows] == [
        (4.0, 1.0, 0.0, 3.0)
    ]


CPU_PARALLEL = """HloModule m

%fused_computation.1.clone (p.0: f32[4]) -> f32[4] {
  %p.0 = f32[4]{0} parameter(0)
  %reverse.1 = f32[4]{0} reverse(%p.0), dimensions={0}
  ROOT %copy.2 = f32[4]{0} copy(%reverse.1)
}

%parallel_copy_reverse_fusion (p.1: f32[4]) -> f32[4] {
  %p.1 = f32[4]{0} parameter(0)
  ROOT %copy_reverse_fusion.clone = f32[4]{0} fusion(%p.1), kind=kLoop, calls=%fused_computation.1.clone
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %conv.3 = f32[4]{0} multiply(%a, %a)
  ROOT %call.4 = f32[4]{0} call(%conv.3), to_apply=%parallel_copy_reverse_fusion
}
"""


def test_an_op_xla_moved_into_a_parallel_call_at_what_the_call_reads():
    """XLA:CPU clones a fusion into a ``parallel_*`` computation it calls: the copy
    inside reads a parameter, which is what the call passed in."""
    module = parse_hlo(CPU_PARALLEL)
    stacks = [StackedOp("aten__mm", (LINEAR, USER), name="conv.3", op_name="aten__mm")]
    finder = LineFinder(module, stacks, ROOTS)
    by_name = {i.name: i for c in module.computations for i in c.instructions}
    expected = Attribution("/u/model.py:12", backward=False)
    assert finder.find(by_name["copy_reverse_fusion.clone"]) == expected
    assert finder.find(by_name["call.4"]) == expected
    assert finder.find(by_name["a"]) is None  # the entry's parameters have no caller


ALIASED = """HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }

ENTRY %main (w: f32[4], x: f32[4]) -> (f32[4], f32[4]) {
  %w = f32[4]{0} parameter(0)
  %x = f32[4]{0} parameter(1)
  %copy.1 = f32[4]{0} copy(%w)
  %use.2 = f32[4]{0} multiply(%copy.1, %x)
  %update.3 = f32[4]{0} subtract(%w, %use.2)
  %copy.4 = f32[4]{0} copy(%x)
  ROOT %out = (f32[4]{0}, f32[4]{0}) tuple(%update.3, %copy.4)
}
"""


def test_a_copy_of_a_weight_updated_in_place_is_at_the_update():
    """XLA keeps a copy of a weight the step overwrites while it still reads it:
    the copy costs what the in-place update costs, at the optimizer's line."""
    module = parse_hlo(ALIASED)
    stacks = [
        StackedOp("aten__mul", (Frame("f", "/u/model.py", 30),), name="use.2", op_name="m"),
        StackedOp("aten__sub", (SGD, Frame("train", "/u/train.py", 40)), name="update.3"),
    ]
    finder = LineFinder(module, stacks, ROOTS)
    by_name = {i.name: i for i in module.entry.instructions}
    assert finder.find(by_name["copy.1"]) == Attribution(
        "/u/train.py:40", backward=False, optimizer=True
    )
    assert finder.find(by_name["copy.4"]) is None  # an input no output overwrites
