"""The patterns of an answer's non-claim text — citation markers, URLs, filenames and list
markers — that the text reader and the value reader both step over (a leaf: it imports
nothing of the package).
"""

from __future__ import annotations

import re

CITATION_MARKER = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]|[\ue000-\uf8ff][\w-]*")
URL = re.compile(r"https?://[^\s<>()\[\]\"']+", re.IGNORECASE)
FILENAME = re.compile(
    r"(?<![\w/.-])[\w][\w.-]*\.(?:pdf|docx?|xlsx?|pptx?|md|json|csv|txt|html?|odt|ods)(?!\w)",
    re.IGNORECASE,
)
LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:\d{1,2}[.)]|[-*•+])(?=[ \t])")
