"""Ranks compared: where their graphs diverge, stragglers, and where a hang stopped each."""
