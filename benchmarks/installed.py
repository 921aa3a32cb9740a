"""The environment every benchmark runs both sides in: xlacli as installed.

``pip install`` compiles a package's bytecode; an editable checkout under
``PYTHONDONTWRITEBYTECODE=1`` (as on the shared development machines) never
does, and every xlacli process then compiles some 150 modules from source
(~0.15 s in the parent and again in the child), a cost no installed copy
pays. So xlacli's bytecode is compiled once, as pip would, and both the bare
run and xlacli's run the variable unset: each side keeps its own cache.
"""

from __future__ import annotations

import compileall
import functools
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@functools.cache
def _compile_bytecode(tree: Path) -> None:
    compileall.compile_dir(tree / "xlacli", quiet=1)


def installed_env(tree: Path = REPO, **extra: str) -> dict[str, str]:
    """``os.environ`` for a benchmark's process: XLA:CPU, xlacli from ``tree``
    with its bytecode compiled, bytecode caching on."""
    _compile_bytecode(tree)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PJRT_DEVICE": "CPU", "PYTHONPATH": str(tree), **extra}
