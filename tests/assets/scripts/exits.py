"""A script that exits with the code given as its argument, before any step."""

import sys

import torch_xla

print("exiting early", file=sys.stderr)
sys.exit(int(sys.argv[1]))
torch_xla.sync()
