"""JAX programs full of HLO constructs a transformer lacks, for ``real_dumps.py`` to dump.

    XLA_FLAGS=--xla_dump_to=DIR /tmp/jaxenv/bin/python jax_ops.py {ops,spmd} OUT_TEXT

``ops``: one jitted training step of a small conv net whose loss goes through
control flow (``cond``, ``switch``, a ``fori_loop`` with a traced bound),
sorting (``top_k``, a multi-operand sort, ``argsort``), scatter and gather,
``cumsum``, an FFT (complex numbers), LAPACK custom calls (Cholesky, ``eigh``),
narrow types (bf16, f8, int4), a host callback, ``rbg`` random bits,
``reduce_precision``, ``optimization_barrier`` and bit operations.
``spmd``: a sharded MLP training step on a 2x2 mesh of host devices (the
parent sets ``--xla_force_host_platform_device_count=4``), with
``with_sharding_constraint`` and a ``shard_map`` doing ``psum``,
``all_gather``, ``ppermute``, ``all_to_all`` and ``psum_scatter``.
Writes ``compile().as_text()`` to OUT_TEXT, and ``lower(...).as_text(dialect="hlo")``
(the HLO before XLA compiles it, printed by JAX) beside it, ``.as_text`` replaced
by ``.lowered`` in its name.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def conv_net(params: dict[str, jax.Array], images: jax.Array) -> jax.Array:
    x = lax.conv_general_dilated(images, params["conv"], (1, 1), "SAME")
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    return jax.nn.relu(x).reshape(x.shape[0], -1) @ params["dense"]


def odd_ops(logits: jax.Array, key: jax.Array, steps: jax.Array) -> jax.Array:
    """A scalar made with as many kinds of instruction as fit in a few lines."""
    values, indices = lax.top_k(logits, 3)
    order = jnp.argsort(logits[:, 0])
    keys, payload = lax.sort((logits[:, 1], logits[:, 2]), num_keys=1)
    table = jnp.zeros((16,)).at[indices.reshape(-1) % 16].add(values.reshape(-1))
    gathered = jnp.take(table, order % 16) + jnp.cumsum(payload + keys)
    spectrum = jnp.fft.rfft(gathered)
    branch = lax.switch(steps % 3, [jnp.sin, jnp.cos, jnp.tanh], jnp.abs(spectrum).sum())
    # A traced trip count makes a while loop reverse mode cannot go through: no gradient here.
    looped = lax.fori_loop(0, steps, lambda i, acc: acc * 0.5 + i, lax.stop_gradient(branch))
    cond = lax.cond(looped > 0, lambda v: v + 1.0, lambda v: v - 1.0, looped)
    matrix = jnp.eye(4) * 2.0 + 0.1 * logits[:4, :4] @ logits[:4, :4].T
    linalg = jnp.linalg.cholesky(matrix).sum() + jnp.linalg.eigh(matrix)[0].sum()
    narrow = sum(
        logits.astype(dtype).astype(jnp.float32).sum()
        for dtype in (jnp.bfloat16, jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float16)
    )
    nibbles = (indices.astype(jnp.int4).astype(jnp.int32) ^ lax.population_count(indices)).sum()
    bits = jax.random.bits(key, (4,), jnp.uint32)
    rounded = lax.reduce_precision(logits, exponent_bits=5, mantissa_bits=10).sum()
    jax.debug.callback(lambda v: None, cond)
    barrier = lax.optimization_barrier((cond, linalg))
    return (
        barrier[0]
        + barrier[1]
        + narrow
        + nibbles.astype(jnp.float32)
        + rounded
        + (bits >> 28).astype(jnp.float32).sum()
        + jnp.angle(spectrum).sum()
    )


def ops_step(params, images, labels, key, steps):  # type: ignore[no-untyped-def]
    def loss(params):  # type: ignore[no-untyped-def]
        logits = conv_net(params, images)
        targets = jax.nn.one_hot(labels, logits.shape[-1])
        cross_entropy = -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * targets, axis=-1))
        return cross_entropy + 1e-3 * odd_ops(logits, key, steps)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value


def lower_ops() -> jax.stages.Lowered:
    keys = jax.random.split(jax.random.key(0), 3)
    params = {
        "conv": 0.1 * jax.random.normal(keys[0], (8, 3, 3, 3)),
        "dense": 0.1 * jax.random.normal(keys[1], (8 * 8 * 8, 10)),
    }
    images = jax.random.normal(keys[2], (8, 3, 16, 16))
    labels = jnp.arange(8) % 10
    rbg_key = jax.random.key(1, impl="rbg")
    return jax.jit(ops_step).lower(params, images, labels, rbg_key, jnp.int32(5))


def spmd_step(params, x, y, mesh):  # type: ignore[no-untyped-def]
    def loss(params):  # type: ignore[no-untyped-def]
        hidden = jax.nn.gelu(x @ params["up"])
        hidden = lax.with_sharding_constraint(hidden, NamedSharding(mesh, P("data", "model")))
        return jnp.mean((hidden @ params["down"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    params = jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
    return params, value + collectives(x, mesh)


def collectives(x: jax.Array, mesh: jax.sharding.Mesh) -> jax.Array:
    def per_shard(block: jax.Array) -> jax.Array:
        total = lax.psum(block.sum(), ("data", "model"))
        gathered = lax.all_gather(block, "model", tiled=True)
        shifted = lax.ppermute(block, "data", perm=[(0, 1), (1, 0)])
        swapped = lax.all_to_all(block, "model", split_axis=1, concat_axis=1, tiled=True)
        scattered = lax.psum_scatter(block, "model", scatter_dimension=1, tiled=True)
        return total + gathered.sum() + shifted.sum() + swapped.sum() + scattered.sum()

    mapped = jax.shard_map(
        per_shard, mesh=mesh, in_specs=P("data", "model"), out_specs=P(), check_vma=False
    )
    return mapped(x)


def lower_spmd() -> jax.stages.Lowered:
    auto = jax.sharding.AxisType.Auto  # let XLA's partitioner place what is not constrained
    mesh = jax.make_mesh((2, 2), ("data", "model"), axis_types=(auto, auto))
    keys = jax.random.split(jax.random.key(0), 4)
    params = {
        "up": jax.device_put(
            jax.random.normal(keys[0], (32, 64)), NamedSharding(mesh, P(None, "model"))
        ),
        "down": jax.device_put(
            jax.random.normal(keys[1], (64, 32)), NamedSharding(mesh, P("model", None))
        ),
    }
    x = jax.device_put(jax.random.normal(keys[2], (8, 32)), NamedSharding(mesh, P("data", None)))
    y = jax.device_put(jax.random.normal(keys[3], (8, 32)), NamedSharding(mesh, P("data", None)))
    step = jax.jit(spmd_step, static_argnums=3)
    return step.lower(params, x, y, mesh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("program", choices=("ops", "spmd"))
    parser.add_argument("out_text", type=Path)
    args = parser.parse_args()
    lowered = lower_ops() if args.program == "ops" else lower_spmd()
    args.out_text.write_text(lowered.compile().as_text())
    lowered_text = args.out_text.with_name(args.out_text.name.replace(".as_text", ".lowered"))
    lowered_text.write_text(lowered.as_text(dialect="hlo"))
    print(f"jax_{args.program}: compiled")


if __name__ == "__main__":
    main()
