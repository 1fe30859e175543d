"""pytest-ragv2: evaluate a candidate RAG system against a baseline, with the gates as exit status."""

__version__ = "0.1.0"
