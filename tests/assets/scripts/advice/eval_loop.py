"""An evaluation loop that never syncs inside the loop: every batch's forward lands in
one graph, the model called once per batch. Its iterations are batches, not layers:
no scan advice.

    xlacli compile tests/assets/scripts/advice/eval_loop.py
"""

import torch
import torch_xla
from torch import nn


def main() -> None:
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)).to(device).eval()
    batches = [torch.randn(8, 16) for _ in range(6)]
    total = torch.zeros((), device=device)
    with torch.no_grad():
        for batch in batches:
            total = total + model(batch.to(device)).square().mean()  # one call per batch
    torch_xla.sync()
    print(f"eval loss {total.item() / len(batches):.4f}")


if __name__ == "__main__":
    main()
