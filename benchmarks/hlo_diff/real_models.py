"""One training step of a real architecture on torch_xla, for ``real_dumps.py`` to dump.

    PJRT_DEVICE=CPU XLA_FLAGS=--xla_dump_to=DIR python real_models.py NAME [--layers N]

Run by ``real_dumps.py`` in a child process per model (it sets the dump
flags). Every model is built from a ``transformers`` config with random
weights and tiny sizes: nothing is downloaded. Each step is the whole
training step (forward, loss, backward, AdamW step, ``torch_xla.sync()``),
run twice so that the dump holds both the first step and the step with
optimizer state. The first step's pending graph is also written to the
current folder as ``torch_xla._XLAC._get_xla_tensors_hlo`` prints it
(``NAME.tensors_hlo.txt``). ``llama_spmd`` shards a Llama-style model's weights over a
4-device CPU mesh (the parent sets ``CPU_NUM_DEVICES=4``), so that XLA
partitions the step and inserts collectives.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
import torch_xla
import transformers as tf

VOCAB, BATCH, SEQ = 256, 2, 16
SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4}


def llama(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.LlamaConfig(
        vocab_size=VOCAB, num_hidden_layers=layers, num_key_value_heads=2, **SMALL
    )
    return tf.LlamaForCausalLM(config), _causal_lm_loss


def mixtral(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.MixtralConfig(
        vocab_size=VOCAB,
        num_hidden_layers=layers,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        # No load-balancing loss: it counts tokens with torch.histc, which has no int kernel.
        output_router_logits=False,
        # Static shapes: gather each token's expert weights, batched matmuls, a scatter-add
        # back; the default loops over the experts a token hit (nonzero: dynamic shapes).
        experts_implementation="batched_mm",
        **SMALL,
    )
    return tf.MixtralForCausalLM(config), _causal_lm_loss


def t5(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.T5Config(
        vocab_size=VOCAB,
        d_model=64,
        d_kv=16,
        d_ff=128,
        num_layers=layers,
        num_heads=4,
        decoder_start_token_id=0,
        pad_token_id=0,
    )

    def loss(model: torch.nn.Module) -> torch.Tensor:
        ids = _ids()
        return model(input_ids=ids, labels=ids.flip(1)).loss

    return tf.T5ForConditionalGeneration(config), loss


def bert(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.BertConfig(vocab_size=VOCAB, num_hidden_layers=layers, **SMALL)
    return tf.BertForMaskedLM(config), _causal_lm_loss


def vit(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.ViTConfig(
        image_size=32, patch_size=8, num_hidden_layers=layers, num_labels=10, **SMALL
    )
    return tf.ViTForImageClassification(config), _image_loss


def resnet(layers: int) -> tuple[torch.nn.Module, Callable[[torch.nn.Module], torch.Tensor]]:
    config = tf.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32], depths=[layers, layers], num_labels=10
    )
    return tf.ResNetForImageClassification(config), _image_loss


def _ids() -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator).to(torch_xla.device())


def _causal_lm_loss(model: torch.nn.Module) -> torch.Tensor:
    ids = _ids()
    return model(input_ids=ids, labels=ids).loss


def _image_loss(model: torch.nn.Module) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    pixels = torch.randn(BATCH, 3, 32, 32, generator=generator).to(torch_xla.device())
    labels = torch.tensor([1, 7]).to(torch_xla.device())
    return model(pixel_values=pixels, labels=labels).loss


MODELS = {
    "llama": llama,
    "llama_spmd": llama,
    "llama_deep": llama,
    "mixtral": mixtral,
    "t5": t5,
    "bert": bert,
    "vit": vit,
    "resnet": resnet,
}


def shard_weights(model: torch.nn.Module) -> None:
    """Shard every 2-D weight over a (data, model) = (2, 2) mesh, Megatron style."""
    import numpy as np
    import torch_xla.distributed.spmd as xs
    import torch_xla.runtime as xr

    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (2, devices // 2), ("data", "model"))
    for name, parameter in model.named_parameters():
        if parameter.dim() != 2:
            continue
        # Column-parallel in, row-parallel out: the step needs all-reduces both ways.
        row_parallel = name.endswith(("o_proj.weight", "down_proj.weight"))
        xs.mark_sharding(parameter, mesh, (None, "model") if row_parallel else ("model", None))


def write_pending_hlo(name: str, tensors: list[torch.Tensor]) -> None:
    """Write the pending step as torch_xla's own API prints it (before XLA compiles it)."""
    text = torch_xla._XLAC._get_xla_tensors_hlo(tensors)
    Path(f"{name}.tensors_hlo.txt").write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=sorted(MODELS))
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    if args.name == "llama_spmd":
        import torch_xla.runtime as xr

        xr.use_spmd()
    torch.manual_seed(0)
    model, loss_of = MODELS[args.name](args.layers)
    model.config._attn_implementation = "eager"
    model = model.to(torch_xla.device()).train()
    if args.name == "llama_spmd":
        shard_weights(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(2):
        optimizer.zero_grad()
        loss = loss_of(model)
        loss.backward()
        optimizer.step()
        if step == 0:
            write_pending_hlo(args.name, [loss, *model.parameters()])
        torch_xla.sync()
    print(f"{args.name}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
