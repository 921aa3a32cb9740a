"""The HLO protobuf's stacks, on dumps of a real training step (examples/mlp.py,
``--train``, torch_xla 2.9 on CPU): protobuf's C runtime and the wire reader
read the same ops."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ASSETS
from xlacli.parse import hlo_stacks
from xlacli.parse.hlo_proto_subset import message_classes
from xlacli.parse.hlo_stacks import parse_hlo_stacks, read_hlo_stacks

HLO = ASSETS / "hlo"
DUMPS = {stage: HLO / f"torch_mlp_train.{stage}_optimizations.pb" for stage in ("before", "after")}


@pytest.fixture(params=sorted(DUMPS))
def dump(request: pytest.FixtureRequest) -> bytes:
    return DUMPS[request.param].read_bytes()


def test_the_c_runtime_decodes_it() -> None:
    # protobuf is a dependency: the fast path is the one users run.
    assert message_classes() is not None


def test_both_readers_give_the_same_ops(dump: bytes) -> None:
    decoded = parse_hlo_stacks(dump)
    assert decoded == hlo_stacks._wire_stacks(dump)
    assert len(decoded) > 100


def test_a_bare_module_reads_like_the_whole_proto(dump: bytes) -> None:
    inner = hlo_stacks._first(dump, 1)  # HloProto.hlo_module
    assert inner is not None
    assert parse_hlo_stacks(inner) == parse_hlo_stacks(dump)


def test_ops_carry_the_user_line_and_the_calling_instruction() -> None:
    ops = parse_hlo_stacks(DUMPS["after"].read_bytes())
    at_loss = [op for op in ops if op.op_type == "aten__logsumexp" and op.stack]
    assert at_loss
    innermost = at_loss[0].stack[0]
    assert (Path(innermost.file).name, innermost.function) == ("mlp.py", "loss_fn")
    # After optimization most ops sit in fusions: each names the fusion calling it.
    assert any(op.caller.endswith("fusion") for op in at_loss)
    assert at_loss[0].shape.startswith("11[")  # F32 = 11 in xla_data.proto
    assert any(op.caller == "" for op in ops)  # the entry computation's own


def test_a_truncated_file_is_none_not_an_error(tmp_path: Path, dump: bytes) -> None:
    broken = tmp_path / "broken.pb"
    broken.write_bytes(dump[: len(dump) // 2])
    assert read_hlo_stacks(broken) is None
    assert read_hlo_stacks(tmp_path / "missing.pb") is None
