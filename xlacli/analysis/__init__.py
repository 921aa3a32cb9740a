"""Pure processors over captured runs: recompile causes, checks against a baseline."""
