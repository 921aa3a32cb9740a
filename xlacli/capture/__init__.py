"""Capture, the parent side: check the target, set the environment, start the child
process (``xlacli.child``), forward signals, and turn how it ended into an outcome.
Never imports torch: torch_xla reads its debug environment once, at import."""
