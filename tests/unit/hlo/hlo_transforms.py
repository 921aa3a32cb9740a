"""Transforms that keep a module's meaning: renumber every name, reorder everything.

The diff must call the result identical to the input; the parser must read
the printed result back. Both work on the typed model, then print.
"""

from __future__ import annotations

import dataclasses
import random
import re
from types import MappingProxyType

from xlacli.hlo.attributes import CALLED_COMPUTATION_KEYS
from xlacli.hlo.model import Computation, HloModule, Instruction

_NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_RENAMED_KEYS = {*CALLED_COMPUTATION_KEYS, "control-predecessors"}


def renumber(module: HloModule, seed: int) -> HloModule:
    """Give every instruction and computation a new, shuffled numeric suffix."""
    rng = random.Random(seed)
    names = [c.name for c in module.computations]
    names += [i.name for c in module.computations for i in c.instructions]
    numbers = rng.sample(range(10 * len(names) + 10), len(names))
    mapping = {
        name: f"{name.rsplit('.', 1)[0] if name[-1].isdigit() else name}.{number}"
        for name, number in zip(names, numbers, strict=True)
    }
    return dataclasses.replace(
        module,
        computations=tuple(_rename_computation(c, mapping) for c in module.computations),
    )


def _rename_computation(computation: Computation, mapping: dict[str, str]) -> Computation:
    parameters = computation.parameters
    if parameters is not None:
        parameters = tuple((mapping.get(name, name), shape) for name, shape in parameters)
    return dataclasses.replace(
        computation,
        name=mapping[computation.name],
        parameters=parameters,
        instructions=tuple(_rename_instruction(i, mapping) for i in computation.instructions),
    )


def _rename_instruction(instruction: Instruction, mapping: dict[str, str]) -> Instruction:
    attributes = {
        key: _NAME.sub(lambda m: "%" + mapping.get(m.group(1), m.group(1)), value)
        if key in _RENAMED_KEYS
        else value
        for key, value in instruction.attributes.items()
    }
    return dataclasses.replace(
        instruction,
        name=mapping[instruction.name],
        operands=tuple(mapping[operand] for operand in instruction.operands),
        called_computations=tuple(mapping.get(c, c) for c in instruction.called_computations),
        attributes=MappingProxyType(attributes),
    )


def reorder(module: HloModule, seed: int) -> HloModule:
    """Shuffle the computations, and each computation's instructions in a valid order.

    A module without ``ENTRY`` keeps its last computation last: that is what
    makes it the entry (XLA's parser), so moving it would change the program.
    """
    rng = random.Random(seed)
    computations = [_reorder_instructions(c, rng) for c in module.computations]
    has_entry = any(computation.is_entry for computation in computations)
    entry = [] if has_entry else [computations.pop()]
    rng.shuffle(computations)
    return dataclasses.replace(module, computations=(*computations, *entry))


def _reorder_instructions(computation: Computation, rng: random.Random) -> Computation:
    # Kahn's algorithm, picking a random ready instruction each time.
    by_name = {i.name: i for i in computation.instructions}
    waiting = {i.name: len(set(i.operands)) for i in computation.instructions}
    users: dict[str, list[str]] = {name: [] for name in by_name}
    for instruction in computation.instructions:
        for operand in set(instruction.operands):
            users[operand].append(instruction.name)
    ready = [name for name, count in waiting.items() if count == 0]
    ordered = []
    while ready:
        name = ready.pop(rng.randrange(len(ready)))
        ordered.append(by_name[name])
        for user in users[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    return dataclasses.replace(computation, instructions=tuple(ordered))
