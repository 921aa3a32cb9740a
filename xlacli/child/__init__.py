"""The child process: the only code that imports torch and torch_xla.

It loads the model file or script, runs its steps and observers, and writes the run
folder's events; torch_xla reads its debug environment once, at import, so this runs
in a process of its own with that environment set by ``capture/``.
"""
