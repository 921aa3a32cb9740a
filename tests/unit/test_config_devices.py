"""``[tool.xlacli] devices``: the SPMD device count every command uses."""

from __future__ import annotations

import pytest

from xlacli.capture.env import capture_environment
from xlacli.config import load_config
from xlacli.errors import UsageError
from xlacli.run_folder.request import CaptureRequest, RunPaths


def test_devices_is_read_from_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.xlacli]\ndevices = 4\n")
    assert load_config(tmp_path).devices == 4


@pytest.mark.parametrize("value", ["0", '"four"'])
def test_a_bad_devices_value_is_a_usage_error(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(f"[tool.xlacli]\ndevices = {value}\n")
    with pytest.raises(UsageError, match="devices"):
        load_config(tmp_path)


def test_devices_become_virtual_cpu_devices_only_on_cpu(tmp_path):
    request = CaptureRequest(model_path="m.py", model_entry=None, steps=1, devices=4)
    paths = RunPaths(tmp_path)
    assert capture_environment({}, request, paths)["CPU_NUM_DEVICES"] == "4"
    on_tpu = capture_environment({"PJRT_DEVICE": "TPU"}, request, paths)
    assert "CPU_NUM_DEVICES" not in on_tpu
    without = CaptureRequest(model_path="m.py", model_entry=None, steps=1)
    assert "CPU_NUM_DEVICES" not in capture_environment({}, without, paths)
