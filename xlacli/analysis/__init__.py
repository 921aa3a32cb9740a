"""Pure processors over organised runs, one subpackage per concern: recompiles (why each
graph compiled), dynamo, memory, spmd, advice, profile, ranks, check (the CI gate);
``fallbacks`` and ``mode_figures`` stand alone."""
