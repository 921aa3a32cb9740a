"""The hang watchdog's part of the run-folder contract (``--hang-timeout``):
what the parent sets for the child and the files it writes when it fires."""

from __future__ import annotations

HANG_STACKS_ENV = "XLACLI_HANG_STACKS"  # set: the child dumps its stacks on SIGUSR1
HANG_FILE = "hang.json"  # the watchdog fired: how long nothing moved
STACKS_FILE = "hang-stacks.txt"  # every thread's stack, as faulthandler prints them
HEARTBEAT_FILE = ".hang-heartbeat"  # grows while the child is busy; removed at the end
