"""Runs ``xlacli`` in this process and prints the parent's peak memory (max RSS, KiB)
on stderr's last line: the child's memory is not the parent's.

python benchmarks/scale/peak.py compile examples/mlp.py --steps 10
"""

from __future__ import annotations

import resource
import sys

from xlacli.cli.main import main

if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    finally:
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"xlacli-parent-peak-kib={peak_kib}", file=sys.stderr)
    sys.exit(code)
