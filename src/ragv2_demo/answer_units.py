"""The answer model's extractive units and their scoring: sources cut into sentences and
table rows, units matched against a part of the question (terms, names, quarters, numbers),
the units kept for a part (``_best_units``), and how a unit is quoted (cells, citation,
Markdown table)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragv2_demo.answer_language import (
    _EXCERPT_HEADER,
    _WORD,
    SYNTHETIC_LABEL,
    _words,
    concept_of,
    fold,
)
from ragv2_demo.answer_names import _YEAR, _contains_name, _Part, _quarters

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ragv2_demo.answer_language import Language

COVERAGE = 1.0 / 3.0
KEEP_RATIO = 0.75
MAX_UNITS = 4
MAX_TABLE_ROWS = 12


# --------------------------------------------------------------------------------------------
# Sources and units
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Source:
    n: int
    text: str
    context_words: str  # " w1 w2 ... " of text + filename + section + table (name matching)
    synthetic: bool


@dataclass(slots=True)
class _Unit:
    source: _Source
    text: str  # verbatim from the source
    cells: list[tuple[str, str]] = field(default_factory=list)  # table row: (key, value)
    caption: str = ""
    words: frozenset[str] = frozenset()
    score: float = 0.0
    matched: frozenset[str] = frozenset()

    @property
    def is_row(self) -> bool:
        return bool(self.cells)


_SYNTHETIC_FIELD = re.compile(r"\bsynthetic\s*:\s*true\b", re.IGNORECASE)
_SYNTHETIC_WORD = re.compile(r"synthet|synthetic", re.IGNORECASE)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-Ö0-9«\"(•-])")
_SKIPPED_CELL_KEYS = frozenset({"note", "unite", "unit", "einheit"})


def _source(raw: Mapping[str, Any]) -> _Source:
    text = str(raw["text"])
    filename = str(raw.get("filename") or "")
    section = str(raw.get("section") or "")
    table = str(raw.get("table") or "")
    context = " ".join(_words(" ".join((text, filename, section, table))))
    heading = text.split("\n", 1)[0]
    synthetic = bool(
        _SYNTHETIC_FIELD.search(text)
        or _SYNTHETIC_WORD.search(heading)
        or _SYNTHETIC_WORD.search(filename)
    )
    return _Source(n=int(raw["n"]), text=text, context_words=f" {context} ", synthetic=synthetic)


def _units(source: _Source) -> list[_Unit]:
    lines = [line.strip() for line in source.text.split("\n")]
    lines = [line for line in lines if line]
    if (
        len(lines) > 1
        and not lines[0].endswith((".", "!", "?", ":", ";"))
        and (" | " not in lines[0])
    ):
        lines = lines[1:]  # the heading: context, never quoted
    units: list[_Unit] = []
    for line in lines:
        if " | " in line:
            units.append(_row_unit(source, line))
            continue
        for sentence in _SENTENCE_SPLIT.split(line):
            sentence = sentence.strip()
            if sentence and _WORD.search(sentence):
                units.append(_Unit(source, sentence, words=frozenset(_words(sentence))))
    return units


def _row_unit(source: _Source, line: str) -> _Unit:
    cells: list[tuple[str, str]] = []
    captions: list[str] = []
    for segment in line.split(" | "):
        key, sep, value = segment.partition(": ")
        if sep and key.strip() and fold(key.strip()) not in _SKIPPED_CELL_KEYS:
            cells.append((key.strip(), value.strip()))
        elif not sep:
            captions.append(segment.strip())
    if not cells:
        return _Unit(source, line, words=frozenset(_words(line)))
    return _Unit(
        source,
        line,
        cells=cells,
        caption=" ".join(captions),
        words=frozenset(_words(line)),
    )


def _word_matches(term: str, words: frozenset[str], concepts: frozenset[str]) -> bool:
    if term in words:
        return True
    if len(term) >= 4:
        for word in words:
            size = min(5, len(term), len(word))
            if size >= 4 and word[:size] == term[:size]:
                return True
    concept = concept_of(term)
    return concept is not None and concept in concepts


def _concepts(words: Iterable[str]) -> frozenset[str]:
    return frozenset(c for c in map(concept_of, words) if c is not None)


def _score(unit: _Unit, part: _Part) -> None:
    concepts = _concepts(unit.words)
    matched = {t for t in part.terms if _word_matches(t, unit.words, concepts)}
    joined = f" {' '.join(_words(unit.text))} "
    names = sum(1 for name in part.names.identifiers if _contains_name(joined, name))
    folded = fold(unit.text)
    quarter = 3 if part.quarters and part.quarters & _quarters(folded) else 0
    numbers = sum(1 for number in part.numbers if number in unit.text)
    unit.matched = frozenset(matched)
    unit.score = len(matched) + 2 * names + quarter + numbers


def _conflicts(unit: _Unit, part: _Part) -> bool:
    """A row labelled with another quarter or year than the one the part asks about."""
    if not unit.is_row:
        return False
    label = fold(unit.cells[0][1])
    quarters = _quarters(label)
    if part.quarters and quarters and not quarters & part.quarters:
        return True
    years = set(_YEAR.findall(label))
    return bool(part.years and years and not years & part.years)


def _covered(part: _Part, sources: Sequence[_Source]) -> bool:
    """Every name of the part occurs in some source, and (German) every noun of the part
    is matched by some source word."""
    if not all(any(_contains_name(s.context_words, n) for s in sources) for n in part.names.all):
        return False
    if part.nouns:
        words = frozenset(w for s in sources for w in s.context_words.split())
        concepts = _concepts(words)
        return all(_word_matches(noun, words, concepts) for noun in part.nouns)
    return True


def _eligible(source: _Source, part: _Part) -> bool:
    """A source holding one of the part's identifiers, when the part names any."""
    ids = part.names.identifiers
    return not ids or any(_contains_name(source.context_words, n) for n in ids)


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------

