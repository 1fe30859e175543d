"""Does an answer have the requested format? (``mandatory_constraints.format``)

- ``table``: a markdown table (a row of cells, a ``|---|`` separator line, a row), or at
  least two consecutive lines that share a separator (``|``, a tab or ``;``) the same
  number of times;
- ``one_sentence``: exactly one sentence once citation markers are removed (sentences as
  :func:`pytest_ragv2.scoring.answer_text.sentence_spans` splits them, line breaks included);
- ``list``: at least two lines that start with a bullet (``-``, ``*``, ``•``, ``+``) or a
  number (``1.``, ``2)``).

An unknown format name is not judged (``None``).
"""

from __future__ import annotations

import re

from pytest_ragv2.scoring.answer_text import CITATION_MARKER, sentence_spans

_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+\S")

FORMATS = ("table", "one_sentence", "list")


def is_table(answer: str) -> bool:
    lines = [line for line in answer.splitlines() if line.strip()]
    for index in range(1, len(lines) - 1):
        if _MD_SEPARATOR.match(lines[index]) and "|" in lines[index - 1]:
            return "|" in lines[index + 1] or "|" in lines[index]
    for separator in ("|", "\t", ";"):
        previous = 0
        for line in lines:
            cells = line.strip().strip("|") if separator == "|" else line
            count = cells.count(separator)
            if count >= 1 and count == previous:
                return True
            previous = count
    return False


def is_one_sentence(answer: str) -> bool:
    return len(sentence_spans(CITATION_MARKER.sub("", answer).strip())) == 1


def is_list(answer: str) -> bool:
    return sum(1 for line in answer.splitlines() if _BULLET.match(line)) >= 2


def format_ok(answer: str, wanted: str) -> bool | None:
    """Whether ``answer`` has format ``wanted``; None for a format this module does not know."""
    if wanted == "table":
        return is_table(answer)
    if wanted == "one_sentence":
        return is_one_sentence(answer)
    if wanted == "list":
        return is_list(answer)
    return None
