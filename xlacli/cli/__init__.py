"""The command line: thin typer commands, one module per command.

``main`` is the one error boundary; commands never import torch.
"""