_KEY_WITH_UNIT = re.compile(r"^(.*?)\s*\(([^()]+)\)\s*[¹²³⁴⁵⁶⁷⁸⁹⁰*]*$")
_NUMERIC_VALUE = re.compile(r"^[+-]?\d[\d  .,]*[¹²³⁴⁵⁶⁷⁸⁹⁰]*$")


def _cell_text(key: str, value: str) -> str:
    """ "CA (k€): 1 689" → "CA: 1 689 k€" (the unit right after the number)."""
    match = _KEY_WITH_UNIT.match(key)
    if match and _NUMERIC_VALUE.match(value) and match.group(1):
        return f"{match.group(1)}: {value} {match.group(2)}"
    return f"{key}: {value}"


def _selected_cells(unit: _Unit, part: _Part) -> list[tuple[str, str]]:
    if len(unit.cells) <= 3:
        return list(unit.cells)
    chosen = [unit.cells[0]]
    for key, value in unit.cells[1:]:
        key_years = set(_YEAR.findall(key))
        if part.years and key_years and not key_years & part.years:
            continue
        words = frozenset(_words(f"{key} {value}"))
        concepts = _concepts(words)
        if any(_word_matches(t, words, concepts) for t in part.terms) or any(
            _contains_name(f" {' '.join(_words(value))} ", n) for n in part.names.all
        ):
            chosen.append((key, value))
    return chosen if len(chosen) > 1 else list(unit.cells)


def _v2_unit_text(unit: _Unit, part: _Part) -> str:
    if not unit.is_row:
        return unit.text
    return " | ".join(_cell_text(k, v) for k, v in _selected_cells(unit, part))


def _strip_end(text: str) -> str:
    return text.rstrip().rstrip(".;").rstrip()


def _cite(text: str, unit: _Unit, language: Language, label: bool) -> str:
    suffix = f" ({SYNTHETIC_LABEL[language]})" if label and unit.source.synthetic else ""
    return f"{_strip_end(text)} [{unit.source.n}]{suffix}"


