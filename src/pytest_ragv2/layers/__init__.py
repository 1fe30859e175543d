"""What one item does at each layer: call the system, keep the raw run, score it."""
