"""pytest-ragv2: may a new RAG system replace the old one? The gates are the exit status."""

__version__ = "0.1.0"

from pytest_ragv2._moved import install as _keep_old_paths

_keep_old_paths()
