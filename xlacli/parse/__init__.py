"""Pure parsers: raw torch_xla and XLA artifacts -> typed data.

Nothing here imports torch; every parser takes text and returns frozen
dataclasses, and is tested on golden files captured from real runs.
"""
