"""Reading what a session wrote as a reader would: compressed raw runs decompressed, so a
search for a secret or a control character never passes by looking at gzip bytes."""

from __future__ import annotations

import gzip
from pathlib import Path


def artifact_text(path: Path) -> str:
    """A written file's text; a ``.gz`` file (a chat layer's raw runs) decompressed, and a
    report.html with its case panels filled in from their compressed block (what a browser
    shows once they are opened), so a scan of the page reads every panel."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    text = data.decode("utf-8", errors="replace")
    if path.name == "report.html":
        from pytest_ragv2.report.case_data import inline

        text = inline(text)
    return text
