"""Regenerate the real HloModuleProto textproto goldens in this folder.

    PJRT_DEVICE=CPU python tests/assets/hlo/make_proto_goldens.py

Runs ``make_goldens.py``'s ``conv`` and ``mlp_train`` models, and a graph of
many opcodes (``ops``: gather, scatter, sort, topk, cumsum, argmax, pad...), in a child with
``--xla_dump_hlo_as_text --xla_dump_hlo_as_proto`` and ``XLA_HLO_DEBUG=1``,
so XLA writes each compiled module twice: as HLO text (``.txt``) and as a
binary ``HloProto`` (``.hlo.pb``). The binary is turned into protobuf text by
the ``protobuf`` package's own printer (``text_format``), through a
descriptor of the ``xla`` messages built here from the fields of
``xla/service/hlo.proto`` and ``xla/xla_data.proto`` (no ``hlo_pb2`` ships
with torch_xla; fields missing here would be dropped, which the test comparing
both files would see). Each pair is written as
``proto_<variant>.<stage>.pbtxt`` and ``proto_<variant>.<stage>.hlo``.
Needs torch_xla and ``protobuf`` (installed with the ``profile`` extra); the
tests never run this script.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("conv", "mlp_train", "ops")

_I64, _I32, _U32, _U64 = "int64", "int32", "uint32", "uint64"
_STR, _BYTES, _BOOL, _FLOAT, _DOUBLE = "string", "bytes", "bool", "float", "double"
# message -> {field: (number, type)}; "*type" is repeated, "map:K:V" a map.
SCHEMA: dict[str, dict[str, tuple[int, str]]] = {
    "HloProto": {"hlo_module": (1, "HloModuleProto")},
    "HloModuleProto": {
        "name": (1, _STR), "entry_computation_name": (2, _STR), "entry_computation_id": (6, _I64),
        "computations": (3, "*HloComputationProto"), "host_program_shape": (4, "ProgramShapeProto"),
        "id": (5, _I64), "schedule": (7, "HloScheduleProto"),
        "input_output_alias": (8, "HloInputOutputAliasProto"),
        "buffer_donor": (18, "HloBufferDonorProto"),
        "stack_frame_index": (17, "StackFrameIndexProto"),
        "frontend_attributes": (19, "FrontendAttributes"),
    },
    "HloComputationProto": {
        "name": (1, _STR), "instructions": (2, "*HloInstructionProto"),
        "program_shape": (4, "ProgramShapeProto"), "id": (5, _I64), "root_id": (6, _I64),
        "is_fusion_computation": (7, _BOOL), "execution_thread": (8, _STR),
    },
    "HloInstructionProto": {
        "name": (1, _STR), "opcode": (2, _STR), "shape": (3, "ShapeProto"),
        "metadata": (7, "OpMetadata"), "literal": (8, "LiteralProto"),
        "parameter_number": (9, _I64), "fusion_kind": (11, _STR), "tuple_index": (13, _I64),
        "dimensions": (14, "*int64"), "window": (15, "Window"),
        "convolution_dimension_numbers": (16, "ConvolutionDimensionNumbers"),
        "feature_group_count": (50, _I64), "batch_group_count": (58, _I64),
        "slice_dimensions": (17, "*SliceDimensions"), "exponent_bits": (18, _I32),
        "mantissa_bits": (19, _I32), "dynamic_slice_sizes": (20, "*int64"),
        "padding_config": (21, "PaddingConfig"), "outfeed_config": (22, _BYTES),
        "distribution": (23, "RandomDistribution"), "epsilon": (24, _FLOAT),
        "feature_index": (25, _I64), "channel_id": (26, _I64), "infeed_config": (27, _BYTES),
        "custom_call_target": (28, _STR), "outfeed_shape": (29, "ShapeProto"),
        "dot_dimension_numbers": (30, "DotDimensionNumbers"), "fft_type": (31, "FftType"),
        "fft_length": (32, "*int64"), "comparison_direction": (63, _STR),
        "gather_dimension_numbers": (33, "GatherDimensionNumbers"),
        "gather_slice_sizes": (34, "*int64"), "id": (35, _I64), "operand_ids": (36, "*int64"),
        "control_predecessor_ids": (37, "*int64"), "called_computation_ids": (38, "*int64"),
        "sharding": (40, "OpSharding"), "backend_config": (43, _BYTES),
        "replica_groups": (49, "*ReplicaGroup"), "all_reduce_id": (45, _I64),
        "use_global_device_ids": (71, _BOOL), "is_host_transfer": (47, _BOOL),
        "is_stable": (60, _BOOL), "scatter_dimension_numbers": (48, "ScatterDimensionNumbers"),
        "precision_config": (51, "PrecisionConfig"), "source_target_pairs": (52, "*SourceTarget"),
        "constrain_layout": (56, _BOOL), "operand_shapes_with_layout": (57, "*ShapeProto"),
        "custom_call_has_side_effect": (65, _BOOL), "delta": (66, _I64),
        "indices_are_sorted": (67, _BOOL), "frontend_attributes": (68, "FrontendAttributes"),
        "unique_indices": (69, _BOOL), "rng_algorithm": (70, "RandomAlgorithm"),
        "comparison_type": (72, _STR), "async_execution_thread": (79, _STR), "k": (81, _I64),
        "largest": (85, _BOOL), "is_composite": (89, _BOOL),
    },
    "SliceDimensions": {"start": (1, _I64), "limit": (2, _I64), "stride": (3, _I64)},
    "ShapeProto": {
        "element_type": (2, "PrimitiveType"), "dimensions": (3, "*int64"),
        "is_dynamic_dimension": (6, "*bool"), "tuple_shapes": (4, "*ShapeProto"),
        "layout": (5, "LayoutProto"),
    },
    "LayoutProto": {
        "minor_to_major": (1, "*int64"), "tiles": (6, "*TileProto"),
        "tail_padding_alignment_in_elements": (16, _I64), "element_size_in_bits": (7, _I64),
        "memory_space": (8, _I64), "dynamic_shape_metadata_prefix_bytes": (15, _I64),
    },
    "TileProto": {"dimensions": (1, "*int64")},
    "ProgramShapeProto": {
        "parameters": (1, "*ShapeProto"), "result": (2, "ShapeProto"),
        "parameter_names": (3, "*string"),
    },
    "OpMetadata": {
        "op_type": (1, _STR), "op_name": (2, _STR), "source_file": (3, _STR),
        "source_line": (4, _I32), "source_end_line": (17, _I32), "source_column": (18, _I32),
        "source_end_column": (19, _I32), "deduplicated_name": (12, _STR),
        "stack_frame_id": (15, _I32), "scheduling_name": (16, _STR),
    },
    "LiteralProto": {
        "shape": (1, "ShapeProto"), "preds": (2, "*bool"), "s8s": (15, _BYTES),
        "u8s": (3, _BYTES), "s32s": (4, "*int32"), "s64s": (5, "*int64"), "u32s": (6, "*uint32"),
        "u64s": (7, "*uint64"), "f32s": (8, "*float"), "f64s": (9, "*double"),
        "c64s": (12, "*float"), "c128s": (18, "*double"), "tuple_literals": (10, "*LiteralProto"),
        "f16s": (11, _BYTES), "bf16s": (13, _BYTES), "u16s": (16, _BYTES), "s16s": (17, _BYTES),
    },
    "Window": {"dimensions": (1, "*WindowDimension")},
    "WindowDimension": {
        "size": (1, _I64), "stride": (2, _I64), "padding_low": (3, _I64),
        "padding_high": (4, _I64), "window_dilation": (5, _I64), "base_dilation": (6, _I64),
        "window_reversal": (7, _BOOL),
    },
    "ConvolutionDimensionNumbers": {
        "input_batch_dimension": (7, _I64), "input_feature_dimension": (8, _I64),
        "input_spatial_dimensions": (11, "*int64"), "kernel_input_feature_dimension": (3, _I64),
        "kernel_output_feature_dimension": (4, _I64), "kernel_spatial_dimensions": (6, "*int64"),
        "output_batch_dimension": (9, _I64), "output_feature_dimension": (10, _I64),
        "output_spatial_dimensions": (12, "*int64"),
    },
    "DotDimensionNumbers": {
        "lhs_contracting_dimensions": (1, "*int64"), "rhs_contracting_dimensions": (2, "*int64"),
        "lhs_batch_dimensions": (3, "*int64"), "rhs_batch_dimensions": (4, "*int64"),
    },
    "GatherDimensionNumbers": {
        "offset_dims": (1, "*int64"), "collapsed_slice_dims": (2, "*int64"),
        "start_index_map": (3, "*int64"), "index_vector_dim": (4, _I64),
        "operand_batching_dims": (5, "*int64"), "start_indices_batching_dims": (6, "*int64"),
    },
    "ScatterDimensionNumbers": {
        "update_window_dims": (1, "*int64"), "inserted_window_dims": (2, "*int64"),
        "scatter_dims_to_operand_dims": (3, "*int64"), "index_vector_dim": (4, _I64),
        "input_batching_dims": (5, "*int64"), "scatter_indices_batching_dims": (6, "*int64"),
    },
    "PaddingConfig": {"dimensions": (1, "*PaddingConfigDimension")},
    "PaddingConfigDimension": {
        "edge_padding_low": (1, _I64), "edge_padding_high": (2, _I64),
        "interior_padding": (3, _I64),
    },
    "OpSharding": {
        "type": (1, "OpSharding.Type"), "tile_assignment_dimensions": (3, "*int64"),
        "tile_assignment_devices": (4, "*int64"), "tuple_shardings": (5, "*OpSharding"),
        "replicate_on_last_tile_dim": (6, _BOOL), "metadata": (7, "*OpMetadata"),
        "last_tile_dims": (8, "*OpSharding.Type"), "iota_reshape_dims": (9, "*int64"),
        "iota_transpose_perm": (10, "*int32"),
    },
    "ReplicaGroup": {"replica_ids": (1, "*int64")},
    "SourceTarget": {"source": (1, _I64), "target": (2, _I64)},
    "PrecisionConfig": {"operand_precision": (1, "*PrecisionConfig.Precision")},
    "FrontendAttributes": {"map": (1, "map:string:string")},
    "HloScheduleProto": {"sequences": (1, "map:int64:InstructionSequence")},
    "InstructionSequence": {"instruction_ids": (1, "*int64")},
    "HloInputOutputAliasProto": {"entries": (1, "*AliasEntryProto")},
    "AliasEntryProto": {
        "output_shape_index": (1, "*int64"), "parameter_number": (2, _I64),
        "parameter_shape_index": (3, "*int64"), "kind": (4, "Kind"),
    },
    "HloBufferDonorProto": {"entries": (1, "*BufferDonorEntryProto")},
    "BufferDonorEntryProto": {
        "parameter_number": (1, _I64), "parameter_shape_index": (2, "*int64"),
    },
    "StackFrameIndexProto": {
        "file_names": (1, "*string"), "function_names": (2, "*string"),
        "file_locations": (3, "*FileLocation"), "stack_frames": (4, "*StackFrame"),
    },
    "FileLocation": {
        "file_name_id": (1, _I32), "function_name_id": (2, _I32), "line": (3, _I32),
        "column": (4, _I32),
    },
    "StackFrame": {"file_location_id": (1, _I32), "parent_frame_id": (2, _I32)},
}  # fmt: skip
ENUMS = {
    "PrimitiveType": {
        "PRIMITIVE_TYPE_INVALID": 0, "PRED": 1, "S1": 30, "S2": 26, "S4": 21, "S8": 2, "S16": 3,
        "S32": 4, "S64": 5, "U1": 31, "U2": 27, "U4": 22, "U8": 6, "U16": 7, "U32": 8, "U64": 9,
        "F16": 10, "F32": 11, "BF16": 16, "F64": 12, "F8E5M2": 19, "F8E4M3": 28, "F8E4M3FN": 20,
        "F8E4M3B11FNUZ": 23, "F8E3M4": 29, "F8E5M2FNUZ": 24, "F8E4M3FNUZ": 25, "F4E2M1FN": 32,
        "F8E8M0FNU": 33, "C64": 15, "C128": 18, "TUPLE": 13, "OPAQUE_TYPE": 14, "TOKEN": 17,
        "BUFFER": 34,
    },
    "RandomDistribution": {"RNG_INVALID": 0, "RNG_UNIFORM": 1, "RNG_NORMAL": 2},
    "RandomAlgorithm": {"RNG_DEFAULT": 0, "RNG_THREE_FRY": 1, "RNG_PHILOX": 2},
    "FftType": {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3},
    "OpSharding.Type": {"REPLICATED": 0, "MAXIMAL": 1, "TUPLE": 2, "OTHER": 3, "MANUAL": 4,
                     "UNKNOWN": 5, "UNREDUCED": 6},
    "PrecisionConfig.Precision": {"DEFAULT": 0, "HIGH": 1, "HIGHEST": 2, "PACKED_NIBBLE": 3},
    "Kind": {"UNDEFINED_ALIAS": 0, "MAY_ALIAS": 1, "MUST_ALIAS": 2},
}  # fmt: skip


def hlo_proto_class():  # type: ignore[no-untyped-def]
    """The ``xla.HloProto`` message class, from a descriptor built out of SCHEMA."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    scalar = descriptor_pb2.FieldDescriptorProto
    types = {
        _I64: scalar.TYPE_INT64, _I32: scalar.TYPE_INT32, _U32: scalar.TYPE_UINT32,
        _U64: scalar.TYPE_UINT64, _STR: scalar.TYPE_STRING, _BYTES: scalar.TYPE_BYTES,
        _BOOL: scalar.TYPE_BOOL, _FLOAT: scalar.TYPE_FLOAT, _DOUBLE: scalar.TYPE_DOUBLE,
    }  # fmt: skip
    file = descriptor_pb2.FileDescriptorProto(
        name="xla_subset.proto", package="xla", syntax="proto3"
    )
    messages = {}
    for name in SCHEMA:
        messages[name] = file.message_type.add(name=name)
    for name, values in ENUMS.items():
        # Enum values are scoped like siblings of their enum: nested ones stay apart.
        owner, _, enum_name = name.rpartition(".")
        enum = (messages[owner].enum_type if owner else file.enum_type).add(name=enum_name)
        for value_name, number in values.items():
            enum.value.add(name=value_name, number=number)

    def set_type(field, kind: str) -> None:  # type: ignore[no-untyped-def]
        if kind in types:
            field.type = types[kind]
        else:
            field.type = scalar.TYPE_ENUM if kind in ENUMS else scalar.TYPE_MESSAGE
            field.type_name = f".xla.{kind}"

    for name, fields in SCHEMA.items():
        message = messages[name]
        for field_name, (number, kind) in fields.items():
            field = message.field.add(name=field_name, number=number)
            field.label = scalar.LABEL_REPEATED if kind[0] in "*m" else scalar.LABEL_OPTIONAL
            if kind.startswith("map:"):
                _, key, value = kind.split(":")
                entry = message.nested_type.add(name=f"{field_name.title()}Entry")
                entry.options.map_entry = True
                set_type(entry.field.add(name="key", number=1, label=scalar.LABEL_OPTIONAL), key)
                set_type(
                    entry.field.add(name="value", number=2, label=scalar.LABEL_OPTIONAL), value
                )
                field.type, field.type_name = scalar.TYPE_MESSAGE, f".xla.{name}.{entry.name}"
            else:
                set_type(field, kind.lstrip("*"))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("xla.HloProto"))


