"""Where the child hooks ``torch_xla.sync()`` (child process only).

``sync`` reads this setting through ``xu.getenv_as`` just before it calls the native
step marker: a wrapper of that call runs at the sync with no Python frame of ours
between ``sync`` and the marker, where torch_xla's debug log reads each graph's cause.
Both the step hook (``sync_hook.py``) and the IR writer (``graph_ir.py``) use it.
"""

from __future__ import annotations

SYNC_WAIT_SETTING = "XLA_SYNC_WAIT"
