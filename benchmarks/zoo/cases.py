"""The zoo's models: torchvision classifiers and transformers architectures from
tiny random configs, plus script-mode training loops with an evaluation pass.

Each model case builds ``(model, batch)`` on the CPU with random weights (no
download); ``zoo_model.py`` turns a case into the model file ``xlacli compile``
runs, and ``bare.py`` runs the same steps with torch_xla alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

Built = tuple[torch.nn.Module, Any]


@dataclass(frozen=True)
class Case:
    """One zoo entry: a model file case (built here) or a script with its arguments."""

    name: str
    family: str  # "torchvision", "transformers" or "script"
    build: Callable[[], Built] | None = None
    script: str | None = None  # examples/scripts/...: script mode
    args: tuple[str, ...] = ()
    cost: int = 1  # relative cost, to pick the cheapest for CI


def _torchvision(name: str, size: int = 64, cost: int = 2, **kwargs: Any) -> Case:
    """A torchvision classifier from its builder (``resnet18``): its real configuration."""

    def build() -> torch.nn.Module:
        import torchvision

        return getattr(torchvision.models, name)(weights=None, num_classes=10, **kwargs)

    return Case(name, "torchvision", _on_images(build, size), cost=cost)


def _torchvision_mini(name: str, module: str, size: int, make: Callable[[Any], Any]) -> Case:
    """A family whose smallest builder takes minutes to compile on a loaded 2-core
    machine, built from the family's own classes with fewer, narrower blocks:
    ``make(torchvision.models.<module>)``; the ops and their structure stay the family's."""

    def build() -> torch.nn.Module:
        import importlib

        return make(importlib.import_module(f"torchvision.models.{module}"))

    return Case(name, "torchvision", _on_images(build, size), cost=2)


def _on_images(build: Callable[[], torch.nn.Module], size: int) -> Callable[[], Built]:
    def built() -> Built:
        torch.manual_seed(0)
        model = build()
        images = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(0))
        return model, (images,)

    return built


def _convnext(m: Any) -> Any:
    widths = (16, 32, 64, 128, None)
    blocks = [m.CNBlockConfig(widths[i], widths[i + 1], 1) for i in range(4)]
    return m.ConvNeXt(blocks, stochastic_depth_prob=0.1, num_classes=10)


def _efficientnet_v2(m: Any) -> Any:
    blocks = [
        m.FusedMBConvConfig(1, 3, 1, 16, 16, 1),
        m.FusedMBConvConfig(4, 3, 2, 16, 32, 1),
        m.MBConvConfig(4, 3, 2, 32, 48, 1),
        m.MBConvConfig(6, 3, 1, 48, 64, 1),
    ]
    return m.EfficientNet(blocks, dropout=0.2, last_channel=128, num_classes=10)


TORCHVISION = (
    _torchvision("resnet18"),
    _torchvision("mobilenet_v2"),
    _torchvision("mobilenet_v3_small"),
    _torchvision("efficientnet_b0", cost=3),
    _torchvision("regnet_y_400mf", cost=3),
    _torchvision("squeezenet1_0", cost=1),
    _torchvision("shufflenet_v2_x0_5"),
    _torchvision("mnasnet0_5"),
    _torchvision("googlenet", cost=3, aux_logits=False, init_weights=False),
    _torchvision("inception_v3", size=80, cost=4, aux_logits=False, init_weights=False),
    _torchvision("vgg11", size=32, cost=3),
    _torchvision("alexnet"),
    _torchvision_mini(
        "resnext_mini",
        "resnet",
        64,
        lambda m: m.ResNet(m.Bottleneck, [1] * 4, groups=32, width_per_group=4, num_classes=10),
    ),
    _torchvision_mini(
        "wide_resnet_mini",
        "resnet",
        64,
        lambda m: m.ResNet(m.Bottleneck, [1] * 4, width_per_group=128, num_classes=10),
    ),
    _torchvision_mini(
        "densenet_mini",
        "densenet",
        64,
        lambda m: m.DenseNet(8, (2, 2, 2, 2), num_init_features=16, bn_size=2, num_classes=10),
    ),
    _torchvision_mini("convnext_mini", "convnext", 64, _convnext),
    _torchvision_mini("efficientnet_v2_mini", "efficientnet", 64, _efficientnet_v2),
    _torchvision_mini(
        "vit_mini",
        "vision_transformer",
        32,
        lambda m: m.VisionTransformer(32, 8, 2, 2, 32, 64, num_classes=10),
    ),
    _torchvision_mini(
        "swin_mini",
        "swin_transformer",
        64,
        lambda m: m.SwinTransformer([4, 4], 16, [2, 2], [2, 4], [4, 4], num_classes=10),
    ),
    _torchvision_mini(
        "maxvit_mini",
        "maxvit",
        64,
        lambda m: m.MaxVit((64, 64), 16, 4, [16, 32], [1, 1], 8, 0.1, num_classes=10),
    ),
)

# The smallest real builder of each family made small above: the same checks at
# full depth, run when there is time (minutes of compile each on a loaded machine).
TORCHVISION_FULL = (
    _torchvision("resnext50_32x4d", cost=6),
    _torchvision("wide_resnet50_2", cost=6),
    _torchvision("densenet121", cost=6),
    _torchvision("convnext_tiny", cost=6),
    _torchvision("efficientnet_v2_s", cost=6),
    _torchvision("vit_b_16", size=32, cost=6, image_size=32),
    _torchvision("swin_t", cost=6),
    _torchvision("maxvit_t", size=224, cost=8),
)


