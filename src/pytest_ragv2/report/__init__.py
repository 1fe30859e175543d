"""Reports of a finished session: terminal, summary.json, summary.md."""
