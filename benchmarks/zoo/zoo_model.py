"""The model file ``xlacli compile`` runs for a zoo case (``ZOO_CASE``, ``ZOO_MODE``)."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.zoo.cases import CASES

_CASE = CASES[os.environ["ZOO_CASE"]]
assert _CASE.build is not None
_MODEL, _BATCH = _CASE.build()
_MODEL.train(os.environ.get("ZOO_MODE") == "training")


def get_model():
    return _MODEL


def get_inputs(step):
    return _BATCH
