"""Whether the scan advisor advises a stack it found; if not, why, and from how
many layers of the same stack it would.

A stack is advised when its layers make at least ``MIN_SHARE`` of the graph and
the cost model (``scan_cost.py``) predicts a saving that pays. Each reason is a
code the report keeps (the renderers word it):

- ``share``: the layers make under ``MIN_SHARE`` of the graph;
- ``sliced_update``: a training step, where each scanned layer's optimizer
  update compiles afresh, costing more a layer than scanning saves;
- ``loop``: the scan loop's own compile outweighs the layers it removes;
- ``noise``: the saving is under ``MIN_SAVING_SHARE`` of the compile;
- ``layers_differ``: the layers are not identical (not priced).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlacli.analysis.advice.scan_cost import ScanCost

# Advise when the layers make at least this share of the graph's instructions.
MIN_SHARE = 0.3
SHARE, SLICED_UPDATE, LOOP, NOISE, LAYERS_DIFFER = (
    "share",
    "sliced_update",
    "loop",
    "noise",
    "layers_differ",
)


@dataclass(frozen=True)
class ScanVerdict:
    """Advised, or the reasons not, with the depth from which it would be."""

    advised: bool
    because: tuple[str, ...] = ()
    advised_from_layers: int = 0  # 0: at no depth


def enough_from_layers(layers: int, share: float) -> int:
    """The fewest layers like these that would make ``MIN_SHARE`` of the graph, the
    rest of it unchanged (``layers`` of them make ``share``)."""
    if share <= 0:
        return 0
    needed = MIN_SHARE * layers * (1 / share - 1) / (1 - MIN_SHARE)
    return max(2, math.ceil(needed - 1e-9))


def judge_stack(layers: int, share: float, cost: ScanCost) -> ScanVerdict:
    """The verdict on ``layers`` identical layers making ``share`` of their graph,
    priced by ``cost``."""
    because = [SHARE] if share < MIN_SHARE else []
    if not cost.pays:
        because.append(_cost_reason(cost))
    if not because:
        return ScanVerdict(True)
    pays_from = cost.pays_from_layers()
    from_layers = max(pays_from, enough_from_layers(layers, share)) if pays_from else 0
    return ScanVerdict(False, tuple(because), from_layers)


def _cost_reason(cost: ScanCost) -> str:
    if cost.sliced_update_s > 0 and cost.saved_per_layer_s <= 0:
        return SLICED_UPDATE
    return LOOP if cost.saving_s <= 0 else NOISE
