"""torch.compile (Dynamo): its frames, graph breaks and failed guards, explained."""
