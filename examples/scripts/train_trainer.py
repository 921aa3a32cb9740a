"""A transformers.Trainer fine-tuning run with periodic evaluation, as its docs
show: the user's code is one call, trainer.train(). Tiny random BERT,
synthetic data, no download.

    xlacli compile examples/scripts/train_trainer.py
"""

import argparse
import tempfile

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


class Synthetic(torch.utils.data.Dataset):
    def __init__(self, size: int, seed: int):
        generator = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 100, (size, 16), generator=generator)
        self.labels = torch.randint(0, 2, (size,), generator=generator)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict:
        return {"input_ids": self.ids[index], "labels": self.labels[index]}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Fine-tune a tiny BERT with Trainer.")
    parser.add_argument("--train-samples", type=int, default=32)
    parser.add_argument("--eval-samples", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    return parser.parse_args(argv)


def main(args) -> None:
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=32, num_labels=2,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as output_dir:
        training = TrainingArguments(
            output_dir=output_dir, per_device_train_batch_size=args.batch_size,
            per_device_eval_batch_size=args.batch_size, num_train_epochs=args.epochs,
            eval_strategy="epoch", logging_steps=2, save_strategy="no", report_to=[],
            dataloader_drop_last=False, optim="adamw_torch",
        )  # fmt: skip
        trainer = Trainer(
            model=BertForSequenceClassification(config),
            args=training,
            train_dataset=Synthetic(args.train_samples, 0),
            eval_dataset=Synthetic(args.eval_samples, 1),
        )
        trainer.train()


if __name__ == "__main__":
    main(parse_args())
