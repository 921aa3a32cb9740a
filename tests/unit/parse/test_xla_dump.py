import pytest

from xlacli.parse.xla_dump import classify_dump_file, list_dumped_modules, prune_backend_noise


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "module_0000.SyncTensorsGraph.24.before_optimizations.txt",
            (0, "SyncTensorsGraph.24", "hlo_before"),
        ),
        (
            "module_0012.SyncTensorsGraph.24.cpu_after_optimizations.txt",
            (12, "SyncTensorsGraph.24", "hlo_after"),
        ),
        ("module_0001.jit_f.after_optimizations.txt", (1, "jit_f", "hlo_after")),
        ("module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt", (1, "jit_f", "hlo_after")),
        (
            "module_0003.SyncTensorsGraph.9.tpu_after_optimizations.txt",
            (3, "SyncTensorsGraph.9", "hlo_after"),
        ),
        (
            "module_0000.SyncTensorsGraph.24.cpu_after_optimizations-buffer-assignment.txt",
            (0, "SyncTensorsGraph.24", "buffer_assignment"),
        ),
        (
            "module_0000.SyncTensorsGraph.24.cpu_after_optimizations-memory-usage-report.txt",
            (0, "SyncTensorsGraph.24", "memory_usage"),
        ),
        (
            "module_0000.SyncTensorsGraph.24.before_optimizations.hlo.pb",
            (0, "SyncTensorsGraph.24", "hlo_stacks"),
        ),
        (
            "module_0000.SyncTensorsGraph.24.cpu_after_optimizations.hlo.pb",
            (0, "SyncTensorsGraph.24", "hlo_after_stacks"),
        ),
        ("module_0000.SyncTensorsGraph.24.broadcast_add_fusion_kernel_module.ir-no-opt.ll", None),
        ("module_0000.SyncTensorsGraph.24.obj-file.broadcast_add_fusion_kernel_module.o", None),
        ("module_0000.SyncTensorsGraph.24.debug_options", None),
        ("README.md", None),
    ],
)
def test_classify(name, expected):
    assert classify_dump_file(name) == expected


def test_list_in_compile_order_and_prune(tmp_path):
    for name in (
        "module_0010.SyncTensorsGraph.9.before_optimizations.txt",
        "module_0002.SyncTensorsGraph.7.before_optimizations.txt",
        "module_0002.SyncTensorsGraph.7.cpu_after_optimizations.txt",
        "module_0002.SyncTensorsGraph.7.x_kernel_module.ir-with-opt.ll",
    ):
        (tmp_path / name).write_text("x")
    removed = prune_backend_noise(tmp_path)
    assert [p.name for p in removed] == [
        "module_0002.SyncTensorsGraph.7.x_kernel_module.ir-with-opt.ll"
    ]
    modules = list_dumped_modules(tmp_path)
    assert [m.module_id for m in modules] == [2, 10]
    assert set(modules[0].files) == {"hlo_before", "hlo_after"}


def test_missing_folder():
    from pathlib import Path

    assert list_dumped_modules(Path("/nonexistent/xla-dump")) == []
