"""The HloProto's stack frame index: each instruction's whole Python stack."""

from xlacli.parse.frames import Frame
from xlacli.parse.hlo_stacks import parse_hlo_stacks, read_hlo_stacks


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def hlo_proto() -> bytes:
    """``train.py:8 opt.step()`` -> ``optimizer.py:517`` -> ``sgd.py:375``, and one
    instruction without a stack (made by the autograd engine)."""
    index = b"".join(
        [
            field(1, "/u/train.py"),
            field(1, "/lib/torch/optim/optimizer.py"),
            field(1, "/lib/torch/optim/sgd.py"),
            field(2, "train"),
            field(2, "wrapper"),
            field(2, "_single_tensor_sgd"),
            field(3, field(1, 1) + field(2, 1) + field(3, 8)),
            field(3, field(1, 2) + field(2, 2) + field(3, 517)),
            field(3, field(1, 3) + field(2, 3) + field(3, 375)),
            field(4, field(1, 1)),
            field(4, field(1, 2) + field(2, 1)),
            field(4, field(1, 3) + field(2, 2)),
        ]
    )
    update = field(
        7,
        field(1, "aten__add") + field(3, "/lib/torch/optim/sgd.py") + field(4, 375) + field(15, 3),
    )
    backward = field(7, field(1, "aten__mm") + field(2, "xlacli_backward_of@/u/m.py@3/aten__mm"))
    computation = (
        field(1, "main")
        + field(2, field(1, "add.3") + update)
        + field(2, field(1, "dot.4") + backward)
    )
    module = field(1, "SyncTensorsGraph.5") + field(3, computation) + field(17, index)
    return field(1, module)


def test_each_instruction_gets_its_whole_stack_innermost_first():
    update, backward = parse_hlo_stacks(hlo_proto())
    assert update.ir_op == "aten::add"
    assert update.stack == (
        Frame("_single_tensor_sgd", "/lib/torch/optim/sgd.py", 375),
        Frame("wrapper", "/lib/torch/optim/optimizer.py", 517),
        Frame("train", "/u/train.py", 8),
    )
    assert backward.ir_op == "aten::mm" and backward.stack == ()
    # Names join an op to its profile events; op_name carries the IR scope.
    assert (update.name, backward.name) == ("add.3", "dot.4")
    assert backward.op_name == "xlacli_backward_of@/u/m.py@3/aten__mm"


def test_a_missing_or_broken_file_is_none(tmp_path):
    assert read_hlo_stacks(tmp_path / "missing.pb") is None
    broken = tmp_path / "broken.pb"
    broken.write_bytes(hlo_proto()[:-7])
    assert read_hlo_stacks(broken) is None


def test_an_instruction_of_a_called_computation_names_its_caller():
    """A reduce's body (torch_xla builds it with no metadata) belongs to the reduce."""
    body = field(1, "add_body") + field(2, field(1, "add.1") + field(7, b"")) + field(5, 7)
    reduce = field(1, "reduce.2") + field(7, field(1, "aten__sum")) + field(38, 7)
    entry = field(1, "main") + field(2, reduce) + field(5, 8)
    module = field(1, "SyncTensorsGraph.3") + field(3, body) + field(3, entry)
    inner, outer = parse_hlo_stacks(field(1, module))
    assert (inner.name, inner.op_type, inner.caller) == ("add.1", "", "reduce.2")
    assert (outer.name, outer.caller) == ("reduce.2", "")
