"""The CI gate: a run held against its committed baseline, and the ad-hoc budgets."""
