"""data_dependent_shape: only the labelled tokens enter the loss, by boolean indexing.

    xlacli compile examples/recompile/masked_labels.py --steps 5

Unlabelled tokens carry the ignore index -100 and are dropped with
`logits[keep]`: how many remain (32, then 30, ...) depends on the labels'
values, so the loss's shapes change from step to step. The first graph is
built slightly differently by torch_xla (a weight's transpose is shared at
step 0), which must not hide the shape change.
Fix: keep the shapes static: cross_entropy(logits, labels, ignore_index=-100)
on all tokens masks them without changing a shape.
"""

import torch
from torch import nn

IGNORE = -100
UNLABELLED = (0, 2, 2, 5, 2)  # tokens without a label, per step


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 8))


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 50, (4, 8), generator=generator)
    labels = torch.randint(0, 8, (4, 8), generator=generator)
    labels.view(-1)[: UNLABELLED[step % len(UNLABELLED)]] = IGNORE
    return tokens, labels


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.1)
    tokens, labels = batch
    logits = model(tokens).flatten(0, 1)
    keep = labels.flatten() != IGNORE
    loss = nn.functional.cross_entropy(logits[keep], labels.flatten()[keep])
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
