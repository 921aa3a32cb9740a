"""The loop zoo's training scripts: one template, the shapes real loops take.

A row is a choice per axis (how steps are driven, evaluation, batches, gradient
accumulation, clipping, the learning-rate schedule, the optimizer, precision);
``script(row)`` writes the training script a user would, with nothing of xlacli
in it. ``ROWS`` is the covering set the zoo runs: every value of every axis, and
the pairs that interact (a short last batch with each driver, an unsynced
evaluation with each driver, each optimizer with accumulation...).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, fields, replace

DRIVERS = ("sync", "loader", "compiled", "closure", "eager")
EVALS = ("none", "synced", "unsynced")
BATCHES = ("exact", "short_last", "drop_last")
OPTIMIZERS = ("sgd", "adam", "adamw", "adafactor", "rmsprop", "adagrad", "lion")
CLIPS = ("none", "clip", "clip_branch")
SCHEDULES = ("none", "warmup", "step")
PRECISIONS = ("fp32", "bf16")
EPOCHS = 2
BATCH = 8


@dataclass(frozen=True)
class Row:
    driver: str = "sync"
    evaluation: str = "none"
    batches: str = "exact"
    accumulate: int = 1
    clip: str = "none"
    schedule: str = "none"
    optimizer: str = "adamw"
    precision: str = "fp32"

    @property
    def name(self) -> str:
        base = Row()
        changed = [
            f"{field.name}={getattr(self, field.name)}"
            for field in fields(self)
            if getattr(self, field.name) != getattr(base, field.name)
        ]
        return ",".join(changed) or "base"

    @property
    def samples(self) -> int:
        return 60 if self.batches != "exact" else 64

    @property
    def train_batches(self) -> int:
        """Training iterations per epoch."""
        full = self.samples // BATCH
        return full + (1 if self.batches == "short_last" and self.samples % BATCH else 0)

    @property
    def training_steps(self) -> int:
        return EPOCHS * self.train_batches


def _rows() -> list[Row]:
    rows = [Row()]
    axes = {
        "driver": DRIVERS,
        "evaluation": EVALS,
        "batches": BATCHES,
        "accumulate": (1, 2),
        "clip": CLIPS,
        "schedule": SCHEDULES,
        "optimizer": OPTIMIZERS,
        "precision": PRECISIONS,
    }
    for axis, values in axes.items():  # every value of every axis
        rows += [replace(Row(), **{axis: value}) for value in values]
    for driver, other in itertools.product(DRIVERS, ("short_last", "unsynced", "synced")):
        key = "batches" if other == "short_last" else "evaluation"
        rows.append(replace(Row(), driver=driver, **{key: other}))
    for optimizer in OPTIMIZERS:  # each optimizer's state with accumulation, and bf16
        rows.append(Row(optimizer=optimizer, accumulate=2))
        rows.append(Row(optimizer=optimizer, precision="bf16"))
    for driver in DRIVERS:  # accumulation and bf16 under every driver
        rows.append(Row(driver=driver, accumulate=2))
        rows.append(Row(driver=driver, precision="bf16"))
    for clip in ("clip", "clip_branch"):
        rows.append(Row(clip=clip, driver="loader", evaluation="synced"))
        rows.append(Row(clip=clip, driver="compiled"))
    for schedule in ("warmup", "step"):
        rows.append(Row(schedule=schedule, driver="compiled"))
        rows.append(Row(schedule=schedule, driver="loader", batches="drop_last"))
    rows.append(Row(schedule="warmup", batches="short_last", evaluation="unsynced"))
    return list(dict.fromkeys(rows))


ROWS = _rows()

_OPTIMIZERS = {
    "sgd": "torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)",
    "adam": "torch.optim.Adam(model.parameters(), lr=1e-3)",
    "adamw": "torch.optim.AdamW(model.parameters(), lr=1e-3)",
    "adafactor": "torch.optim.Adafactor(model.parameters(), lr=1e-2)",
    "rmsprop": "torch.optim.RMSprop(model.parameters(), lr=1e-3)",
    "adagrad": "torch.optim.Adagrad(model.parameters(), lr=1e-2)",
    "lion": "Lion(model.parameters(), lr=1e-4)",
}
_LION = """

