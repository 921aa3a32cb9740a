"""A script written for torchrun: it reads the rank torchrun sets."""

import os

rank = int(os.environ["RANK"])
print("rank", rank)