def textproto(binary: bytes) -> str:
    """A dumped ``HloProto`` as protobuf text, printed by protobuf itself."""
    from google.protobuf import text_format

    message = hlo_proto_class()()
    message.ParseFromString(binary)
    return text_format.MessageToString(message)


def capture(variant: str) -> None:
    """Dump a variant as text and binary proto; write the pairs here."""
    from make_goldens import dump_variant  # beside this script

    with tempfile.TemporaryDirectory() as dump:
        dump_variant(variant, dump, "--xla_dump_hlo_as_text --xla_dump_hlo_as_proto", __file__)
        for stage in ("before_optimizations", "after_optimizations"):
            found = sorted(Path(dump).glob(f"module_*.{stage}.hlo.pb")) or sorted(
                Path(dump).glob(f"module_*.cpu_{stage}.hlo.pb")
            )
            if len(found) != 1:
                raise SystemExit(f"{variant}: expected one {stage} proto, found {len(found)}")
            binary = found[0]
            text = binary.with_name(binary.name.removesuffix(".hlo.pb") + ".txt")
            target = HERE / f"proto_{variant}.{stage}"
            shutil.copyfile(text, f"{target}.hlo")
            Path(f"{target}.pbtxt").write_text(textproto(binary.read_bytes()))
            print(f"{target.name}.pbtxt and .hlo written")