def _tokens(vocab: int, length: int = 8, batch: int = 2) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, length), generator=torch.Generator().manual_seed(0))


def _transformers(name: str, make: Callable[[], Built], cost: int = 1) -> Case:
    return Case(name, "transformers", make, cost=cost)


def _auto(
    auto_class: str,
    config_class: str,
    labels: Callable[[torch.Tensor], torch.Tensor],
    **config: Any,
) -> Callable[[], Built]:
    """A transformers ``AutoModelFor...`` from a tiny config, on token ids."""

    def build() -> Built:
        import transformers

        torch.manual_seed(0)
        settings = {"vocab_size": 128, **config}
        model = getattr(transformers, auto_class).from_config(
            getattr(transformers, config_class)(**settings)
        )
        ids = _tokens(128)
        return model, {"input_ids": ids, "labels": labels(ids)}

    return build


def _causal(config_class: str, **config: Any) -> Callable[[], Built]:
    return _auto("AutoModelForCausalLM", config_class, lambda ids: ids, **config)


def _seq2seq(config_class: str, **config: Any) -> Callable[[], Built]:
    return _auto("AutoModelForSeq2SeqLM", config_class, lambda ids: ids, **config)


def _classifier(config_class: str, **config: Any) -> Callable[[], Built]:
    two_classes = lambda ids: torch.tensor([0, 1])  # noqa: E731
    return _auto(
        "AutoModelForSequenceClassification", config_class, two_classes, num_labels=2, **config
    )


def _vit() -> Built:
    import transformers

    torch.manual_seed(0)
    config = transformers.ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
        num_labels=2,
    )
    model = transformers.ViTForImageClassification(config)
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    return model, {"pixel_values": pixels, "labels": torch.tensor([0, 1])}


def _clip() -> Built:
    import transformers

    torch.manual_seed(0)
    config = transformers.CLIPConfig(
        text_config={
            "vocab_size": 128,
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
        },
        vision_config={
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "intermediate_size": 64,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=16,
    )
    model = transformers.CLIPModel(config)
    pixels = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    return model, {"input_ids": _tokens(128), "pixel_values": pixels, "return_loss": True}


def _whisper() -> Built:
    import transformers

    torch.manual_seed(0)
    config = transformers.WhisperConfig(
        vocab_size=128,
        num_mel_bins=8,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_source_positions=16,
        max_target_positions=16,
        decoder_start_token_id=1,
        pad_token_id=0,
    )
    model = transformers.WhisperForConditionalGeneration(config)
    features = torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(0))
    return model, {"input_features": features, "labels": _tokens(128)}


SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
DECODER = {**SMALL, "intermediate_size": 64, "num_key_value_heads": 2}

TRANSFORMERS = (
    _transformers("bert", _classifier("BertConfig", **SMALL, intermediate_size=64)),
    _transformers("roberta", _classifier("RobertaConfig", **SMALL, intermediate_size=64)),
    _transformers(
        "distilbert", _classifier("DistilBertConfig", dim=32, n_layers=2, n_heads=2, hidden_dim=64)
    ),
    _transformers(
        "albert", _classifier("AlbertConfig", **SMALL, intermediate_size=64, embedding_size=16)
    ),
    _transformers(
        "electra", _classifier("ElectraConfig", **SMALL, intermediate_size=64, embedding_size=16)
    ),
    _transformers("gpt2", _causal("GPT2Config", n_embd=32, n_layer=2, n_head=2)),
    _transformers("llama", _causal("LlamaConfig", **DECODER)),
    _transformers("mistral", _causal("MistralConfig", **DECODER, sliding_window=None)),
    _transformers(
        "mixtral",
        _causal("MixtralConfig", **DECODER, num_local_experts=4, num_experts_per_tok=2),
        cost=2,
    ),
    _transformers("qwen2", _causal("Qwen2Config", **DECODER)),
    _transformers("gemma", _causal("GemmaConfig", **DECODER, head_dim=16)),
    _transformers("phi", _causal("PhiConfig", **DECODER)),
    _transformers(
        "opt",
        _causal(
            "OPTConfig",
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            ffn_dim=64,
            word_embed_proj_dim=32,
        ),
    ),
    _transformers(
        "t5",
        _seq2seq(
            "T5Config",
            d_model=32,
            d_kv=16,
            d_ff=64,
            num_layers=2,
            num_heads=2,
            decoder_start_token_id=0,
        ),
    ),
    _transformers(
        "bart",
        _seq2seq(
            "BartConfig",
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
        ),
    ),
    _transformers("vit", _vit),
    _transformers("clip", _clip),
    _transformers("whisper", _whisper, cost=2),
)

SCRIPTS = (
    Case(
        "train_eval", "script", script="examples/scripts/train_eval.py", args=("--batch-size", "8")
    ),
    Case(
        "train_eval_short",
        "script",
        script="examples/scripts/train_eval.py",
        args=("--train-samples", "52", "--eval-samples", "36", "--python-counter"),
    ),
    Case("train_cnn", "script", script="examples/scripts/train_cnn.py", args=("--batch-size", "8")),
    Case("train_fsdp", "script", script="examples/scripts/train_fsdp.py", cost=2),
    Case(
        "train_trainer",
        "script",
        script="examples/scripts/train_trainer.py",
        args=("--train-samples", "16", "--eval-samples", "12", "--epochs", "1"),
        cost=8,
    ),
)

CASES = {case.name: case for case in (*TORCHVISION, *TRANSFORMERS, *SCRIPTS, *TORCHVISION_FULL)}
MODES = ("inference", "training")
