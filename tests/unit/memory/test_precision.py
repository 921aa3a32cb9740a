"""analysis/memory/precision.py: the mix as requested and as compiled, and its warnings."""

import math
import re

from tests.conftest import ASSETS
from tests.unit.memory.conftest import golden_hlo, golden_step_facts
from xlacli.analysis.memory.precision import (
    backend_note,
    graph_precision,
    matmul_flops,
    precision_mix,
    precision_warnings,
)
from xlacli.hlo import parse_hlo, parse_hlo_file


def test_dot_flops_from_dimension_numbers():
    dimensions = "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
    dimensions += "rhs_contracting_dims={1}"
    module = parse_hlo(
        "HloModule m\nENTRY e {\n"
        "  a = bf16[4,8,16]{2,1,0} parameter(0)\n"
        "  b = bf16[4,16,32]{2,1,0} parameter(1)\n"
        f"  ROOT d = f32[4,8,32]{{2,1,0}} dot(a, b), {dimensions}\n"
        "}\n"
    )
    mix = precision_mix(module)
    assert mix.dot_flops == {"bf16": 2 * 4 * 8 * 32 * 16}
    assert mix.instructions == {"bf16": 2, "f32": 1}
    assert mix.bytes == {"bf16": 2 * (4 * 8 * 16 + 4 * 16 * 32), "f32": 4 * 4 * 8 * 32}


def test_convolution_flops_from_the_window():
    module = parse_hlo_file(ASSETS / "hlo" / "torch_conv.before_optimizations.txt")
    text = (ASSETS / "hlo" / "torch_conv.before_optimizations.txt").read_text()
    expected = 0
    for out, kernel_name in re.findall(r"= f32\[([\d,]+)\]\S* convolution\(%\S+, %(\S+)\)", text):
        kernel = re.search(rf"%{re.escape(kernel_name)} = f32\[([\d,]+)\]", text).group(1)
        _out_features, i, kh, kw = map(int, kernel.split(","))  # dim_labels bf01_oi01->bf01
        expected += 2 * math.prod(map(int, out.split(","))) * i * kh * kw
    assert expected
    entry = module.entry.instructions
    by_name = {instruction.name: instruction for instruction in entry}
    counted = [matmul_flops(i, by_name) for i in entry if i.opcode == "convolution"]
    assert sum(flops for _, flops in counted) == expected


def test_autocast_asks_for_bf16_and_xla_cpu_computes_f32():
    precision = graph_precision(
        golden_hlo("tiny_autocast", "before"), golden_hlo("tiny_autocast", "after"), "xla:bf16"
    )
    assert precision.requested.dot_share("bf16") == 1.0
    assert precision.optimized.dot_share("f32") == 1.0
    assert precision.requested.total_dot_flops == precision.optimized.total_dot_flops
    assert "XLA:CPU upcasts" in backend_note(precision)


def test_f64_leak_is_flagged():
    precision = graph_precision(golden_hlo("tiny_autocast", "before"), None, "xla:bf16")
    assert precision.requested.instructions.get("f64", 0) > 0
    (warning,) = precision_warnings(precision)
    assert "f64" in warning and "numpy" in warning


def test_autocast_for_another_device_type_is_flagged():
    autocast = golden_step_facts("tiny_autocast_cpu")["autocast"]
    assert autocast == ["cpu:bf16"]
    precision = graph_precision(golden_hlo("tiny_autocast_cpu", "before"), None, autocast[0])
    (warning,) = precision_warnings(precision)
    assert "100% of the matmul FLOPs are f32" in warning and '"cpu"' in warning


def test_plain_run_has_nothing_to_say():
    precision = graph_precision(golden_hlo("tiny", "before"), golden_hlo("tiny", "after"), None)
    assert precision.requested.dot_share("f32") == 1.0
    assert precision_warnings(precision) == []
    assert backend_note(precision) is None
