"""One JAX transformer training step, for ``real_dumps.py`` to dump.

    XLA_FLAGS=--xla_dump_to=DIR /tmp/jaxenv/bin/python jax_step.py OUT_TEXT [--layers N]

Run by ``real_dumps.py`` with the Python of a separate venv holding ``jax``
(jax is no dependency of xlacli). Pure ``jax.numpy``: the layers are stacked
and run by ``jax.lax.scan`` (XLA while loops), each layer under
``jax.checkpoint`` (rematerialized in the backward pass), with an Adam
update by hand. Writes ``jax.jit(step).lower(...).compile().as_text()`` to
OUT_TEXT, and ``lower(...).as_text(dialect="hlo")`` beside it (``.as_text``
replaced by ``.lowered`` in its name); XLA's own dump goes where ``XLA_FLAGS`` says.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp

VOCAB, D_MODEL, HEADS, D_FF, BATCH, SEQ = 256, 64, 4, 128, 2, 16


def init(key: jax.Array, layers: int) -> dict[str, jax.Array]:
    keys = jax.random.split(key, 6)
    normal = jax.nn.initializers.normal(0.02)
    return {
        "embed": normal(keys[0], (VOCAB, D_MODEL)),
        "qkv": normal(keys[1], (layers, D_MODEL, 3 * D_MODEL)),
        "out": normal(keys[2], (layers, D_MODEL, D_MODEL)),
        "up": normal(keys[3], (layers, D_MODEL, D_FF)),
        "down": normal(keys[4], (layers, D_FF, D_MODEL)),
        "scale": jnp.ones((layers, 2, D_MODEL)),
        "head": normal(keys[5], (D_MODEL, VOCAB)),
    }


def rms_norm(x: jax.Array, scale: jax.Array) -> jax.Array:
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * scale


def layer(x: jax.Array, weights: dict[str, jax.Array]) -> tuple[jax.Array, None]:
    q, k, v = jnp.split(rms_norm(x, weights["scale"][0]) @ weights["qkv"], 3, axis=-1)
    q, k, v = (t.reshape(BATCH, SEQ, HEADS, -1) for t in (q, k, v))
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(q.shape[-1])
    causal = jnp.tril(jnp.ones((SEQ, SEQ), dtype=bool))
    attention = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    mixed = jnp.einsum("bhqk,bkhd->bqhd", attention, v).reshape(BATCH, SEQ, D_MODEL)
    x = x + mixed @ weights["out"]
    hidden = jax.nn.gelu(rms_norm(x, weights["scale"][1]) @ weights["up"])
    return x + hidden @ weights["down"], None


def loss_fn(params: dict[str, jax.Array], ids: jax.Array) -> jax.Array:
    stacked = {key: params[key] for key in ("qkv", "out", "up", "down", "scale")}
    x, _ = jax.lax.scan(jax.checkpoint(layer), params["embed"][ids], stacked)
    logits = x @ params["head"]
    targets = jax.nn.one_hot(jnp.roll(ids, -1, axis=1), VOCAB)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * targets, axis=-1))


def step(params, moments, ids):  # type: ignore[no-untyped-def]
    loss, grads = jax.value_and_grad(loss_fn)(params, ids)
    first, second, count = moments
    count = count + 1
    first = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, first, grads)
    second = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, second, grads)
    correction = jnp.sqrt(1 - 0.999**count) / (1 - 0.9**count)
    params = jax.tree.map(
        lambda p, m, v: p - 1e-3 * correction * m / (jnp.sqrt(v) + 1e-8), params, first, second
    )
    return params, (first, second, count), loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_text", type=Path)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    params = init(jax.random.key(0), args.layers)
    moments = (
        jax.tree.map(jnp.zeros_like, params),
        jax.tree.map(jnp.zeros_like, params),
        jnp.zeros((), jnp.int32),
    )
    ids = jax.random.randint(jax.random.key(1), (BATCH, SEQ), 0, VOCAB)
    jitted = jax.jit(step, donate_argnums=(0, 1))
    lowered = jitted.lower(params, moments, ids)
    args.out_text.write_text(lowered.compile().as_text())
    # The HLO JAX hands to XLA, as JAX prints it (not through XLA's dump).
    lowered_text = args.out_text.with_name(args.out_text.name.replace(".as_text", ".lowered"))
    lowered_text.write_text(lowered.as_text(dialect="hlo"))
    params, moments, loss = jitted(params, moments, ids)
    print(f"jax: loss {float(loss):.4f}")


if __name__ == "__main__":
    main()
