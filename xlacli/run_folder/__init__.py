"""The run folder's contract, shared by both processes and torch-free: the request the
parent writes, the events the child appends, the folder's paths, and the lifeline."""
