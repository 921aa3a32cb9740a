"""xlacli: compile, explain and profile PyTorch models on PyTorch/XLA.

Importing this package must stay cheap: it never imports torch. Only
``xlacli.capture`` (which runs in the child process) does.
"""

__version__ = "0.1.0"
