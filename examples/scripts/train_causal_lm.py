"""A Hugging Face ``transformers`` causal-LM training loop, from a tiny random
config (nothing is downloaded): token batches from a DataLoader, AdamW with a
linear warm-up schedule, and ``xm.optimizer_step(..., barrier=True)`` ending
each step. Needs ``pip install 'xlacli[examples]'``.

    python examples/scripts/train_causal_lm.py --steps 6
    xlacli compile examples/scripts/train_causal_lm.py -- --steps 6
"""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch.utils.data import DataLoader, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=16)
    parser.add_argument("--log-every", type=int, default=2)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    config = GPT2Config(
        vocab_size=128,
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    model = GPT2LMHeadModel(config).to(device)
    model.train()
    tokens = torch.randint(0, config.vocab_size, (args.steps * args.batch_size, args.seq_len))
    loader = DataLoader(TensorDataset(tokens), batch_size=args.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = get_linear_schedule_with_warmup(optimizer, 2, args.steps)
    for step, (batch,) in enumerate(loader):
        input_ids = batch.to(device)
        loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        xm.optimizer_step(optimizer, barrier=True)
        scheduler.step()
        optimizer.zero_grad()
        if step % args.log_every == 0:
            print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
