"""Does an answer have the requested format? (``mandatory_constraints.format``)

- ``table``: a markdown table (a row of cells, a ``|---|`` separator line, a row), or at
  least two consecutive lines that share a separator (``|``, a tab or ``;``) the same
  number of times — with a tab or ``;``, cells of at most 40 characters (prose wrapped over
  lines with a semicolon in each is no table);
- ``one_sentence``: exactly one sentence once citation markers are removed (sentences as
  :func:`pytest_ragv2.scoring.answer_text.sentence_spans` splits them, line breaks included);
- ``list``: at least two lines that start with a bullet (``-``, ``*``, ``•``, ``+``) or a
  number (``1.``, ``2)``).

An unknown format name is not judged (``None``).

A case that declares no format is held to the one its prompt asks for in so many words
(:func:`requested_format`: "as a table", "sous forme de tableau", "in einem Satz"): the
prompt is the request the rubric's Format dimension judges.
"""

from __future__ import annotations

import re

from pytest_ragv2.scoring.answer_text import sentence_spans
from pytest_ragv2.scoring.markers import CITATION_MARKER

_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+\S")

FORMATS = ("table", "one_sentence", "list")

# a request for a format, in the prompt's words: a preposition or verb of form before the
# format's noun, so that "the table of prices" or "a list of connectors" asks for nothing
_REQUESTS = {
    "table": re.compile(
        r"\b(?:(?:as|in|into)\s+a\s+table|in\s+table\s+form|tabulate)\b"
        # a table asked for by a verb of request ("give me a table of ...", "erstelle eine
        # Tabelle", "dresse un tableau")
        r"|\b(?:give|provide|show|make|create|produce|prepare|draw\s+up|put\s+together)"
        r"\s+(?:me\s+|us\s+)?a\s+table\b"
        r"|\b(?:donne|donnez|fais|faites|dresse|dressez|fournis|fournissez|pr[ée]sente|"
        r"pr[ée]sentez|[ée]tablis|[ée]tablissez)(?:-moi|-nous)?\s+un\s+tableau\b"
        # ... or in the infinitive after a modal ("peux-tu me faire un tableau", "kannst
        # du mir eine Tabelle erstellen")
        r"|\b(?:me|nous)\s+(?:faire|donner|dresser|fournir|pr[ée]senter|[ée]tablir)"
        r"\s+un\s+tableau\b"
        r"|\beine\s+tabelle\s+(?:erstellen|machen|geben|liefern|anlegen)\b"
        r"|\b(?:gib|geben\s+sie|erstelle|erstellen\s+sie|mach|machen\s+sie|liefere|"
        r"liefern\s+sie)\s+(?:mir\s+|uns\s+)?(?:bitte\s+)?eine\s+tabelle\b"
        r"|\b(?:sous\s+(?:la\s+)?forme\s+d['’]un\s+tableau|sous\s+forme\s+de\s+tableau"
        r"|dans\s+un\s+tableau|en\s+tableau)\b"
        r"|\b(?:(?:als|in\s+einer)\s+tabelle|in\s+tabellenform|tabellarisch)\b",
        re.IGNORECASE,
    ),
    "one_sentence": re.compile(
        r"\b(?:in\s+(?:one|a\s+single)\s+sentence|en\s+une\s+(?:seule\s+)?phrase"
        r"|in\s+(?:einem|einem\s+einzigen)\s+satz)\b",
        re.IGNORECASE,
    ),
    "list": re.compile(
        r"\b(?:as\s+a\s+(?:bulleted\s+)?list|in\s+a\s+(?:bulleted\s+)?list"
        r"|sous\s+forme\s+de\s+liste|en\s+liste|als\s+(?:stichpunkt)?liste"
        r"|in\s+(?:einer\s+)?(?:stichpunkt)?liste|in\s+stichpunkten)\b",
        re.IGNORECASE,
    ),
}


def requested_format(prompt: str) -> str | None:
    """The format ``prompt`` asks for in so many words (one of :data:`FORMATS`), or None
    when it asks for none or for more than one."""
    asked = [name for name, request in _REQUESTS.items() if request.search(prompt)]
    return asked[0] if len(asked) == 1 else None


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
            if separator != "|" and any(
                len(cell.strip()) > _CELL for cell in cells.split(separator)
            ):
                count = 0  # prose wrapped over lines with a semicolon in each: no cells
            if count >= 1 and count == previous:
                return True
            previous = count
    return False


# the longest cell of a table separated by tabs or semicolons, in characters
_CELL = 40


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
