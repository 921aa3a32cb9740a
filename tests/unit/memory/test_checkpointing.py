"""analysis/checkpointing.py on torch_xla's checkpoint and on a plain run."""

import re

from tests.unit.memory.conftest import golden_hlo, golden_text
from xlacli.analysis.checkpointing import checkpoint_facts


def test_checkpointed_blocks():
    facts = checkpoint_facts(
        golden_hlo("tiny_checkpoint", "before"), golden_hlo("tiny_checkpoint", "after")
    )
    text = golden_text("tiny_checkpoint", "hlo.before.txt")
    assert facts.opt_barriers == len(re.findall(r" opt-barrier\(", text)) == 2
    assert facts.opt_barriers_optimized == 0  # XLA:CPU expands them before scheduling
    assert facts.recomputed_regions == 2
    # The matmuls the checkpoint added to the program, and how many XLA kept: on
    # XLA:CPU, whose CSE runs again once the barriers are gone, none of these.
    assert facts.recomputed_dots == _dots("tiny_checkpoint", "before") - _dots("tiny", "before")
    assert facts.recomputed_dots == 2
    kept = _dots("tiny_checkpoint", "after") - _dots("tiny", "after")
    assert facts.recomputed_dots_kept == kept == 0


def _dots(variant, stage):
    return len(re.findall(r" dot\(", golden_text(variant, f"hlo.{stage}.txt")))


def test_plain_run_has_no_checkpoint():
    facts = checkpoint_facts(golden_hlo("tiny", "before"), golden_hlo("tiny", "after"))
    assert (facts.opt_barriers, facts.recomputed_regions, facts.recomputed_dots) == (0, 0, 0)


def test_without_hlo():
    assert checkpoint_facts(None, None) is None
