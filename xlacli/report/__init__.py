"""The run report: what every command produces and every view reads.

``run.py`` is the report itself (graphs, steps, recompile events) with its one JSON
reader and writer; ``steps.py`` keeps its steps as runs of equal steps; ``memory.py``,
``sharding.py`` and ``profile.py`` are its sections.
Torch-free: loading a saved report needs no device.
"""
