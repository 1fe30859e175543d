"""Does a retrieved item match a gold evidence entry, and at which granularity?

Normative rules (DESIGN.md §6): a retrieved item **matches** a required evidence entry when
its file identity matches and every location field the gold gives (page, section, table,
row) matches too — by its metadata or, where the item has none, by the gold's anchor
(below). The granularities form a ladder, each adding one condition to the last:

- ``document`` — same file (:func:`same_file`).
- ``page``     — document, and the page is equal when the gold gives a page.
- ``section``  — page, and the section matches when the gold gives a section.
- ``row``      — section, and the table and the row match when the gold gives them.
- ``full``     — every location field the gold gives; with the fields the gold format has
  today this is the same as ``row``.

A condition on a field the gold does not give is no condition, so a level finer than what
the gold specifies degrades to the finest level the gold gives ("page" on a gold entry
without a page is "document"). A field the gold gives but the item lacks never matches.

File identity: ``file_id`` equality when both sides have one; otherwise filename equality
(basename only, Unicode NFC, casefolded); an item with neither never matches.

Labels (sections, tables, row labels) are compared **normalised**: Unicode NFKC, casefolded,
runs of whitespace (including no-break and narrow no-break spaces) collapsed to one space,
trimmed, trailing punctuation (``. , ; : ! ? … · - – —``) stripped, and ``§`` always followed
by exactly one space.

Section rule: the retrieved section may be a heading path ``"A > B > C"``. A gold section
matches when, after normalisation,

1. it equals the whole path, or any one component of it; or
2. it is a path itself (``"3 Safety > 3.2 Limits"``) whose components equal a contiguous run
   of the retrieved path's components; or
3. it and a component both start with a clause number (``3.2``, ``§ 4``, ``Art. 7``,
   ``Article 7``, ``Section 2``, ``Kapitel 5``, ``Ziffer 3``, ...) that is the same number
   (whole number: ``3.21`` is not ``3.2``), the clause words are compatible (equal after
   mapping synonyms such as Art./Article/Artikel, or given on one side only), and the titles
   after the numbers are equal or one side is the bare number. So gold ``"3.2"`` matches
   ``"3.2 Limites"``, gold ``"§ 4"`` matches ``"§4 Haftung"``, gold ``"3.2"`` does not match
   ``"3.21 Débit"``, and gold ``"Article 7"`` does not match ``"§ 7"``; or
4. one side is numbered and the other is not, and the titles are equal once the number is
   removed (gold ``"Limites"`` matches ``"3.2 Limites"``, and gold ``"3.2 Limites"`` matches a
   retrieved ``"Limites"``).

Table and row rule: a gold ``table`` matches ``item.table`` normalised-equal. A gold ``row``
that is an int matches ``item.row`` (1-based data row); a gold ``row`` that is a string
matches ``item.row_key`` normalised-equal, or the string form of ``item.row``.

Anchors: a gold entry may carry an ``anchor``, a short passage of its location.
Metadata is authoritative: an item that carries a location field (page, section, table,
row) is judged on it. An item that carries no metadata for a field the gold names (a
rag_api vector path returns no sections, and only the page a chunk starts on) holds that
field when its text contains the anchor (:func:`anchor_found`). Without an anchor, a field
the item lacks never matches. Exact-metadata success ignores anchors: it measures the
metadata itself.

Anchor containment does not depend on how an extractor serialises a row or a record. Both
sides are read as their **canonical characters**: NFKC, casefolded, keeping only letters,
digits, currency and other symbols (``€``, ``°``) and ``%``/``‰`` — so whitespace, line
breaks, tabs, ``|``, quotes, colons, braces and every other punctuation mark are gone, and
with them the grouping and decimal separators of numbers (``1 689`` = ``1689`` = ``1.689``,
``99,7`` = ``99.7``). A *word* is a maximal run of canonical characters in the original
text. The anchor is split into cells at ``|``; it is found when its cells occur in the
item's canonical text in order, each cell starting where a word of the item starts and
ending where one ends (``TW-P-24-003`` is not found in ``TW-P-24-0031``), with at most
:data:`ANCHOR_CELL_GAP` canonical characters between consecutive cells (a CSV or JSON
loader writes a column name before each value). So the row anchor
``T4 | 1 689 | 33 | 272 | 1 312`` is found in ``T4 1689 33 272 1312`` (XLSX through
unstructured), in ``T4\n\n1 689\n\n33\n\n272\n\n1 312`` (DOCX through docx2txt, a cell per
line), and ``project_id: TW-P-24-003`` in ``"project_id": "TW-P-24-003"`` (raw JSON).

Table integrity (:func:`table_integrity`): every cell text the gold names (header, row,
unit, footnote) is found in the item's text as a one-cell anchor is (canonical characters,
word boundaries). Empty ``table_cells`` is trivially intact.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pytest_ragv2.gold.schema import Evidence, TableCells
from pytest_ragv2.systems.outputs import RetrievedItem

Granularity = Literal["document", "page", "section", "row"]
MatchLevel = Granularity | Literal["full"]

GRANULARITIES: tuple[Granularity, ...] = ("document", "page", "section", "row")

# The ladder as numbers: 0 = no match, then one step per granularity. "full" and "row" are
# the same step because "row" is the last condition the gold format has.
LEVEL_STEPS: dict[str, int] = {"document": 1, "page": 2, "section": 3, "row": 4, "full": 4}
FULL_STEP = 4

_SPACE_RUN = re.compile(r"\s+")
_SECTION_SIGN = re.compile(r"§\s*")
_TRAILING_PUNCTUATION = ".,;:!?…·-–— "
_TITLE_SEPARATORS = ".,;:)-–— "
_CLAUSE = re.compile(
    r"(?:(?P<word>§|art\.?|article|artikel|section|sec\.?|abschnitt|chapter|chapitre|kapitel"
    r"|clause|ziffer|nr\.?|no\.?)\s*)?"
    r"(?P<number>\d+(?:\.\d+)*[a-z]?)(?!\w)\.?(?P<rest>.*)"
)
_CLAUSE_WORDS = {
    "§": "§",
    "art": "article",
    "article": "article",
    "artikel": "article",
    "section": "section",
    "sec": "section",
    "abschnitt": "section",
    "chapter": "chapter",
    "chapitre": "chapter",
    "kapitel": "chapter",
    "clause": "clause",
    "ziffer": "clause",
    "nr": "number",
    "no": "number",
}


def normalise_text(text: str) -> str:
    """NFKC, casefold, whitespace runs (incl. no-break, narrow no-break) collapsed, trimmed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE_RUN.sub(" ", folded).strip()


