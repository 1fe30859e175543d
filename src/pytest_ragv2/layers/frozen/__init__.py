"""Layer C, frozen evidence: its layer, the frozen evidence package and the prompt built from it."""
