"""xlacli: compile, explain and profile PyTorch models on PyTorch/XLA.

Importing this package must stay cheap: it never imports torch. Only
``xlacli.capture`` (which runs in the child process) does. The Python API
(``xlacli.compile``, ``profile``, ``check``, ``load_report``, ``diff_hlo``; see
``xlacli.api``) is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from xlacli.api import ProfileResult, Run, check, compile, diff_hlo, load_report, profile
    from xlacli.errors import XlacliError
    from xlacli.report.run_report import RunReport
    from xlacli.run_options import RunOptions

_LAZY = {
    "compile": "xlacli.api",
    "profile": "xlacli.api",
    "load_report": "xlacli.api",
    "diff_hlo": "xlacli.api",
    "ProfileResult": "xlacli.api",
    "Run": "xlacli.api",
    "check": "xlacli.api",
    "RunReport": "xlacli.report.run_report",
    "RunOptions": "xlacli.run_options",
    "XlacliError": "xlacli.errors",
}
__all__ = [
    "ProfileResult",
    "Run",
    "RunOptions",
    "RunReport",
    "XlacliError",
    "__version__",
    "check",
    "compile",
    "diff_hlo",
    "load_report",
    "profile",
]


def __getattr__(name: str) -> Any:
    """The API's names, imported when first used (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'xlacli' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