def _markdown_table(units: Sequence[_Unit], language: Language, label: bool) -> str:
    source_header = "Source" if language != "de" else "Quelle"
    rows = [u for u in units if u.is_row]
    if not rows:
        header = f"| {_EXCERPT_HEADER[language]} | {source_header} |\n| --- | --- |"
        body = [f"| {_escape(_strip_end(u.text))} | [{u.source.n}] |" for u in units]
        return "\n".join([header, *body])
    keys: list[str] = []
    for unit in rows:
        for key, _ in unit.cells:
            if key not in keys:
                keys.append(key)
    lines = [
        "| " + " | ".join([*map(_escape, keys), source_header]) + " |",
        "| " + " | ".join(["---"] * (len(keys) + 1)) + " |",
    ]
    for unit in rows:
        values = dict(unit.cells)
        marker = f"[{unit.source.n}]"
        if label and unit.source.synthetic:
            marker += f" ({SYNTHETIC_LABEL[language]})"
        cells = [_escape(values.get(key, "")) for key in keys]
        lines.append("| " + " | ".join([*cells, marker]) + " |")
    return "\n".join(lines)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


_PROMPT_BAR = re.compile(r"(\d+(?:[.,]\d+)?)\s*bar\b")
_CELL_NUMBER = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*$")


def _requirements(prompt: str) -> tuple[set[str], set[float]]:
    """The media and the pressures in bar a question asks for (V2 keeps them)."""
    folded = fold(prompt)
    pressures = {float(m.group(1).replace(",", ".")) for m in _PROMPT_BAR.finditer(folded)}
    return _media_in(folded), pressures


def _row_contradicts(unit: _Unit, media: set[str], pressures: set[float]) -> bool:
    """A table row (a project record) whose medium or pressure cell differs from what the
    question asks for: V2 does not present it as a match."""
    for key, value in unit.cells:
        folded_key = fold(key)
        if media and "medi" in folded_key:
            listed = _media_in(fold(value))
            if listed and not media & listed:
                return True
        if pressures and ("pressure" in folded_key or "druck" in folded_key):
            number = _CELL_NUMBER.match(value)
            if number and float(number.group(1).replace(",", ".")) not in pressures:
                return True
    return False


def _best_units(part: _Part, sources: Sequence[_Source], table: bool) -> list[_Unit] | None:
    """The kept units for one part, or None when the evidence does not cover it."""
    if not _covered(part, sources):
        return None
    media, pressures = _requirements(part.text)
    candidates: list[_Unit] = []
    for source in sources:
        if not _eligible(source, part):
            continue
        for unit in _units(source):
            _score(unit, part)
            if unit.score > 0 and not _conflicts(unit, part):
                if unit.is_row and _row_contradicts(unit, media, pressures):
                    continue
                candidates.append(unit)
    if not candidates:
        return None
    # stable: ties keep the source order (the retriever's ranking)
    candidates.sort(key=lambda u: -u.score)
    best = candidates[0]
    if (part.terms and not best.matched) or (not part.terms and not part.names.all):
        return None
    limit = MAX_TABLE_ROWS if table else MAX_UNITS
    kept: list[_Unit] = []
    seen: set[str] = set()
    for unit in candidates:
        if unit.score < KEEP_RATIO * best.score or len(kept) == limit:
            break
        if unit.text in seen:
            continue
        seen.add(unit.text)
        kept.append(unit)
    matched = {term for unit in kept for term in unit.matched}
    if part.terms and len(matched) < COVERAGE * len(part.terms):
        return None
    return kept


# Media a compressor question may name, with the words each language uses for them.
_MEDIA: dict[str, tuple[str, ...]] = {
    "hydrogen": ("hydrogen", "wasserstoff", "hydrogene", "h2"),
    "nitrogen": ("nitrogen", "stickstoff", "azote"),
    "oxygen": ("oxygen", "sauerstoff", "oxygene"),
    "natural gas": ("natural gas", "erdgas", "gaz naturel"),
    "biogas": ("biogas",),
    "co2": ("co2", "carbon dioxide", "kohlendioxid"),
    "air": ("air", "luft", "druckluft"),
}


def _media_in(folded: str) -> set[str]:
    return {
        medium
        for medium, words in _MEDIA.items()
        if any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", folded) for word in words)
    }
