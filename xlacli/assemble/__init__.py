"""A raw run folder -> a ``RunReport``, in stages: read the raw artifacts, organise
graphs, steps and files, run the analyses, freeze the report."""
