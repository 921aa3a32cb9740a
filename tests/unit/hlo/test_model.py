"""The HLO model: bytes of an array shape as XLA counts them, and the parser's fast constructor."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from xlacli.hlo.model import element_bits
from xlacli.hlo.shapes import ELEMENT_TYPES, read_shape


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("f32[2,3]{1,0}", 24),
        ("bf16[4]", 8),
        ("pred[3]", 3),
        ("c128[2]", 32),
        ("f8e4m3fn[10]", 10),
        ("f8e4m3b11fnuz[10]", 10),
        ("s4[3]", 3),  # sub-byte types are stored a byte each...
        ("s4[3]{0:E(4)}", 2),  # ...unless the layout packs them (rounded up)
        ("f4e2m1fn[8]{0:E(4)}", 4),
        ("f32[<=8,2]", 64),  # a bounded dynamic dimension at its bound
        ("f32[?,2]", 0),
        ("token[]", 0),
        ("f32[]", 4),
    ],
)
def test_byte_size(text: str, size: int) -> None:
    shape, _ = read_shape(text, 0, {})
    assert shape.byte_size == size  # type: ignore[union-attr]


def test_every_element_type_has_bits() -> None:
    sized = {kind: element_bits(kind) for kind in ELEMENT_TYPES}
    assert {kind for kind, bits in sized.items() if bits == 0} == {"token", "opaque"}
    assert sized["s1"] == 1 and sized["u2"] == 2 and sized["f8e8m0fnu"] == 8


def test_make_instruction_builds_what_the_dataclass_builds() -> None:
    import dataclasses

    from xlacli.hlo.model import Instruction, Metadata, make_instruction

    shape, _ = read_shape("f32[2]{0}", 0, {})
    values = dict(
        name="n", opcode="add", shape=shape, operands=("a", "b"),
        attributes=MappingProxyType({"k": "v"}), metadata=Metadata(op_type="x"),
        is_root=True, parameter_number=3, literal="1", called_computations=("c",), line=7,
    )  # fmt: skip
    assert [field.name for field in dataclasses.fields(Instruction)] == list(values)
    made, built = make_instruction(*values.values()), Instruction(**values)
    assert made == built and repr(made) == repr(built) and made.line == 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "m"  # type: ignore[misc]
