"""The case panels' contents, carried compressed: report.html stays light.

A panel's summary line and its runs' summary lines are part of the page (the filters, the
sort and the links work on them); what is inside them (the case's gold, the side-by-side
table, each run's reasons, ranked list, turns and whole answer) is one JSON object per
case, ``{"gold": html, "side": html, "runs": [html, ...], "text": words}``, gathered in
one object keyed by case id, gzip-compressed and base64-encoded into a single
``<script type="application/octet-stream" id="case-data">`` block at the end of the page.
The page's script decompresses it with the browser's ``DecompressionStream`` the first
time a panel is opened or the text search is used, and fills the panel in. The block holds
base64 only, so nothing from a run can end it; the HTML inside was escaped as the rest of
the page is.

The block is written as the panels are made (:class:`CaseData`), never held whole
uncompressed. :func:`inline` puts the contents back into a page's panels, for tools and
tests that read the page as text.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
import zlib
from typing import Any

from pytest_ragv2.report.safe_text import json_dumps

BLOCK_ID = "case-data"
GOLD_SLOT = "<div class='gold'></div>"
SIDE_SLOT = "<div class='side'></div>"
RUN_SLOT = "<div class='run-body'></div>"
_BLOCK = re.compile(
    r"<script type=\"application/octet-stream\" id=\"" + BLOCK_ID + r"\">([^<]*)</script>"
)
_PANEL = re.compile(r"<details class='case-panel'[^>]*? data-case='([^']*)'")


class CaseData:
    """The compressed block, made as the cases are added: ``add`` per case, then
    ``block`` once."""

    def __init__(self) -> None:
        # gzip framing (wbits 31) with no file name and time 0: the same runs, the same bytes
        self._compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        self._compressed: list[bytes] = [self._compressor.compress(b"{")]
        self._first = True
        self.cases = 0

    def add(self, case_id: str, gold: str, side: str, runs: list[str], text: str) -> None:
        entry = {"gold": gold, "side": side, "runs": runs, "text": text}
        piece = ("" if self._first else ",") + json_dumps(case_id) + ":" + json_dumps(entry)
        self._first = False
        self.cases += 1
        self._compressed.append(self._compressor.compress(piece.encode("utf-8")))

    def block(self) -> str:
        """The ``<script>`` block holding every case added (empty when none was)."""
        self._compressed.append(self._compressor.compress(b"}"))
        self._compressed.append(self._compressor.flush())
        encoded = base64.b64encode(b"".join(self._compressed)).decode("ascii")
        self._compressed = []
        return f'<script type="application/octet-stream" id="{BLOCK_ID}">{encoded}</script>'


def decode(page: str) -> dict[str, dict[str, Any]]:
    """The panels' contents of a page, by case id (empty when the page has no block)."""
    found = _BLOCK.search(page)
    if found is None:
        return {}
    data: dict[str, dict[str, Any]] = json.loads(
        gzip.decompress(base64.b64decode(found.group(1))).decode("utf-8")
    )
    return data


def inline(page: str) -> str:
    """The page with every panel filled in, as the script fills one when it is opened."""
    data = decode(page)
    if not data:
        return page
    pieces: list[str] = []
    last = 0
    starts = list(_PANEL.finditer(page))
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(page)
        pieces.append(page[last : match.start()])
        chunk = page[match.start() : end]
        entry = data.get(html.unescape(match.group(1)))
        if entry is not None:
            chunk = chunk.replace(GOLD_SLOT, f"<div class='gold'>{entry['gold']}</div>", 1)
            chunk = chunk.replace(SIDE_SLOT, f"<div class='side'>{entry['side']}</div>", 1)
            for body in entry["runs"]:
                chunk = chunk.replace(RUN_SLOT, f"<div class='run-body'>{body}</div>", 1)
        pieces.append(chunk)
        last = end
    pieces.append(page[last:])
    return "".join(pieces)