class Lion(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                p.add_(exp_avg.mul(beta1).add(p.grad, alpha=1 - beta1).sign_(), alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
"""
_SCHEDULES = {
    "none": "",
    "warmup": "    scheduler = torch.optim.lr_scheduler.LambdaLR("
    "optimizer, lambda step: min(1.0, (step + 1) / 4))\n",
    "step": "    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)\n",
}
_CLIPS = {
    "none": "",
    "clip": "{i}nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
    "clip_branch": "{i}norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
    "{i}if norm > 1e6:\n{i}    print('exploding gradients')\n",
}


def script(row: Row) -> str:
    """The training script of one row, as a user writes it."""
    eager = row.driver == "eager"
    lines = [
        "import torch",
        "import torch_xla",
        "import torch_xla.core.xla_model as xm",
        "import torch_xla.distributed.parallel_loader as pl",
        "from torch import nn",
        "from torch.utils.data import DataLoader, TensorDataset",
    ]
    head = "\n".join(lines) + "\n"
    if eager:
        head += "\ntorch_xla.experimental.eager_mode(True)\n"
    if row.optimizer == "lion":
        head += _LION
    head += f"""

def data(samples, seed):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(samples, 16, generator=generator)
    return TensorDataset(features, torch.randint(0, 4, (samples,), generator=generator))


def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)).to(device)
    optimizer = {_OPTIMIZERS[row.optimizer]}
"""
    head += _SCHEDULES[row.schedule]
    drop = ", drop_last=True" if row.batches == "drop_last" else ""
    head += (
        f"    train_loader = DataLoader(data({row.samples}, 0), batch_size={BATCH}{drop})\n"
        f"    eval_loader = DataLoader(data(36, 1), batch_size={BATCH})\n"
    )
    if row.driver == "loader":
        head += "    train_loader = pl.MpDeviceLoader(train_loader, device)\n"
    body = _train_step(row)
    return head + body + _evaluation(row) + '\n\nif __name__ == "__main__":\n    main()\n'


def _forward(indent: str, row: Row) -> str:
    if row.precision == "bf16":
        return (
            f"{indent}with torch.autocast('xla', dtype=torch.bfloat16):\n"
            f"{indent}    loss = nn.functional.cross_entropy(model(x), y) / {row.accumulate}\n"
        )
    return f"{indent}loss = nn.functional.cross_entropy(model(x), y) / {row.accumulate}\n"


def _update(indent: str, row: Row) -> str:
    text = _CLIPS[row.clip].format(i=indent)
    text += f"{indent}optimizer.step()\n{indent}optimizer.zero_grad()\n"
    if row.schedule != "none":
        text += f"{indent}scheduler.step()\n"
    return text


def _train_step(row: Row) -> str:
    if row.driver in ("compiled", "eager"):
        step = "    def train_step(x, y):\n" + _forward("        ", row)
        step += "        loss.backward()\n"
        if row.accumulate == 1:
            step += _update("        ", row)
        step += "        return loss\n\n    step_fn = torch_xla.compile(train_step)\n"
    else:
        step = ""
    text = step + f"    for epoch in range({EPOCHS}):\n        model.train()\n"
    text += "        for i, (x, y) in enumerate(train_loader):\n"
    if row.driver != "loader":
        text += "            x, y = x.to(device), y.to(device)\n"
    if row.driver in ("compiled", "eager"):
        text += "            loss = step_fn(x, y)\n"
        if row.accumulate > 1:
            text += f"            if (i + 1) % {row.accumulate} == 0:\n"
            text += _update("                ", row)
    else:
        text += _forward("            ", row) + "            loss.backward()\n"
        if row.accumulate > 1:
            text += f"            if (i + 1) % {row.accumulate} == 0:\n"
            text += _update("                ", row)
        else:
            text += _update("            ", row)
    if row.driver == "closure":
        text += "            xm.add_step_closure(lambda l=loss: print(f'loss {l.item():.3f}'))\n"
    if row.driver in ("sync", "closure") or (row.driver == "compiled" and row.accumulate > 1):
        text += "            torch_xla.sync()\n"
    return text


def _evaluation(row: Row) -> str:
    if row.evaluation == "none":
        return ""
    text = "        model.eval()\n"
    if row.evaluation == "synced":
        text += "        correct = torch.zeros((), dtype=torch.long, device=device)\n"
    else:
        text += "        correct = 0\n"
    text += "        with torch.no_grad():\n            for x, y in eval_loader:\n"
    text += "                x, y = x.to(device), y.to(device)\n"
    text += "                pred = model(x).argmax(dim=1)\n"
    if row.evaluation == "synced":
        text += "                correct += pred.eq(y).sum()\n                torch_xla.sync()\n"
        text += "        print(f'epoch {epoch}: {correct.item()} correct')\n"
    else:
        text += "                correct += pred.eq(y).sum().item()\n"
        text += "        print(f'epoch {epoch}: {correct} correct')\n"
    return text
