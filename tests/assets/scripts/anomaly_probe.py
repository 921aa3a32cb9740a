"""A training loop that prints, at each step, whether autograd's anomaly mode is on
(xlacli records backward lines with it while graphs are new)."""

import torch
import torch_xla
from torch import nn

device = torch_xla.device()
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(16):
    print(f"step {step} anomaly {torch.is_anomaly_enabled()}", flush=True)
    optimizer.zero_grad()
    loss = model(torch.ones(4, 8, device=device)).pow(2).mean()
    loss.backward()
    optimizer.step()
    torch_xla.sync()
print(f"after anomaly {torch.is_anomaly_enabled()}", flush=True)
