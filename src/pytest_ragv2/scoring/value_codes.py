"""Identifiers (part numbers, model codes, references) and the typed identifiers (e-mail
addresses, URLs, IBANs), read as values. (:mod:`pytest_ragv2.scoring.values` reads an answer
with them.)
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

from pytest_ragv2.scoring.identifiers import TypedIdentifier, typed_identifiers, url_key
from pytest_ragv2.scoring.markers import CITATION_MARKER, FILENAME
from pytest_ragv2.scoring.normalisation import Normalised, normalise
from pytest_ragv2.scoring.numbers import UNIT_DIMENSIONS, normalise_unit

if TYPE_CHECKING:
    pass

from pytest_ragv2.scoring.value_amounts import _SCALE_AFTER, _suffix
from pytest_ragv2.scoring.value_base import Value, _Collector
from pytest_ragv2.scoring.value_dates import _HAS_DIGIT

_GROUP = re.compile(r"[^\W_]+")
_SPACE_RUN = re.compile(r"\s+")
_PLAIN_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_PLAIN_TOKEN = re.compile(r"[(\[\"'«„]?[-+]?\d+(?:[.,']\d+)*[%€$£)\]\"'»“.,;:!?]*")
_KEY_GROUP = re.compile(r"[^\W\d_]+|\d+")
_ID_SEPARATORS = "-/.\u2010\u2011"
_DIGIT_WORD = re.compile(r"(?<!\S)[^\s\d]*\d\S*")
_COMPOUND = re.compile(r"[^\W_]+(?:[-/.\u2010\u2011][^\W_]+)*")
_CAPS_BEFORE = re.compile(
    r"(?:^|(?<=[\s(\[\"'«„]))(?P<caps>[A-Z][A-Z0-9]*(?:[/\-][A-Z][A-Z0-9]*)*)[^\S\n\r]+$"
)
_CAPS_STOP = frozenset(
    {"EUR", "USD", "GBP", "CHF", "ET", "OU", "UND", "ODER", "AND", "OR", "LE", "LA", "LES"}
    | {"DE", "DU", "DES", "DER", "DIE", "DAS", "THE", "TO", "IN", "AB", "BIS", "VON"}
    | {"TVA", "MWST", "VAT", "FY", "GJ", "CA", "NR", "NO", "REF"}
)
# a number glued to a unit, scale or ordinal suffix ("48h", "3.145M", "1er", "4th"): no identifier
_NUMBER_SUFFIX = re.compile(r"[\d.,']*\d[^\W\d_]{1,4}")
_ORDINARY = re.compile(r"[^\W\d_][^\W\d_A-Z]{3,}")


def identifier_key(text: str) -> str:
    """The canonical groups of an identifier as written: capitals, each separator and each
    change between letters and digits a ``-`` ("DB-TVS75-DE-09" → "DB-TVS-75-DE-09")."""
    return "-".join(_KEY_GROUP.findall(unicodedata.normalize("NFKC", text).upper()))


def _ordinary_word(word: str) -> bool:
    """A dictionary-like word: letters only, four or more, lower-case after the first."""
    return _ORDINARY.fullmatch(word) is not None and word[1:] == word[1:].lower()


def _capital_before(text: str, start: int) -> bool:
    """Do white space and, before it, a capital letter precede ``start``?"""
    window = text[max(0, start - 8) : start]
    return window[-1:].isspace() and window.rstrip()[-1:].isupper()


def _caps_before(text: str, start: int, found: _Collector) -> int | None:
    """Where an all-capital word ending one space before ``start`` begins ("ISO 27001")."""
    if not _capital_before(text, start):
        return None
    window_start = max(0, start - 40)
    match = _CAPS_BEFORE.search(text, window_start, start)
    if match is None:
        return None
    word = match["caps"]
    if sum(char.isupper() for char in word) < 2 or word in _CAPS_STOP:
        return None
    if match.start("caps") == window_start and window_start > 0:
        return None
    if not found.free((match.start("caps"), start)):
        return None
    return match.start("caps")


def _spaced_number_ok(text: str, end: int, core: str) -> bool:
    """May the number ``core`` (ending at ``end``) follow a capital word as an identifier?
    Not a year, a decimal, a thousands group, nor a number with its unit."""
    if re.fullmatch(r"(?:19|20)\d\d", core):
        return False
    rest = text[end : end + 24]
    if re.match(r"[.,]\d|[^\S\n\r]+\d{3}(?!\d)", rest):
        return False
    tail = _SPACE_RUN.sub(" ", unicodedata.normalize("NFKC", rest).casefold()).lstrip()
    return _suffix(tail, 0, None, prefixed=False).dimension is None


def _after_capitals(
    text: str, start: int, core_start: int, core_end: int, found: _Collector
) -> tuple[int, int] | None:
    """A number right after an all-capital word ("ISO 27001", "TVS 75D") as one identifier."""
    if core_start != start or not start or not text[start - 1].isspace():
        return None
    caps = _caps_before(text, core_start, found)
    if caps is None:
        return None
    letter = _CAPITAL_AFTER.match(text, core_end)
    if letter is not None and not re.fullmatch(r"(?:19|20)\d\d", text[core_start:core_end]):
        return caps, letter.end()  # "TS 7502 L": a part number's last group, not litres
    if not _spaced_number_ok(text, core_end, text[core_start:core_end]):
        return None
    return caps, core_end


# a single capital letter after the number of a spaced identifier ("TS 7502 L", "SK 220 A")
_CAPITAL_AFTER = re.compile(r" [A-Z](?![\w/\u00b2\u00b3]|\.\w)")


def _identifier_of(text: str, start: int, end: int, found: _Collector) -> tuple[int, int] | None:
    """The identifier span within the compound ``text[start:end]``, None when it is none."""
    groups = [(m.start(), m.end(), m.group()) for m in _GROUP.finditer(text, start, end)]
    while groups and _ordinary_word(groups[0][2]):
        groups.pop(0)
    while groups and _ordinary_word(groups[-1][2]):
        groups.pop()
    if not groups:
        return None
    core_start, core_end = groups[0][0], groups[-1][1]
    core = text[core_start:core_end]
    if not any(char.isdigit() for char in core):
        return None
    if not any(char.isupper() for char in core) and any(
        re.fullmatch(r"[^\W\d_]{2,3}", group) for _, _, group in groups
    ):
        return None  # "end-2026", "10-to-90", "pre-2020": a short word and a number, in lower case
    stripped = core_start != start or core_end != end
    letters = sum(char.isalpha() for char in core)
    if core[0].isalpha() and len(core) <= 8 and normalise_unit(core) in UNIT_DIMENSIONS:
        return None  # "m3/min", "m³/h"
    if core[0].isdigit():
        if _NUMBER_SUFFIX.fullmatch(core) and _unit_or_ordinal(core):
            return None  # "48h", "3.145M", "1er", "4th"
        number, hyphen, unit = core.partition("-")
        if hyphen and re.fullmatch(r"\d+(?:[.,]\d+)?", number) and _unit_or_ordinal(number + unit):
            return None  # "22-kW-Motor", "5-bar-Ventil": a number and its unit, joined
        capitals = _after_capitals(text, start, core_start, core_end, found)
        if capitals is not None:
            return capitals  # "ISO 27001", "TVS 75-10", "TVK 220-C", "TVM 30-H2"
        if letters == 0:
            # digit groups joined by hyphens or slashes ("301-224-05"); never by dots or
            # commas ("1.689.000" is a number)
            joined = set(_GROUP.sub("", core)) <= set(_ID_SEPARATORS) - {"."}
            if joined and (len(groups) >= 3 or (stripped and len(groups) >= 2)):
                return core_start, core_end
            return None
        if _NUMBER_SUFFIX.fullmatch(core):
            return None  # "22OA", "75D" alone: a number and letters
    alnum = sum(char.isalnum() for char in core)
    # one letter: a capital and three characters at least ("F12", "A380"; not "Q4", "3x")
    if letters < 2 and not (core[0].isupper() and alnum >= 3):
        return None
    return core_start, core_end


_ORDINAL_SUFFIXES = frozenset({"er", "re", "e", "ème", "eme", "st", "nd", "rd", "th", "te"})


def _unit_or_ordinal(core: str) -> bool:
    """Is ``core`` a number glued to a unit, scale, currency or ordinal suffix?"""
    letters = core.lstrip("0123456789.,'").casefold()
    if letters in _ORDINAL_SUFFIXES:
        return True
    folded = core.casefold()
    number_end = len(core) - len(letters)
    return (
        _suffix(folded, number_end, None, prefixed=False).dimension is not None
        or _SCALE_AFTER.fullmatch(letters) is not None
    )


# two spaced models joined by a slash ("TVS 45/TVS 75"): two identifiers, not one
_SLASHED_MODELS = re.compile(
    r"(?<![\w/-])(?P<a>[A-Z][A-Z0-9]{1,5} \d+(?:-[A-Z0-9]+)*)"
    r" ?/ ?(?P<b>[A-Z][A-Z0-9]{1,5} \d+(?:-[A-Z0-9]+)*)(?![\w/-])"
)


def _identifiers(text: str, found: _Collector) -> None:
    for pair in _SLASHED_MODELS.finditer(text):
        for group in ("a", "b"):
            start, end = pair.span(group)
            found.add("identifier", "identifier:" + identifier_key(text[start:end]), (start, end))
    for word in _DIGIT_WORD.finditer(text):
        start = word.start()
        if _PLAIN_TOKEN.fullmatch(word.group()) and not _capital_before(text, start):
            continue  # "1.689,", "(2024)", "99,7": a number, no identifier
        for compound in _COMPOUND.finditer(text, word.start(), word.end()):
            if _HAS_DIGIT.search(text, compound.start(), compound.end()) is None:
                continue
            start = compound.start()
            if _PLAIN_NUMBER.fullmatch(text, start, compound.end()) and not _capital_before(
                text, start
            ):
                continue  # "1.689", "2024": a number (unless a capital word precedes it)
            if not found.free(compound.span()):
                continue
            span = _identifier_of(text, *compound.span(), found)
            if span is not None:
                found.add(
                    "identifier", "identifier:" + identifier_key(text[span[0] : span[1]]), span
                )


def _whole_identifier(text: str) -> Value | None:
    """The whole of ``text`` as one identifier (a gold value, spaced or not)."""
    stripped = text.strip()
    start = text.find(stripped) if stripped else 0
    if not re.fullmatch(r"[^\W_]+(?:(?: ?[-/.\u2010\u2011] ?|[ \u00a0\u202f])[^\W_]+)*", stripped):
        return None
    groups = _KEY_GROUP.findall(unicodedata.normalize("NFKC", stripped))
    has_digit = any(group[0].isdigit() for group in groups)
    span = (start, start + len(stripped))
    if len(groups) == 1 and stripped.isdigit() and stripped.isascii():
        # a number that names rather than counts ("Revision 2"); claims find it as a number
        return Value("identifier", "identifier:" + str(int(stripped)), span, stripped)
    if not has_digit or len(groups) < 2:
        return None
    return Value("identifier", "identifier:" + identifier_key(stripped), span, stripped)


_IDENTIFIER_SEP = r"(?: ?[-/.] ?| )"


@lru_cache(maxsize=1024)
def _identifier_regex(key: str) -> re.Pattern[str] | None:
    body = key.removeprefix("identifier:")
    groups = _KEY_GROUP.findall(unicodedata.normalize("NFKC", body))
    if not groups:
        return None
    if re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", body):
        # an IBAN: any spacing
        parts = [re.escape(char.casefold()) for char in body]
        return re.compile(r"(?<![^\W_])" + " ?".join(parts) + r"(?![^\W_])")
    pattern = []
    for index, group in enumerate(groups):
        if index:
            previous = groups[index - 1]
            optional = previous[-1].isdigit() != group[0].isdigit()
            pattern.append(_IDENTIFIER_SEP + ("?" if optional else ""))
        pattern.append(re.escape(normalise(group).text))
    # a version number may carry its "v" ("v3.1" is version 3.1)
    before = r"(?<![^\W_])(?:v(?=\d))?" if groups[0][0].isdigit() else r"(?<![^\W_])"
    return re.compile(before + "".join(pattern) + r"(?![^\W_])")


def _joined_group(text: str, norm: Normalised, start: int, end: int) -> str:
    """The original text of the normalised span [start, end)."""
    original = norm.original_span(start, end)
    return text[original[0] : original[1]]


def identifier_spans(text: str, key: str) -> list[tuple[int, int]]:
    """Where the identifier ``key`` (``identifier:CC-MER-2024-017`` or ``CC-MER-2024-017``)
    is written in ``text``, whatever its separators ("CC MER 2024 017", "CC/MER/2024/017",
    "cc-mer-2024-017"); not where it is part of a longer identifier ("CC-MER-2024-0171",
    "X-CC-MER-2024-017"), but also where an ordinary word is joined to it by a hyphen
    ("ISO-27001-Zertifizierung" for ISO-27001). Spans index the original text."""
    pattern = _identifier_regex(key)
    if pattern is None:
        return []
    norm = normalise(text)
    haystack = norm.text
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(haystack):
        start, end = match.span()
        after = re.match(r"[-/.]([^\W_]+)", haystack[end:])
        if after is not None:
            word = _joined_group(text, norm, end + 1, end + 1 + len(after.group(1)))
            if not _ordinary_word(word):
                continue
        before = re.search(r"([^\W_]+)[-/.]$", haystack[max(0, start - 40) : start])
        if before is not None:
            word = _joined_group(text, norm, start - 1 - len(before.group(1)), start - 1)
            if not _ordinary_word(word):
                continue
        spans.append(norm.original_span(start, end))
    return spans


def _typed(text: str, found: _Collector) -> list[TypedIdentifier]:
    """E-mail addresses, URLs and IBANs; the part numbers are returned, to be added after the
    phone numbers (a phone number written "0711-123-450" is no part number)."""
    parts = []
    for item in typed_identifiers(text, support=True, phones=False):
        if item.type == "email":
            found.add("email", "email:" + item.text.casefold(), item.span)
        elif item.type == "url":
            found.add("url", "url:" + url_key(item.text), item.span)
        elif item.type == "iban":
            compact = "".join(_GROUP.findall(unicodedata.normalize("NFKC", item.text))).upper()
            found.add("identifier", "identifier:" + compact, item.span)
        elif item.type == "part":
            parts.append(item)
    return parts


def _parts(parts: list[TypedIdentifier], found: _Collector) -> None:
    for item in parts:
        found.add("identifier", "identifier:" + identifier_key(item.text), item.span)


_EXTENSION = re.compile(r"\.(?:pdf|docx?|xlsx?|pptx?|md|json|csv|txt|html?|odt|ods)(?!\w)", re.I)
_NAME_BEFORE = re.compile(r"[\w][\w.-]*$")


# a number naming a part of a document ("Tabelle 1", "article 2", "section 6.2", "p. 3") points
# into the source the way a citation marker does: it is no value of the answer
_DOCUMENT_PART = re.compile(
    r"(?<![^\W\d_])(?:tabelle|tableau|table|tab\.|abschnitt|section|sect\.|article|artikel"
    r"|art\.|annexe?|anhang|appendix|chapter|chapitre|kapitel|figure|abbildung|abb\.|fig\."
    r"|page|seite|p\.|s\.|§|ziffer|footnote|fu(?:ß|ss)note|ligne|zeile|row|colonne|spalte"
    r"|column|clause)\s?\d+(?:\.\d+)*(?![\d.,]\d|[^\W\d_])",
    re.IGNORECASE,
)


def _block_markers(text: str, found: _Collector) -> None:
    """Filenames ("datenblatt-tvs-75.pdf", as :data:`answer_text.FILENAME` reads them: found
    from their extension, the name looked up before it), citation markers and the numbers
    of document parts (:data:`_DOCUMENT_PART`)."""
    for part in _DOCUMENT_PART.finditer(text):
        found.block(part.span())
    for extension in _EXTENSION.finditer(text):
        start = extension.start()
        name = _NAME_BEFORE.search(text, max(0, start - 120), start)
        if name is not None:
            match = FILENAME.match(text, name.start())
            if match is not None:
                found.block(match.span())
    if "[" in text or any("\ue000" <= char <= "\uf8ff" for char in text if char > "\ud7ff"):
        for match in CITATION_MARKER.finditer(text):
            found.block(match.span())
