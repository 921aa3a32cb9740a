"""The code a bucket advice shows: padding to the advised edges, a loss's target
padded with the index the loss ignores (or masked), and ``drop_last`` for an
epoch's short last batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xlacli.analysis.advice.loss_targets import ignores_an_index


def drop_last_code(sizes: tuple[tuple[int, int], ...]) -> str:
    """The loader change that removes an epoch's short last batch (two sizes)."""
    (short, _), (full, _) = sizes
    return (
        f"# The only odd size is an epoch's last batch ({short} rows of {full}): drop it\n"
        f"loader = DataLoader(dataset, batch_size={full}, drop_last=True)\n\n"
        "# Or keep its samples: pad it (its padding ignored by the loss)\n"
    )


def bucket_code(
    edges: tuple[int, ...],
    dim: int,
    steps: int,
    tensors: Sequence[str] = (),
    targets: Mapping[str, str] | None = None,
) -> str:
    """``pad_code`` and, when the padded tensors include a loss's target, how to pad
    it: with the loss's ignored index, or a mask."""
    code = pad_code(edges, dim, steps)
    lines = []
    for what in tensors:
        loss = (targets or {}).get(what)
        if loss is None:
            lines.append(f"# {what}: pad_to_bucket(tensor)")
        elif ignores_an_index(loss):
            lines.append(
                f"# {what} is the loss's target ({loss}): pad it with the index the\n"
                "# loss ignores (cross_entropy's ignore_index=-100), never a real class:\n"
                "#   pad_to_bucket(tensor, value=-100)"
            )
        else:
            lines.append(
                f"# {what} is the loss's target ({loss}): its padded positions would\n"
                "# count; pad it, then mask them out of the loss:\n"
                "#   loss = (per_element_loss * mask).sum() / mask.sum()"
            )
    if targets and lines:
        return code + "\n\n" + "\n".join(lines)
    return code


def pad_code(edges: tuple[int, ...], dim: int, steps: int) -> str:
    """Python that pads a tensor's ``dim`` up to the next edge."""
    return (
        "import bisect\n"
        "import torch.nn.functional as F\n\n"
        f"EDGES = {edges}  # xlacli's bucket advice, from the sizes of {steps} steps\n\n\n"
        f"def pad_to_bucket(tensor, dim={dim}, value=0):\n"
        "    size = tensor.shape[dim]\n"
        "    index = bisect.bisect_left(EDGES, size)\n"
        "    edge = EDGES[index] if index < len(EDGES) else size  # above the last edge: as is\n"
        "    pad = [0, 0] * (tensor.dim() - dim - 1) + [0, edge - size]\n"
        "    return F.pad(tensor, pad, value=value)"
    )
