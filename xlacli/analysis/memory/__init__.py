"""Memory per graph and step: peaks, precision mix, checkpointing, and two runs compared."""