def run_ops_child() -> None:
    """One graph of many opcodes (gather, scatter, sort, topk, cumsum, argmax, pad, iota,
    integer compares, strided slices...): each prints attributes the models above do not."""
    import torch
    import torch.nn.functional as F
    import torch_xla

    device = torch_xla.device()
    torch.manual_seed(0)
    x = torch.randn(4, 6).to(device)
    index = torch.tensor([2, 0, 3]).to(device)
    rows = x.index_select(0, index)  # gather
    added = torch.zeros(5, 6, device=device).index_add(0, index, rows)  # scatter
    ordered, order = torch.sort(x, dim=1, stable=True)
    top = torch.topk(x, 2, dim=1).values
    running = torch.cumsum(x, dim=0)  # reduce-window
    best = torch.argmax(x, dim=1)  # a reduce of two operands
    padded = F.pad(x, (1, 2))
    counts = torch.arange(6, device=device).to(torch.int32)
    masked = torch.where(counts > 2, ordered, top.sum())
    outputs = [added, order, running, best, padded, masked, x[1:3, ::2], x.T.clamp(-1, 1)]
    torch_xla.sync()
    for output in outputs:
        output.cpu()


if __name__ == "__main__":
    if sys.argv[1:] == ["--child", "ops"]:
        run_ops_child()
    elif sys.argv[1:2] == ["--child"]:
        from make_goldens import run_child  # beside this script

        run_child(sys.argv[2])
    else:
        for name in sys.argv[1:] or VARIANTS:
            capture(name)
