"""The harness-executed knowledge-base tool: its definition, its JSON results, its citations.

A local OpenAI-compatible model has no knowledge base of its own; the ``openai-chat``
adapter offers it ``SEARCH_TOOL`` and answers each call with the system's retrieval adapter.
This module holds the pure parts, shared by the adapter, the demo answer model and the
scorers:

- ``render_sources(items, start)``: the tool message content, JSON text
  ``{"sources": [{"n": 1, "file_id": ..., "text": ...}, ...]}``; keys whose value is None
  are left out (``n`` and ``text`` are always there). ``start`` is the number of the first
  source, so numbering can continue across the calls of a conversation.
- ``parse_sources(text)``: the source objects back out of such a content.
- ``cite_markers(answer)``: the citation markers of an answer and the numbers they name.
- ``resolve_citations(answer, sources)``: those markers as ``Citation`` objects.

Citation markers: ``[n]``; ``[1][3]`` is two markers; ``[1, 3]`` (also ``[1,3]``,
``[1; 3]``) is one marker naming two sources; ``[1-3]`` (also with an en dash) is one
marker naming 1, 2 and 3. A range running backwards or wider than ``MAX_RANGE_SPAN`` names
only its two ends (no answer cites fifty sources at once; ``[1-1000000]`` must stay cheap).
Markdown footnotes (``[^1]``) and link targets are not markers; any other bracketed list of
numbers is, so a number the model invents shows up as a dangling citation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import Citation

SEARCH_TOOL_NAME = "search_knowledge_base"
SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SEARCH_TOOL_NAME,
        "description": "Search the knowledge base. Returns numbered sources; cite them as [n].",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}

# The location fields a source carries, in the order they are written.
SOURCE_FIELDS = ("file_id", "filename", "page", "section", "table", "row")
MAX_RANGE_SPAN = 50

_MARKER = re.compile(r"\[(\d+(?:\s*[-–,;]\s*\d+)*)\]")
_PART = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")


def source_object(item: RetrievedItem, n: int) -> dict[str, Any]:
    """One source as the model sees it: ``n``, the non-None location fields, ``text``."""
    source: dict[str, Any] = {"n": n}
    for name in SOURCE_FIELDS:
        value = getattr(item, name)
        if value is not None:
            source[name] = value
    source["text"] = item.text
    return source


def render_sources(items: Sequence[RetrievedItem], start: int = 1) -> str:
    """The tool result for ``items``, numbered from ``start`` (JSON text, non-ASCII kept)."""
    sources = [source_object(item, n) for n, item in enumerate(items, start=start)]
    return json.dumps({"sources": sources}, ensure_ascii=False)


def render_error(message: str) -> str:
    """The tool result of a search that failed: ``{"error": message}``."""
    return json.dumps({"error": message}, ensure_ascii=False)


def parse_sources(text: str) -> list[dict[str, Any]]:
    """The source objects of a tool result (``[]`` for an error result or anything else).

    Only entries with an integer ``n`` and a string ``text`` are kept.
    """
    try:
        data = json.loads(text)
    except ValueError:
        return []
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, list):
        return []
    return [
        source
        for source in sources
        if isinstance(source, dict)
        and isinstance(source.get("n"), int)
        and not isinstance(source.get("n"), bool)
        and isinstance(source.get("text"), str)
    ]


def parse_error(text: str) -> str | None:
    """The message of an error tool result, or None when ``text`` is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, str) else None


def item_from_source(source: Mapping[str, Any]) -> RetrievedItem:
    """A parsed source as a ``RetrievedItem`` (rank = its number)."""
    fields = {name: source[name] for name in SOURCE_FIELDS if name in source}
    return RetrievedItem(rank=source["n"], text=source["text"], **fields)


def numbered(items: Sequence[RetrievedItem], start: int = 1) -> list[RetrievedItem]:
    """``items`` with rank = source number (what ``render_sources(items, start)`` shows)."""
    return [
        item if item.rank == n else replace(item, rank=n)
        for n, item in enumerate(items, start=start)
    ]


def _marker_numbers(inside: str) -> list[int]:
    numbers: list[int] = []
    for part in _PART.finditer(inside):
        first = int(part.group(1))
        if part.group(2) is None:
            numbers.append(first)
            continue
        last = int(part.group(2))
        if first <= last and last - first <= MAX_RANGE_SPAN:
            numbers.extend(range(first, last + 1))
        else:
            numbers.extend([first, last])
    return list(dict.fromkeys(numbers))


def cite_markers(answer: str) -> list[tuple[str, list[int]]]:
    """Each citation marker of ``answer`` as written, with the source numbers it names.

    In the order they appear; a marker repeated word for word is listed each time.
    """
    found: list[tuple[str, list[int]]] = []
    for match in _MARKER.finditer(answer):
        end = match.end()
        line_start = match.start() == 0 or answer[match.start() - 1] == "\n"
        if answer.startswith("(", end) or (line_start and answer.startswith(":", end)):
            continue  # a Markdown link "[1](...)" or reference definition "[1]: ..."
        found.append((match.group(0), _marker_numbers(match.group(1))))
    return found


def resolve_citations(answer: str, sources: Sequence[RetrievedItem]) -> list[Citation]:
    """One ``Citation`` per (marker as written, number) of ``answer``, first appearance order.

    ``sources`` are numbered by their ``rank`` (see ``numbered``). A number that names no
    source gives a dangling ``Citation(marker)`` with None fields. A marker naming several
    sources (``[1, 3]``) gives one citation per source, each with the marker as written, so
    a scorer can find the claim next to it.
    """
    by_number = {item.rank: item for item in sources}
    citations: list[Citation] = []
    seen: set[tuple[str, int]] = set()
    for marker, numbers in cite_markers(answer):
        for number in numbers:
            if (marker, number) in seen:
                continue
            seen.add((marker, number))
            item = by_number.get(number)
            citations.append(Citation.of_item(marker, item))
    return citations
