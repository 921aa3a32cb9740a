"""Many processes, one story: the merged report of a launched run's ranks."""
