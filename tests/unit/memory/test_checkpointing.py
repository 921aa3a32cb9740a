"""analysis/memory/checkpointing.py on torch_xla's checkpoint and on a plain run."""

import re

from tests.unit.memory.conftest import golden_hlo, golden_text
from xlacli.analysis.memory.checkpointing import checkpoint_facts


def test_checkpointed_blocks():
    facts = checkpoint_facts(
        golden_hlo("tiny_checkpoint", "before"), golden_hlo("tiny_checkpoint", "after")
    )
    text = golden_text("tiny_checkpoint", "hlo.before.txt")
    assert facts.opt_barriers == len(re.findall(r" opt-barrier\(", text)) == 2
    assert facts.opt_barriers_optimized == 0  # XLA:CPU expands them before scheduling
    assert facts.recomputed_regions == 2
    # The matmuls the checkpoint added to the program, and how many XLA kept: on
    # XLA:CPU, whose CSE runs again once the barriers are gone, none of these.
    assert facts.recomputed_dots == _dots("tiny_checkpoint", "before") - _dots("tiny", "before")
    assert facts.recomputed_dots == 2
    kept = _dots("tiny_checkpoint", "after") - _dots("tiny", "after")
    assert facts.recomputed_dots_kept == kept == 0


def _dots(variant, stage):
    return len(re.findall(r" dot\(", golden_text(variant, f"hlo.{stage}.txt")))


def test_plain_run_has_no_checkpoint():
    facts = checkpoint_facts(golden_hlo("tiny", "before"), golden_hlo("tiny", "after"))
    assert (facts.opt_barriers, facts.recomputed_regions, facts.recomputed_dots) == (0, 0, 0)


def test_without_hlo():
    assert checkpoint_facts(None, None) is None


def test_a_checkpoint_per_layer_of_a_deep_model_is_read_in_one_pass():
    # One walk per barrier over what follows it was layers x instructions (issue 40:
    # ~4 x 10^7 steps here); now one pass over the instructions, then a step per
    # barrier per distinct set of barriers. Each layer's recomputed matmul belongs
    # to its own barrier's region.
    from types import SimpleNamespace

    from xlacli.hlo.model import ArrayShape

    def instruction(name, opcode, operands, line):
        metadata = SimpleNamespace(op_type="aten__mm", source=f"m.py:{line}")
        shape = ArrayShape("f32", (4, 4))
        return SimpleNamespace(
            name=name, opcode=opcode, operands=operands, shape=shape, metadata=metadata
        )

    layers, width = 1_000, 40  # 84k instructions
    forward = [instruction("x", "parameter", [], 0)]
    for layer in range(layers):
        forward.append(instruction(f"f{layer}", "dot", [forward[-1].name], layer))
    backward = []
    last = forward[-1].name
    for layer in reversed(range(layers)):
        backward.append(instruction(f"b{layer}", "opt-barrier", [last, f"f{layer}"], layer))
        backward.append(instruction(f"r{layer}", "dot", [f"b{layer}"], layer))
        for step in range(width):  # the layer's backward ops
            backward.append(instruction(f"g{layer}.{step}", "add", [backward[-1].name], -1))
        last = backward[-1].name
    entry = SimpleNamespace(instructions=forward + backward)
    facts = checkpoint_facts(SimpleNamespace(entry=entry, computations=[entry]), None)
    assert (facts.opt_barriers, facts.recomputed_dots) == (layers, layers)
    assert facts.recomputed_regions == layers
