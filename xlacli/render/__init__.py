"""Renderers: terminal (rich) and JSON, one module per view."""
