"""A script that never touches an XLA device."""

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=3)
print(sum(range(parser.parse_args().n)))