@lru_cache(maxsize=8192)
def normalise_label(text: str) -> str:
    """A section/table/row label for comparison: :func:`normalise_text`, then trailing
    punctuation stripped and ``§`` followed by exactly one space."""
    label = normalise_text(text).rstrip(_TRAILING_PUNCTUATION)
    if "§" in label:
        label = _SECTION_SIGN.sub("§ ", label).rstrip()
    return label


@lru_cache(maxsize=8192)
def normalise_filename(name: str) -> str:
    """Basename (either slash), Unicode NFC, casefolded (NFC again: casefold may decompose)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", base).casefold())


@dataclass(frozen=True, slots=True)
class SectionComponent:
    """One normalised heading of a section path, split into clause word, number and title."""

    text: str
    clause_word: str | None
    number: str | None
    title: str


def _parse_component(text: str) -> SectionComponent:
    found = _CLAUSE.fullmatch(text)
    if found is None:
        return SectionComponent(text, None, None, text)
    word = found["word"]
    canonical = _CLAUSE_WORDS[word.rstrip(".")] if word else None
    title = found["rest"].strip(_TITLE_SEPARATORS)
    return SectionComponent(text, canonical, found["number"], title)


@lru_cache(maxsize=8192)
def section_path(section: str) -> tuple[SectionComponent, ...]:
    """A section (possibly a ``" > "`` heading path) as normalised, parsed components."""
    parts = (normalise_label(part) for part in section.split(">"))
    return tuple(_parse_component(part) for part in parts if part)


def _component_matches(gold: SectionComponent, found: SectionComponent) -> bool:
    if gold.text == found.text:
        return True
    if gold.number is not None and found.number is not None:
        if gold.number != found.number:
            return False
        words_agree = (
            gold.clause_word is None
            or found.clause_word is None
            or gold.clause_word == found.clause_word
        )
        titles_agree = not gold.title or not found.title or gold.title == found.title
        return words_agree and titles_agree
    # A numbered heading against a plain one: compare the titles with the number removed.
    return (gold.number is None) != (found.number is None) and gold.title == found.title


def section_matches(gold_section: str, found_section: str) -> bool:
    """The section rule of this module's docstring."""
    return _path_matches(section_path(gold_section), section_path(found_section))


def _path_matches(gold: tuple[SectionComponent, ...], found: tuple[SectionComponent, ...]) -> bool:
    if not gold or not found:
        return False
    if len(gold) == 1:
        only = gold[0]
        return any(_component_matches(only, component) for component in found)
    gold_texts = [component.text for component in gold]
    found_texts = [component.text for component in found]
    width = len(gold_texts)
    return any(
        found_texts[start : start + width] == gold_texts
        for start in range(len(found_texts) - width + 1)
    )


def _file_matches(
    item_file_id: str | None,
    item_filename: str | None,
    gold_file_id: str | None,
    gold_filename: str | None,
) -> bool:
    if item_file_id and gold_file_id:
        return item_file_id == gold_file_id
    if item_filename and gold_filename:
        return normalise_filename(item_filename) == normalise_filename(gold_filename)
    return False


