"""SPMD: shardings read back into partition specs, collectives, and sharding changes."""
