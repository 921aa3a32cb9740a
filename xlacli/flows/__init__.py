"""The command flows: what ``compile``, ``check`` and ``profile`` do from options to report."""
