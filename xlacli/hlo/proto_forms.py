"""Structured proto values printed the way XLA prints them in HLO text.

Each function takes the sub-message (``Window``, ``PaddingConfig``,
``OpSharding``...) and returns the attribute value as ``hlo_instruction.cc``
and its helpers (``WindowUtil::ToString``, ``PaddingConfigToString``,
``ConvolutionDimensionNumbersToString``, ``HloSharding::ToString``) print
it; None means a form not printed here, which the caller keeps as textproto.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xlacli.hlo.proto_tree import ProtoMessage, quote_text
from xlacli.hlo.proto_values import enum_name

EMPTY = ProtoMessage({})


def braced(numbers: Iterable[int]) -> str:
    """``{1,0}``."""
    return "{" + ",".join(map(str, numbers)) + "}"


def slice_text(dims: tuple[ProtoMessage, ...]) -> str:
    """``{[0:2], [1:3]}``; strides are printed only when one is not 1."""
    strided = any(d.number("stride", 1) != 1 for d in dims)
    return (
        "{"
        + ", ".join(
            f"[{d.number('start')}:{d.number('limit')}"
            + (f":{d.number('stride')}]" if strided else "]")
            for d in dims
        )
        + "}"
    )


def padding_text(config: ProtoMessage) -> str:
    """``0_1x2_3``, or ``0_1_0x2_3_1`` when a dimension has interior padding."""
    dims = config.messages("dimensions")
    interior = any(d.number("interior_padding") for d in dims)
    return "x".join(
        f"{d.number('edge_padding_low')}_{d.number('edge_padding_high')}"
        + (f"_{d.number('interior_padding')}" if interior else "")
        for d in dims
    )


def window_text(window: ProtoMessage) -> str:
    """``{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}``."""
    dims = window.messages("dimensions")

    def joined(read: Callable[[ProtoMessage], object]) -> str:
        return "x".join(str(read(d)) for d in dims)

    parts = [f"size={joined(lambda d: d.number('size'))}"] if dims else []
    if any(d.number("stride") != 1 for d in dims):
        parts.append(f"stride={joined(lambda d: d.number('stride'))}")
    if any(d.number("padding_low") or d.number("padding_high") for d in dims):
        pads = joined(lambda d: f"{d.number('padding_low')}_{d.number('padding_high')}")
        parts.append(f"pad={pads}")
    if any(d.number("base_dilation") != 1 for d in dims):
        parts.append(f"lhs_dilate={joined(lambda d: d.number('base_dilation'))}")
    if any(d.number("window_dilation") != 1 for d in dims):
        parts.append(f"rhs_dilate={joined(lambda d: d.number('window_dilation'))}")
    if any(d.flag("window_reversal") for d in dims):
        parts.append(f"rhs_reversal={joined(lambda d: int(d.flag('window_reversal')))}")
    return "{" + " ".join(parts) + "}"


def dim_labels_text(numbers: ProtoMessage) -> str | None:
    """``b01f_01io->b01f`` from ``ConvolutionDimensionNumbers`` (None if out of range)."""
    try:
        lhs = _labels(numbers, "input_batch_dimension", "input_feature_dimension", "bf", "input")
        rhs = _labels(
            numbers, "kernel_input_feature_dimension", "kernel_output_feature_dimension", "io",
            "kernel",
        )  # fmt: skip
        out = _labels(numbers, "output_batch_dimension", "output_feature_dimension", "bf", "output")
    except IndexError:
        return None
    return f"{lhs}_{rhs}->{out}"


def _labels(numbers: ProtoMessage, first: str, second: str, letters: str, side: str) -> str:
    spatial = numbers.numbers(f"{side}_spatial_dimensions")
    labels = ["?"] * (2 + len(spatial))
    labels[numbers.number(first)] = letters[0]
    labels[numbers.number(second)] = letters[1]
    for index, dim in enumerate(spatial):
        labels[dim] = str(index)
    return "".join(labels)


def replica_groups_text(groups: tuple[ProtoMessage, ...], iota: ProtoMessage | None) -> str:
    """``{{0,1},{2,3}}``, or the iota form ``[2,2]<=[4]`` (``T(1,0)`` when transposed)."""
    if iota is None:
        return "{" + ",".join(braced(g.numbers("replica_ids")) for g in groups) + "}"
    shape = f"[{iota.number('num_replica_groups')},{iota.number('num_devices_per_group')}]"
    return shape + _iota_devices(
        iota.numbers("iota_reshape_dims"), iota.numbers("iota_transpose_perm")
    )


def _iota_devices(reshape: tuple[int, ...], perm: tuple[int, ...]) -> str:
    text = f"<=[{','.join(map(str, reshape))}]"
    if perm and list(perm) != sorted(perm):
        text += f"T({','.join(map(str, perm))})"
    return text


def source_target_pairs_text(pairs: tuple[ProtoMessage, ...]) -> str:
    """``{{0,1},{1,0}}``."""
    return "{" + ",".join(f"{{{p.number('source')},{p.number('target')}}}" for p in pairs) + "}"


_SHARDING_FIELDS = frozenset(
    {"type", "tile_assignment_dimensions", "tile_assignment_devices", "iota_reshape_dims",
     "iota_transpose_perm", "replicate_on_last_tile_dim", "last_tile_dims", "tuple_shardings"}
)  # fmt: skip


def sharding_text(sharding: ProtoMessage) -> str | None:
    """An ``OpSharding`` as ``{replicated}``, ``{maximal device=1}``, ``{devices=[2,1]0,1}``,
    ``{devices=[4,2]<=[8]}``, or a tuple of those; None for other forms (metadata, shard groups).
    """
    if set(sharding.fields) - _SHARDING_FIELDS:
        return None
    kind = enum_name(sharding, "type", "REPLICATED")
    if kind == "TUPLE":
        elements = [sharding_text(t) for t in sharding.messages("tuple_shardings")]
        return None if None in elements else "{" + ", ".join(map(str, elements)) + "}"
    if kind in ("REPLICATED", "MANUAL", "UNKNOWN", "UNREDUCED"):
        return "{" + kind.lower() + "}"
    devices = sharding.numbers("tile_assignment_devices")
    if kind == "MAXIMAL" and len(devices) == 1:
        return f"{{maximal device={devices[0]}}}"
    if kind != "OTHER":
        return None
    reshape = sharding.numbers("iota_reshape_dims")
    assignment = (
        _iota_devices(reshape, sharding.numbers("iota_transpose_perm"))
        if reshape
        else ",".join(map(str, devices))
    )
    tiles = ",".join(map(str, sharding.numbers("tile_assignment_dimensions")))
    text = f"devices=[{tiles}]{assignment}"
    if sharding.flag("replicate_on_last_tile_dim"):
        text += " last_tile_dim_replicate"
    last = sharding.all("last_tile_dims")
    if last:
        text += " last_tile_dims={" + ", ".join(str(d).lower() for d in last) + "}"
    return "{" + text + "}"


def frontend_attributes_text(attributes: ProtoMessage) -> str | None:
    """``FrontendAttributes`` as ``{key="value",...}``, keys sorted; None if malformed."""
    entries = attributes.messages("map")
    if len(entries) != len(attributes.all("map")) or set(attributes.fields) - {"map"}:
        return None
    items = sorted((e.text("key"), e.text("value")) for e in entries)
    if not items:
        return ""  # XLA prints no frontend_attributes when there are none
    return "{" + ",".join(f"{key}={quote_text(value)}" for key, value in items) + "}"
