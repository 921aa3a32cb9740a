"""Capture: run the user's model in a child process and collect raw artifacts.

Only ``child.py`` and ``steps.py`` (which run in the child) import torch and
torch_xla; the parent side (``runner.py``, ``env.py``, ``request.py``) never
does, because torch_xla reads its debug environment once, at import.
"""
