"""A profile's time: steps, ops at the user's lines, and the host's timeline."""
