"""Loading a model file in the child (``capture/discover.load_model``), in this
process: a factory entry, and what a file that raises at import or returns the
wrong things says. (The e2e tests of these replay recorded children.)"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from xlacli.capture.discover import ModelTarget, load_model  # noqa: E402
from xlacli.errors import ModelError, UsageError  # noqa: E402


def model_file(tmp_path, body: str, name: str = "model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_a_factory_entry_gives_the_model_and_its_inputs(tmp_path):
    path = model_file(
        tmp_path,
        """
        import torch

        def build():
            return torch.nn.Linear(3, 3), torch.ones(2, 3)
        """,
        "factory_ok.py",
    )
    loaded = load_model(ModelTarget(path, entry="build"))
    assert isinstance(loaded.model, torch.nn.Linear)
    assert loaded.inputs_for_step(5).shape == (2, 3)
    assert loaded.step_fn is None and loaded.entry_site.endswith("factory_ok.py:4")


@pytest.mark.parametrize(
    ("body", "entry", "error", "said"),
    [
        ("build = 3\n", "build", UsageError, "build in factory_bad.py is not callable"),
        ("def build():\n    return 1\n", "build", UsageError, "expected a (model, inputs) pair"),
        ("def build():\n    return 1, 2\n", "build", UsageError, "a int as its model"),
        ("def build():\n    raise KeyError('w')\n", "build", ModelError, "build() raised KeyError"),
        ("raise ValueError('bad config')\n", None, ModelError, "importing factory_bad.py raised"),
        ("get_model = None\nmodel = 7\n", None, UsageError, "expected a torch.nn.Module"),
        (
            "import torch\nmodel = torch.nn.Linear(2, 2)\nget_inputs = lambda: torch.ones(1, 2)\n"
            "step = 5\n",
            None,
            UsageError,
            "step in the model file is a int; expected a function",
        ),
    ],
)
def test_a_model_file_that_cannot_be_used_says_why(tmp_path, body, entry, error, said):
    path = model_file(tmp_path, body, "factory_bad.py")
    with pytest.raises(error) as raised:
        load_model(ModelTarget(path, entry=entry))
    assert said in str(raised.value)
