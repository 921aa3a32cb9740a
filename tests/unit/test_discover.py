"""The parent's check of a model file: no torch, precise answers."""

from __future__ import annotations

import pytest

from xlacli.capture.discover import check_model_file, parse_target
from xlacli.errors import UsageError


def write(tmp_path, text):
    path = tmp_path / "model.py"
    path.write_text(text)
    return path


def test_definitions_inside_try_and_if_blocks_count(tmp_path):
    path = write(
        tmp_path,
        "try:\n    import transformers\n    def get_model():\n        return 1\n"
        "except ImportError:\n    def get_model():\n        return 2\n"
        "if True:\n    example_inputs = (1,)\n",
    )
    assert check_model_file(parse_target(str(path))).path == path.resolve()


def test_names_inside_functions_do_not_count(tmp_path):
    path = write(tmp_path, "def build():\n    model = 1\n    return model\nexample_inputs = 1\n")
    assert check_model_file(parse_target(str(path))).kind == "script"


def test_get_model_without_inputs_is_a_model_file_missing_them(tmp_path):
    path = write(tmp_path, "def get_model():\n    return 1\n")
    with pytest.raises(UsageError, match="no get_inputs\\(\\) or example_inputs found"):
        check_model_file(parse_target(str(path)))


def test_star_imports_defer_to_the_child(tmp_path):
    path = write(tmp_path, "from somewhere import *\n")
    assert check_model_file(parse_target(str(path))).path == path.resolve()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("m.py", ("m.py", None)), ("m.py:make", ("m.py", "make")), ("C:/x/m.py", ("C:/x/m.py", None))],
)
def test_parse_target(text, expected):
    target = parse_target(text)
    assert (str(target.path), target.entry) == expected
