"""A framework's evaluation loop is not training steps (issue 36, class 2): a
``transformers.Trainer`` run that evaluates every few steps (its evaluation loop
syncs inside its own gather for metrics) counts its training iterations as steps,
and the evaluation's syncs as syncs at another place. Written afresh, as the
Trainer's docs show one, with a plain torch module."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SCRIPT = """\
import tempfile

import torch
from torch import nn
from transformers import Trainer, TrainingArguments


class Pairs(torch.utils.data.Dataset):
    def __init__(self, size, seed):
        generator = torch.Generator().manual_seed(seed)
        self.features = torch.randn(size, 8, generator=generator)
        self.labels = torch.randint(0, 2, (size,), generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return {"features": self.features[index], "labels": self.labels[index]}


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, features, labels=None):
        logits = self.net(features)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as output_dir:
        arguments = TrainingArguments(
            output_dir=output_dir, per_device_train_batch_size=4, per_device_eval_batch_size=4,
            max_steps=6, eval_strategy="steps", eval_steps=3, logging_steps=3,
            save_strategy="no", report_to=[], optim="adamw_torch",
        )
        trainer = Trainer(
            model=Classifier(), args=arguments,
            train_dataset=Pairs(48, 0), eval_dataset=Pairs(24, 1),
        )
        trainer.train()


if __name__ == "__main__":
    main()
"""


def test_the_trainers_evaluation_syncs_are_not_training_steps(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    result = run_cli("compile", "train.py", "--format", "json", cwd=tmp_path, timeout=600)
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["steps"] == 6, report["steps"]  # max_steps, not 6 + 2 evaluations x 6 batches
    phases = [run["phase"] for run in report["step_runs"] if "phase" in run]
    assert "other" in phases  # the evaluation's syncs, recorded apart
    # No first graph of the evaluation is a steady-state recompile.
    assert not [
        e
        for e in report["events"]
        if e["steady_state"] and e["cause"]["category"] == "first_compile"
    ]