def same_file(item: RetrievedItem, ev: Evidence) -> bool:
    """File identity: file_id when both have one, else normalised filename; else no match."""
    return _file_matches(item.file_id, item.filename, ev.file_id, ev.filename)


def _row_matches(item: RetrievedItem, gold_row: int | str) -> bool:
    if isinstance(gold_row, int):
        return item.row == gold_row
    wanted = normalise_label(gold_row)
    if item.row_key is not None and normalise_label(item.row_key) == wanted:
        return True
    return item.row is not None and str(item.row) == wanted


_KEPT_SYMBOLS = frozenset("%‰")
ANCHOR_CELL_GAP = 40  # canonical characters allowed between two cells of a row anchor


@dataclass(frozen=True, slots=True)
class CanonicalText:
    """A text's canonical characters and where its words start and end in them."""

    chars: str
    starts: frozenset[int]
    ends: frozenset[int]


def _kept(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] in "LN" or category in ("Sc", "So") or char in _KEPT_SYMBOLS


@lru_cache(maxsize=4096)
def canonical_text(text: str) -> CanonicalText:
    """The canonical characters of ``text`` (module docstring) with its word boundaries."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    chars: list[str] = []
    starts: set[int] = set()
    ends: set[int] = set()
    in_word = False
    for char in folded:
        if _kept(char):
            if not in_word:
                starts.add(len(chars))
                in_word = True
            chars.append(char)
        elif in_word:
            ends.add(len(chars))
            in_word = False
    if in_word:
        ends.add(len(chars))
    return CanonicalText("".join(chars), frozenset(starts), frozenset(ends))


@lru_cache(maxsize=8192)
def _anchor_cells(anchor: str) -> tuple[str, ...]:
    cells = (canonical_text(cell).chars for cell in anchor.split("|"))
    return tuple(cell for cell in cells if cell)


def _cells_from(text: CanonicalText, cells: tuple[str, ...], index: int, after: int) -> bool:
    """Whether ``cells[index:]`` occur in order from ``after`` on (the first of them within
    the gap unless it is the anchor's first cell)."""
    if index == len(cells):
        return True
    cell = cells[index]
    limit = len(text.chars) if index == 0 else after + ANCHOR_CELL_GAP
    position = text.chars.find(cell, after)
    while position != -1 and position <= limit:
        end = position + len(cell)
        if (
            position in text.starts
            and end in text.ends
            and _cells_from(text, cells, index + 1, end)
        ):
            return True
        position = text.chars.find(cell, position + 1)
    return False


def anchor_found(anchor: str, text: str) -> bool:
    """Whether ``text`` holds ``anchor`` by the extractor-independent rule of the module
    docstring (canonical characters, word boundaries, ``|`` cells in order)."""
    cells = _anchor_cells(anchor)
    return bool(cells) and _cells_from(canonical_text(text), cells, 0, 0)


def _anchor_in(item: RetrievedItem, ev: Evidence) -> bool:
    return ev.anchor is not None and anchor_found(ev.anchor, item.text)


def match_step(item: RetrievedItem, ev: Evidence, *, anchors: bool = True) -> int:
    """How far up the ladder the item matches the entry: 0 none, 1 document, 2 page,
    3 section, 4 row (= full). With ``anchors``, a location field the item carries no
    metadata for holds when its text contains the gold's anchor (see the module docstring).
    """
    if not same_file(item, ev):
        return 0
    anchored: bool | None = None  # computed once, only when some metadata is missing

    def by_anchor() -> bool:
        nonlocal anchored
        if anchored is None:
            anchored = anchors and _anchor_in(item, ev)
        return anchored

    if ev.page is not None and item.page != ev.page and (item.page is not None or not by_anchor()):
        return 1
    if ev.section is not None:
        if item.section is None:
            if not by_anchor():
                return 2
        elif not section_matches(ev.section, item.section):
            return 2
    if ev.table is not None:
        if item.table is None:
            if not by_anchor():
                return 3
        elif normalise_label(item.table) != normalise_label(ev.table):
            return 3
    if ev.row is not None:
        if item.row is None and item.row_key is None:
            if not by_anchor():
                return 3
        elif not _row_matches(item, ev.row):
            return 3
    return FULL_STEP


def matches(item: RetrievedItem, ev: Evidence, level: MatchLevel = "full") -> bool:
    """Whether the item matches the entry at ``level`` (see the module docstring)."""
    return match_step(item, ev) >= LEVEL_STEPS[level]


def table_integrity(item: RetrievedItem, cells: TableCells) -> bool:
    """Every cell text the gold names appears in the item's text (both normalised)."""
    named = cells.named()
    return all(anchor_found(value.replace("|", " "), item.text) for value in named.values())
