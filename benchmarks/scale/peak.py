"""Runs ``xlacli`` in this process and prints the parent's peak memory (KiB) on
stderr's last line: the child's memory is not the parent's.

python benchmarks/scale/peak.py compile examples/mlp.py --steps 10

The peak is this process's own high-water mark (``VmHWM`` in ``/proc/self/status``).
``getrusage``'s ``ru_maxrss`` is not: Linux carries it across ``exec`` from the
process that forked this one, so a benchmark driver that had grown to 48 MiB made
every later row's "parent peak" 48 MiB.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

from xlacli.cli.main import main


def peak_kib() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    finally:
        print(f"xlacli-parent-peak-kib={peak_kib()}", file=sys.stderr)
    sys.exit(code)
