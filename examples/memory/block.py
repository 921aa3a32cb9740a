"""A pre-norm transformer block, trained plainly: the reference for the memory examples.

    xlacli compile examples/memory/block.py --steps 1
    xlacli compile examples/memory/block_bf16.py --steps 1          # autocast bf16
    xlacli compile examples/memory/block_checkpoint.py --steps 1    # torch_xla checkpointing
    xlacli diff-hlo RUN_PLAIN RUN_BF16                             # what changed

Each file's ``step()`` is one training step: forward, loss, backward, SGD.
The variants import this file and change only how the layers run.
"""

import torch
from torch import nn

BATCH = 8
SEQ_LEN = 64
D_MODEL = 64
HEADS = 4
LAYERS = 2


class Block(nn.Module):
    """Attention and a 4x MLP, each behind a LayerNorm and a residual."""

    def __init__(self, d_model: int = D_MODEL, heads: int = HEADS):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, 4 * d_model)
        self.down = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / (width // self.heads) ** 0.5
        attended = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(batch, seq, width)
        x = x + self.proj(attended)
        return x + self.down(nn.functional.gelu(self.up(self.norm2(x))))


class Stack(nn.Module):
    """``LAYERS`` blocks; ``run_layer`` says how each runs (plainly, checkpointed...)."""

    def __init__(self, layers: int = LAYERS):
        super().__init__()
        self.embed = nn.Linear(D_MODEL, D_MODEL)  # outside the checkpoints: its output needs grad
        self.blocks = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x: torch.Tensor, run_layer=None) -> torch.Tensor:
        x = self.embed(x)
        for block in self.blocks:
            x = run_layer(block, x) if run_layer is not None else block(x)
        return x


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Stack()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(BATCH, SEQ_LEN, D_MODEL, generator=generator)


def train_step(model: nn.Module, batch: torch.Tensor, run_layer=None) -> torch.Tensor:
    """Forward, a mean-square loss, backward and a plain SGD update."""
    model.zero_grad(set_to_none=True)
    loss = model(batch, run_layer).float().pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter -= 0.01 * parameter.grad
    return loss


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    return train_step(model, batch)
