"""The folder ``capture/runner.py`` runs to start the child (``__main__.py``)."""
