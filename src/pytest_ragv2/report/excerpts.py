"""Excerpts as every report shows them: cut at a word, never inside one, with an ellipsis."""

from __future__ import annotations

ELLIPSIS = "…"
_TRAILING = " \t\r\n,;:-–—"


def excerpt(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters; else its beginning, cut at
    the last word boundary within ``limit`` (mid-word only for a single word longer than
    half the limit), trailing punctuation and spaces dropped, and ``…`` appended."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - 1, 1)]
    if not text[len(head)].isspace():
        boundary = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if boundary > len(head) // 2:
            head = head[:boundary]
    return head.rstrip(_TRAILING) + ELLIPSIS


def capped_note(shown: int, total: int, where: str = "summary.json") -> str:
    """The line that says a list was capped: "… and N more, all in summary.json"."""
    return f"{ELLIPSIS} and {total - shown} more, all in {where}"
