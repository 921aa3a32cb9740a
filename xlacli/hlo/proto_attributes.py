"""An ``HloInstructionProto``'s own fields as the attributes XLA prints (``dimensions={1,0}``).

Mapped, printed the way ``hlo_instruction.cc`` prints them: ``fusion_kind``
(``kind``), ``tuple_index`` (``index``), ``dimensions`` (``iota_dimension``
for iota, ``inferred_dimension`` for reshape), ``slice_dimensions``
(``slice``), ``dynamic_slice_sizes``, ``padding_config`` (``padding``),
``window``, ``convolution_dimension_numbers`` (``dim_labels``),
``feature_group_count``, ``batch_group_count``, ``dot_dimension_numbers``,
``precision_config`` (``operand_precision``), gather and scatter dimension
numbers, ``gather_slice_sizes`` (``slice_sizes``), ``indices_are_sorted``,
``unique_indices``, ``comparison_direction`` (``direction``),
``comparison_type`` (``type``), ``exponent_bits``, ``mantissa_bits``,
``distribution``, ``rng_algorithm`` (``algorithm``), ``delta``, ``epsilon``,
``feature_index``, ``channel_id``, ``replica_groups`` and
``collective_device_list`` (``replica_groups``), ``use_global_device_ids``,
``constrain_layout``, ``source_target_pairs``, ``is_host_transfer``,
``is_stable``, ``custom_call_target``, ``custom_call_has_side_effect``,
``custom_call_api_version`` (``api_version``), ``custom_call_schedule``
(``schedule``), ``backend_config``, ``sharding`` (replicated, manual,
maximal, tiled and tuple forms), ``frontend_attributes``,
``async_execution_thread``, ``is_composite``, ``k``, ``largest``,
``fft_type``, ``fft_length``. Attributes XLA prints even at their default
(``index=0``, ``dimensions={}``, ``replica_groups={}``) are printed for the
opcodes that print them.

Every other field, and a mapped one whose value has a form not printed
here (a sharding with metadata, say), is kept under its proto field name
with its textproto as the value (``result_accuracy={mode: HIGHEST}``): it
prints, parses back, and a diff still sees it change.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from xlacli.hlo import proto_forms as forms
from xlacli.hlo.proto_forms import EMPTY, braced
from xlacli.hlo.proto_tree import ProtoMessage, format_values, quote_text
from xlacli.hlo.proto_values import ShapeDefect, enum_name
from xlacli.hlo.statements import closes_in_order

Pairs = list[tuple[str, str]]
_WORD = re.compile(r"[A-Za-z_][\w.\-]*")
# Reads a field given the opcode; None when its value has a form not printed here.
Reader = Callable[[ProtoMessage, str], "Pairs | None"]

_COLLECTIVES = frozenset(
    {"all-reduce", "all-reduce-start", "all-gather", "all-gather-start", "all-to-all",
     "reduce-scatter", "collective-broadcast", "ragged-all-to-all"}
)  # fmt: skip
_ALWAYS_DIMENSIONS = frozenset(
    {"broadcast", "transpose", "reduce", "reverse", "concatenate", "sort", "all-gather",
     "all-gather-start", "reduce-scatter", "get-dimension-size", "set-dimension-size"}
)  # fmt: skip
_BATCH_NORM = frozenset({"batch-norm-training", "batch-norm-inference", "batch-norm-grad"})
_FLAGS = ("indices_are_sorted", "unique_indices", "use_global_device_ids", "constrain_layout",
          "is_host_transfer", "is_stable", "custom_call_has_side_effect",
          "is_composite")  # fmt: skip
# Dimension-number lists: (field, printed even when empty); index_vector_dim is a number.
_GATHER = (("offset_dims", True), ("collapsed_slice_dims", True), ("start_index_map", True),
           ("operand_batching_dims", False), ("start_indices_batching_dims", False),
           ("index_vector_dim", True))  # fmt: skip
_SCATTER = (("update_window_dims", True), ("inserted_window_dims", True),
            ("scatter_dims_to_operand_dims", True), ("input_batching_dims", False),
            ("scatter_indices_batching_dims", False), ("index_vector_dim", True))  # fmt: skip
_DOT = (("lhs_batch_dimensions", False), ("lhs_contracting_dimensions", True),
        ("rhs_batch_dimensions", False), ("rhs_contracting_dimensions", True))  # fmt: skip


def _found(value: object) -> str:
    return "a message" if isinstance(value, ProtoMessage) else repr(value)


def _number(field: str, key: str = "", above: int | None = None) -> Reader:
    """A number (0 when absent); with ``above``, printed only when greater."""

    def read(m: ProtoMessage, _: str) -> Pairs:
        value = m.get(field)
        if value is not None and not isinstance(value, int | float):
            raise ShapeDefect(m, f"a number for {field}", _found(value), field)
        if above is not None and not (isinstance(value, int) and value > above):
            return []
        text = f"{value:g}" if isinstance(value, float) else str(value or 0)
        return [(key or field, text)]

    return read


def _string(field: str, key: str, skip: str = "", quoted: bool = True) -> Reader:
    def read(m: ProtoMessage, _: str) -> Pairs:
        value = m.text(field)
        if not value or value == skip:
            return []
        if not quoted and not _WORD.fullmatch(value):  # printed bare: it must read back
            raise ShapeDefect(m, f"a name for {field}", _found(value), field)
        return [(key, quote_text(value) if quoted else value)]

    return read


def _enum(field: str, key: str, default: str, lower: bool = False) -> Reader:
    """An enum printed by name, unless it is ``default`` (and the opcode does not insist)."""

    def read(m: ProtoMessage, opcode: str) -> Pairs:
        value = enum_name(m, field) or default
        if value == default and opcode not in _ALWAYS.get(field, ()):
            return []
        return [(key, value.lower() if lower else value)]

    return read


def _flag(field: str) -> Reader:
    return lambda m, _: [(field, "true")] if m.flag(field) else []


def _numbers(field: str, key: str) -> Reader:
    return lambda m, _: [(key, braced(m.numbers(field)))]


def _listed(field: str, keys: tuple[tuple[str, bool], ...]) -> Reader:
    def read(m: ProtoMessage, _: str) -> Pairs:
        numbers = m.message(field) or EMPTY
        pairs = []
        for name, always in keys:
            key = name.replace("_dimensions", "_dims")
            if name == "index_vector_dim":
                pairs.append((key, str(numbers.number(name))))
            elif always or numbers.all(name):
                pairs.append((key, braced(numbers.numbers(name))))
        return pairs

    return read


def _dimensions(m: ProtoMessage, opcode: str) -> Pairs:
    dims = m.numbers("dimensions")
    if opcode == "iota":
        return [("iota_dimension", str(dims[0] if dims else 0))]
    if opcode == "reshape":
        return [("inferred_dimension", str(dims[0]))] if dims else []
    return [("dimensions", braced(dims))] if dims or opcode in _ALWAYS_DIMENSIONS else []


def _precision(m: ProtoMessage, _: str) -> Pairs | None:
    config = m.message("precision_config") or EMPTY
    if set(config.fields) - {"operand_precision"}:
        return None
    precisions = [str(p).lower() for p in config.all("operand_precision")]
    if all(p == "default" for p in precisions):
        return []
    return [("operand_precision", "{" + ",".join(precisions) + "}")]


def _replica_groups(m: ProtoMessage, opcode: str) -> Pairs | None:
    devices = m.message("collective_device_list")
    if devices is not None and not m.all("replica_groups"):
        groups, iota = (
            devices.messages("replica_groups"),
            devices.message("iota_replica_group_list"),
        )
    else:
        groups, iota = m.messages("replica_groups"), None
    if not groups and iota is None and opcode not in _COLLECTIVES:
        return []
    return [("replica_groups", forms.replica_groups_text(groups, iota))]


def _backend_config(m: ProtoMessage, _: str) -> Pairs:
    config = m.text("backend_config")
    if not config:
        return []
    # JSON configs print as they are; anything else quoted.
    raw = config.startswith("{") and config.endswith("}") and "\n" not in config
    return [("backend_config", config if raw and closes_in_order(config) else quote_text(config))]


def _message_form(field: str, key: str, form: Callable[[ProtoMessage], str | None]) -> Reader:
    def read(m: ProtoMessage, _: str) -> Pairs | None:
        text = form(m.message(field) or EMPTY)
        if text is None:
            return None
        return [(key, text)] if text else []

    return read


_READERS: dict[str, Reader] = {
    "fusion_kind": _string("fusion_kind", "kind", quoted=False),
    "tuple_index": _number("tuple_index", "index"),
    "dimensions": _dimensions,
    "slice_dimensions": lambda m, _: [("slice", forms.slice_text(m.messages("slice_dimensions")))],
    "dynamic_slice_sizes": _numbers("dynamic_slice_sizes", "dynamic_slice_sizes"),
    "padding_config": _message_form("padding_config", "padding", forms.padding_text),
    "window": _message_form("window", "window", forms.window_text),
    "convolution_dimension_numbers": _message_form(
        "convolution_dimension_numbers", "dim_labels", forms.dim_labels_text
    ),
    "feature_group_count": _number("feature_group_count", above=1),
    "batch_group_count": _number("batch_group_count", above=1),
    "dot_dimension_numbers": _listed("dot_dimension_numbers", _DOT),
    "precision_config": _precision,
    "gather_dimension_numbers": _listed("gather_dimension_numbers", _GATHER),
    "gather_slice_sizes": _numbers("gather_slice_sizes", "slice_sizes"),
    "scatter_dimension_numbers": _listed("scatter_dimension_numbers", _SCATTER),
    "comparison_direction": _string("comparison_direction", "direction", quoted=False),
    "comparison_type": _string("comparison_type", "type", quoted=False),
    "exponent_bits": _number("exponent_bits"),
    "mantissa_bits": _number("mantissa_bits"),
    "distribution": _enum("distribution", "distribution", "RNG_INVALID", lower=True),
    "rng_algorithm": _enum("rng_algorithm", "algorithm", "RNG_DEFAULT", lower=True),
    "delta": _number("delta"),
    "epsilon": _number("epsilon"),
    "feature_index": _number("feature_index"),
    "channel_id": _number("channel_id", above=0),
    "replica_groups": _replica_groups,
    # Both lists set: the device list is kept as it is, beside the printed groups.
    "collective_device_list": lambda m, o: (
        None if m.all("replica_groups") else _replica_groups(m, o)
    ),
    "source_target_pairs": lambda m, _: [
        ("source_target_pairs", forms.source_target_pairs_text(m.messages("source_target_pairs")))
    ],
    "custom_call_target": _string("custom_call_target", "custom_call_target"),
    "custom_call_api_version": _enum(
        "custom_call_api_version", "api_version", "API_VERSION_ORIGINAL"
    ),
    "custom_call_schedule": _enum("custom_call_schedule", "schedule", "SCHEDULE_NONE"),
    "backend_config": _backend_config,
    "sharding": _message_form("sharding", "sharding", forms.sharding_text),
    "frontend_attributes": _message_form(
        "frontend_attributes", "frontend_attributes", forms.frontend_attributes_text
    ),
    "async_execution_thread": _string("async_execution_thread", "async_execution_thread", "main"),
    "k": _number("k"),
    "largest": lambda m, _: [("largest", "true" if m.flag("largest") else "false")],
    "fft_type": _enum("fft_type", "fft_type", "FFT"),
    "fft_length": _numbers("fft_length", "fft_length"),
    **{field: _flag(field) for field in _FLAGS},
}
# The opcodes that print a field even when the proto leaves it out (at its default).
_ALWAYS: dict[str, frozenset[str]] = {
    "tuple_index": frozenset({"get-tuple-element"}),
    "dimensions": _ALWAYS_DIMENSIONS | {"iota"},
    "slice_dimensions": frozenset({"slice"}),
    "dynamic_slice_sizes": frozenset({"dynamic-slice"}),
    "padding_config": frozenset({"pad"}),
    "dot_dimension_numbers": frozenset({"dot"}),
    "gather_dimension_numbers": frozenset({"gather"}),
    "gather_slice_sizes": frozenset({"gather"}),
    "scatter_dimension_numbers": frozenset({"scatter"}),
    "exponent_bits": frozenset({"reduce-precision"}),
    "mantissa_bits": frozenset({"reduce-precision"}),
    "distribution": frozenset({"rng"}),
    "rng_algorithm": frozenset({"rng-bit-generator"}),
    "delta": frozenset({"rng-get-and-update-state"}),
    "epsilon": _BATCH_NORM,
    "feature_index": _BATCH_NORM,
    "replica_groups": _COLLECTIVES,
    "source_target_pairs": frozenset({"collective-permute", "collective-permute-start"}),
    "k": frozenset({"topk"}),
    "largest": frozenset({"topk"}),
    "fft_type": frozenset({"fft"}),
    "fft_length": frozenset({"fft"}),
}


def instruction_attributes(
    instruction: ProtoMessage, opcode: str, handled: frozenset[str]
) -> Pairs:
    """The attributes of an instruction from its fields, but ``handled`` (ids, shape, ...).

    Returns:
        ``(key, value as printed)`` pairs: the mapped fields first, then the
        others, each under its field name with its textproto as the value.
    """
    pairs: Pairs = []
    kept: list[str] = []
    fields = instruction.fields
    for field, read in _READERS.items():
        if field not in fields and opcode not in _ALWAYS.get(field, ()):
            continue
        mapped = read(instruction, opcode)
        if mapped is None:
            kept.append(field)
        else:
            pairs.extend(mapped)
    for field in fields:
        if field not in handled and (field not in _READERS or field in kept):
            pairs.append((field, format_values(instruction.all(field))))
    return pairs
