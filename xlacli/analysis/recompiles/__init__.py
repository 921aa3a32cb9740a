"""Why each graph was compiled: the recompile explainer, its patterns and phases, and the
IR and HLO comparisons it reads."""
