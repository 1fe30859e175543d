"""The demo's answer model: a deterministic, extractive stand-in for an LLM (layer B).

``answer(messages, tools, variant)`` takes an OpenAI chat request (messages and the tools on
offer) and returns one OpenAI assistant message: either tool calls of
``search_knowledge_base`` or a text answer. It is a pure function (no I/O, no clock, no
randomness) and fast (about a millisecond), so it can sit behind the demo server's
OpenAI-compatible route and inside the reference command without a model on disk. Like
the retrieval engine it is a system under test: it never reads cases/ or gold/, but its
heuristics are honestly shaped by knowing the genres of the bundled corpora (contracts,
policies, datasheets with "Key: value" table rows, synthetic project records) and the kinds
of questions people ask of them. It imports only the standard library and the plugin's light
contracts (``systems.kb_tool`` for the tool and its sources, ``frozen_prompt`` for layer C's
prompt), so the reference command starts fast.

This module decides what a turn does and writes the two variants' answers; its language and
vocabulary are ``answer_language.py``, names and the parts of a question ``answer_names.py``,
extractive units and their scoring ``answer_units.py``.

What it does with the latest user message (the "prompt"):

1. **Tool results present** (``tool`` messages after the prompt): an extractive answer from
   the sources (below). The model never searches twice in one turn.
2. **Small talk** — greetings, thanks, "how are you" — (``_SMALL_TALK``) with at most one
   content word left once those phrases are removed: a short fixed reply in the prompt's
   language, no tool.
3. **Memory** — the prompt refers to the conversation itself ("dont nous avons parlé",
   "tout à l'heure", "we discussed", "vorhin", ``_MEMORY``) and an earlier assistant answer
   exists: recall from the conversation, no tool. The earlier turn is the one whose prompt
   and answer share most terms with this prompt (ties: the later turn); its answer lines are
   re-used verbatim with their citation markers removed (they named that turn's sources).
4. **A question and the search tool is offered**: tool calls. The search tool is the
   plugin's ``search_knowledge_base`` or LibreChat's ``file_search`` (the demo as the model
   of a LibreChat agent); the latter's text results (``File:`` / ``Anchor:`` /
   ``Relevance:`` / ``Content:`` blocks) are read as sources too, and an answer from them
   cites each source by the anchor the result gave it (``\\ue202turn0file<i>``) instead of
   ``[n]``.
   - V1 sends one call with the raw prompt.
   - V2 splits a two-subject question at ", and / et / und" followed by a question word
     ("..., and how many remote days...") into one call per part, unless the later part
     points back with a pronoun or demonstrative ("ce trimestre", "ne le respectons pas",
     "dazu"), then it sends the whole prompt. An implicit follow-up — a prompt with a
     demonstrative naming a noun it has not mentioned itself ("ce contrat", "this
     contract"), or starting "Et / And / Und", and with no name or identifier of its own —
     gets the names and identifiers of the previous user prompt appended to its query
     ("... ce contrat ? Meridia Distribution").
5. **A question without the tool**: no sources, so the refusal sentence (both variants:
   there is nothing to quote).

Language: an explicit request ("en français", "in English", "auf Deutsch") wins; otherwise
the language whose function words (``_LANGUAGE_WORDS``) occur most in the prompt; English
on a tie.

Extractive answers. Each source is cut into units: a line with " | " is a table row or
record whose "Key: value" segments are its cells (the caption, ``unité`` and ``note``
segments are not cells); any other line is split into sentences. A source's first line is
its heading (title, section path) when it has more lines and no final punctuation: it is
context for matching names, never quoted. The prompt's *terms* are its content words (folded
— case, accents — with French, German and English stop words and the vocabulary of asking
removed); its *names* are identifiers (letters with digits "TW-P-24-001", "X2", an acronym
with a number "TVS 75", all-capital acronyms "RPO") and, outside German (which capitalises
every noun), capitalised words inside a sentence ("Meridia Distribution", "Japon"); quarter
names in the three languages become q1..q4 ("quatrième trimestre" = "T4"). A term matches a
unit word when equal, when both share their first five letters (four for a four-letter
term), or through a small French/German/English vocabulary of business and engineering
words (``_LEXICON``, the model's "multilingual knowledge"). A unit's score is the number of
terms it matches, +2 per name, +3 for the asked quarter, +1 per number of the prompt it
contains.

- **V1** (baseline) answers from its top-ranked source (the lowest [n]) whatever it says:
  its one or two best-scoring units, quoted verbatim with the citation. No refusal (unless
  there is no source at all), no table, no sentence limit, no synthetic-data label.
- **V2** answers per part of the question. Its evidence must cover the part: every name of
  the part occurs in some source (heading, filename and section included) — in German,
  where names cannot be told by their capital, every capitalised noun inside the sentence
  must match some source word instead ("Japan", "Schalldruckpegel") — and the unit
  must come from a source holding one of the part's identifiers when it has any; the best
  unit must match at least a third of the part's terms (``COVERAGE``). A part that is not
  covered gets the refusal sentence ("Cette information ne figure pas dans les documents.",
  "Diese Information ist in den Dokumenten nicht enthalten.", "This information is not in
  the documents."). Kept units: the best and those scoring at least 3/4 of it (up to 4; 12
  table rows when a table is asked), skipping a row labelled with another quarter or year
  than the one asked. For a row with more than three cells only the label and the cells
  matching the prompt are quoted (a cell whose key names another year than the one asked is
  left out); a numeric cell "CA (k€): 1 689" is written "CA: 1 689 k€" so the unit follows
  the number. Rows from a source whose own metadata says it is synthetic (a ``synthetic:
  true`` field, or "synthetic" / "synthetisch" / "synthétique" in its heading or filename)
  are labelled "(synthetic record)" / "(synthetischer Datensatz)" / "(donnée synthétique)".
  "tableau" / "Tabelle" / "table" in the prompt gives a Markdown table of the kept rows
  (their cell keys as columns, plus the source); "en une phrase" / "in one sentence" /
  "in einem Satz" gives one sentence (units joined by "; ").
  Engineering checks (V2): when the prompt names a medium and a product identifier, the
  medium is checked against the evidence (a negated mention, or a media listing that lacks
  it, answers "<product> is not approved for <medium>" with that evidence, and no variant is
  quoted); a table row whose medium or pressure cell contradicts the medium or the pressure in
  bar the prompt asks for is never quoted as a match; a unit asked for explicitly ("in
  dB(A)") must appear in the kept units, or the part is refused.

Never invented: every number and identifier in an answer is copied from a source, the prompt
or an earlier message; the connective text and labels hold no digit. Citation markers are
``[n]`` with the source's own number. A sum or any other computed figure is therefore out of
reach (the model quotes the rows instead).
"""

from __future__ import annotations

import json
import re
import zlib
from typing import TYPE_CHECKING

from pytest_ragv2.layers.frozen.prompt import parse_user
from pytest_ragv2.systems.kb_tool import SEARCH_TOOL_NAME, parse_sources
from ragv2_demo.answer_language import (
    _CITATION,
    _GREETING,
    _LEAD,
    _MEMORY,
    _MEMORY_LEAD,
    _ONE_SENTENCE,
    _SMALL_TALK_REPLY,
    _TABLE_REQUEST,
    _THANKS,
    _THANKS_REPLY,
    REFUSAL,
    _words,
    detect_language,
    fold,
)
from ragv2_demo.answer_names import (
    _names,
    _Part,
    _part,
    _quarters,
    is_follow_up,
    is_small_talk,
    split_parts,
)
from ragv2_demo.answer_units import (
    KEEP_RATIO,
    _best_units,
    _cite,
    _eligible,
    _markdown_table,
    _media_in,
    _score,
    _Source,
    _source,
    _strip_end,
    _Unit,
    _units,
    _v2_unit_text,
)

# The search tools the model calls: the plugin's, and LibreChat's ``file_search`` (an agent
# with file search behind LibreChat's custom OpenAI-compatible endpoint).
SEARCH_TOOL_NAMES = (SEARCH_TOOL_NAME, "file_search")

if TYPE_CHECKING:  # typing costs ~10 ms of the reference command's start
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ragv2_demo.answer_language import Language, Variant


# --------------------------------------------------------------------------------------------
# Composing answers
# --------------------------------------------------------------------------------------------


def _all_sources(messages: Sequence[Mapping[str, Any]]) -> tuple[list[_Source], dict[int, str]]:
    """The sources of the turn's tool results, and the citation anchor of each source that
    came from LibreChat's ``file_search`` (by its number here)."""
    sources: dict[int, _Source] = {}
    anchors: dict[int, str] = {}
    for message in messages:
        if message.get("role") != "tool":
            continue
        text = _text_of(message.get("content"))
        raws = parse_sources(text)
        if not raws:  # LibreChat's file_search: numbered after every source so far
            found = _file_search_sources(text, max(sources, default=0))
            raws = [raw for raw, _ in found]
            anchors.update((raw["n"], anchor) for raw, anchor in found if anchor)
        for raw in raws:
            sources.setdefault(raw["n"], _source(raw))
    return [sources[n] for n in sorted(sources)], anchors


def _file_search_sources(text: str, after: int) -> list[tuple[dict[str, Any], str | None]]:
    """LibreChat's ``file_search`` result (``api/app/clients/tools/util/fileSearch.js``):
    blocks ``File: <name>`` / ``Anchor: \\ue202turn0file<i> (<name>)`` (when citations are
    on) / ``Relevance: <r>`` / ``Content: <text>``, joined by ``\n---\n``. Each block becomes
    a source numbered from ``after + 1``, with its anchor as written."""
    found: list[tuple[dict[str, Any], str | None]] = []
    for block in text.split("\n---\n"):
        match = _FILE_SEARCH_BLOCK.match(block)
        if match is None:
            continue
        raw = {
            "n": after + len(found) + 1,
            "filename": match["filename"].strip(),
            "text": match["content"].strip(),
        }
        found.append((raw, match["anchor"]))
    return found


_FILE_SEARCH_BLOCK = re.compile(
    r"File: (?P<filename>[^\n]*)\n(?:Anchor: (?P<anchor>\S+)[^\n]*\n)?"
    r"Relevance: [^\n]*\nContent: (?P<content>.*)",
    re.DOTALL,
)
_NUMBER_MARKER = re.compile(r"\[(\d+)\]")


def _with_anchors(text: str, anchors: Mapping[int, str]) -> str:
    """``text`` with each ``[n]`` of a LibreChat source written as that source's anchor,
    copied verbatim as LibreChat's tool description asks."""
    if not anchors:
        return text
    return _NUMBER_MARKER.sub(lambda m: anchors.get(int(m[1]), m[0]), text)


def _answer_v1(prompt: str, sources: Sequence[_Source], language: Language) -> str:
    if not sources:
        return REFUSAL[language]
    top = sources[0]
    part = _part(prompt)
    units = _units(top)
    if not units:
        return f"{_LEAD[language]} {_strip_end(top.text)} [{top.n}]"
    for unit in units:
        _score(unit, part)
    ranked = sorted(units, key=lambda u: -u.score)
    chosen = [ranked[0]]
    if len(ranked) > 1 and ranked[1].score > 0 and ranked[1].score >= KEEP_RATIO * ranked[0].score:
        chosen.append(ranked[1])
    chosen.sort(key=units.index)
    if len(chosen) == 1:
        return f"{_LEAD[language]} {_cite(chosen[0].text, chosen[0], language, False)}."
    lines = [f"- {_cite(u.text, u, language, False)}" for u in chosen]
    return "\n".join([_LEAD[language], *lines])


_MEDIUM_WORD: dict[str, dict[Language, str]] = {
    "hydrogen": {"en": "hydrogen", "de": "Wasserstoff", "fr": "l'hydrogène"},
    "nitrogen": {"en": "nitrogen", "de": "Stickstoff", "fr": "l'azote"},
    "oxygen": {"en": "oxygen", "de": "Sauerstoff", "fr": "l'oxygène"},
    "natural gas": {"en": "natural gas", "de": "Erdgas", "fr": "le gaz naturel"},
    "biogas": {"en": "biogas", "de": "Biogas", "fr": "le biogaz"},
    "co2": {"en": "CO2", "de": "CO2", "fr": "le CO2"},
    "air": {"en": "air", "de": "Luft", "fr": "l'air"},
}
_ANSWERS_NO = re.compile(r"\s*(?:no|nein|non)\b")
_NEGATION = re.compile(r"\b(?:not|no|nein|nicht|kein\w*|pas|aucun\w*|never|nie)\b")
_MEDIA_LABEL = re.compile(r"\b(?:media|medium|medien|fordermedi\w*|fluides?|gases?)\b")
_NOT_APPROVED: dict[Language, str] = {
    "en": "{name} is not approved for {medium}: {medium} is not among the media the "
    "documents list for it.",
    "de": "{name} ist nicht für {medium} zugelassen: die Dokumente nennen {medium} nicht "
    "unter seinen Medien.",
    "fr": "{name} n'est pas homologué pour {medium} : les documents ne le mentionnent pas "
    "parmi ses fluides.",
}
# A unit asked for explicitly ("in dB(A)", "en k€"): the answer must show a value in it.
_ASKED_UNIT = re.compile(
    r"\b(?:in|en)\s+(db\s*\(a\)|dba|db|kw|kwh|bar|m3/min|m³/min|°c|k€|€)(?=\W|$)"
)


def _media_listing(source: _Source) -> tuple[_Unit, str, set[str]] | None:
    """The first unit of ``source`` that lists media ("Media: Air, nitrogen"), the listing
    as quoted (only the media cell of a table row), and the media it names."""
    for unit in _units(source):
        for key, value in unit.cells or [("", unit.text)]:
            folded_key = fold(key) if key else fold(unit.text.split(":", 1)[0])
            if not _MEDIA_LABEL.search(folded_key):
                continue
            listed = _media_in(fold(value))
            if listed:
                quoted = f"{key}: {value}" if key else unit.text
                return unit, quoted, listed
    return None


def _incompatible_medium(
    prompt: str, part: _Part, sources: Sequence[_Source], language: Language
) -> str | None:
    """V2 checks a named medium against the media its evidence lists for the named product:
    an unlisted medium is answered as not approved, quoting the listing, and no variant is
    recommended (an incompatible medium is never presented as compatible)."""
    asked = _media_in(fold(prompt))
    if not asked or not part.names.identifiers:
        return None
    names = part.names.phrases(prompt)
    name = names[0] if names else "It"
    for source in sources:  # an explicit exclusion: "... nicht für Wasserstoff zugelassen"
        if not _eligible(source, part) or source.synthetic:
            continue
        heading = _media_in(source.context_words)  # an FAQ's question names the medium
        for unit in _units(source):
            folded = fold(unit.text)
            # the heading counts only for an answer that starts by saying no ("Nein. ...")
            named = _media_in(folded) | (heading if _ANSWERS_NO.match(folded) else set())
            excluded = sorted(asked & named)
            if excluded and _NEGATION.search(folded):
                medium = _MEDIUM_WORD[excluded[0]][language]
                statement = _NOT_APPROVED[language].format(name=name, medium=medium)
                return f"{statement} {_cite(unit.text, unit, language, True)}"
    # documents before synthetic records: a project's medium is not the product's approval
    for source in sorted(sources, key=lambda s: s.synthetic):
        if not _eligible(source, part):
            continue
        listing = _media_listing(source)
        if listing is None:
            continue
        unit, quoted, listed = listing
        missing = sorted(asked - listed)
        if not missing:
            return None
        medium = _MEDIUM_WORD[missing[0]][language]
        statement = _NOT_APPROVED[language].format(name=name, medium=medium)
        return f"{statement} {_cite(quoted, unit, language, True)}."
    return None


def _unit_asked_but_absent(prompt: str, units: Sequence[_Unit]) -> bool:
    asked = {m.group(1).replace(" ", "") for m in _ASKED_UNIT.finditer(fold(prompt))}
    if not asked:
        return False
    shown = fold(" ".join(unit.text for unit in units)).replace(" ", "")
    return not all(unit in shown for unit in asked)


def _answer_v2(prompt: str, sources: Sequence[_Source], language: Language) -> str:
    if not sources:
        return REFUSAL[language]
    incompatible = _incompatible_medium(prompt, _part(prompt), sources, language)
    if incompatible is not None:
        return incompatible
    folded = fold(prompt)
    table = bool(_TABLE_REQUEST.search(folded))
    one_sentence = bool(_ONE_SENTENCE.search(folded))
    parts = [_part(p) for p in split_parts(prompt)]
    pieces: list[tuple[_Part, list[_Unit] | None]] = [
        (part, _best_units(part, sources, table)) for part in parts
    ]
    answered = [
        (part, units)
        for part, units in pieces
        if units and not _unit_asked_but_absent(part.text, units)
    ]
    if not answered:
        return REFUSAL[language]
    missing = len(answered) < len(pieces)
    if table:
        units = [u for _, group in answered for u in group]
        text = f"{_LEAD[language]}\n\n{_markdown_table(units, language, True)}"
        return text + (f"\n\n{REFUSAL[language]}" if missing else "")
    quoted = [
        _cite(_v2_unit_text(unit, part), unit, language, True)
        for part, group in answered
        for unit in group
    ]
    if one_sentence:
        return f"{_LEAD[language]} " + "; ".join(_flat(q) for q in quoted) + "."
    if len(quoted) == 1:
        text = f"{_LEAD[language]} {quoted[0]}."
    else:
        text = "\n".join([_LEAD[language], *(f"- {q}" for q in quoted)])
    return text + (f"\n{REFUSAL[language]}" if missing else "")


def _flat(text: str) -> str:
    """One clause of a single sentence: inner sentence ends become commas."""
    return re.sub(r"(?<=[^\W\d_])[.!?]\s+", ", ", text)


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


def _turns(messages: Sequence[Mapping[str, Any]], upto: int) -> list[tuple[str, str]]:
    """(user prompt, final assistant text) of each earlier turn."""
    turns: list[tuple[str, str]] = []
    prompt: str | None = None
    reply = ""
    for message in messages[:upto]:
        role = message.get("role")
        if role == "user":
            if prompt is not None and reply:
                turns.append((prompt, reply))
            prompt, reply = _text_of(message.get("content")), ""
        elif role == "assistant":
            content = _text_of(message.get("content"))
            if content.strip():
                reply = content
    if prompt is not None and reply:
        turns.append((prompt, reply))
    return turns


def _recall(prompt: str, turns: Sequence[tuple[str, str]], variant: Variant) -> str:
    language = detect_language(prompt)
    part = _part(prompt)
    best_index, best_score = len(turns) - 1, -1.0
    for index, (earlier_prompt, reply) in enumerate(turns):
        unit = _Unit(
            _Source(0, "", " ", False),
            earlier_prompt,
            words=frozenset(_words(f"{earlier_prompt} {reply}")),
        )
        _score(unit, part)
        if part.quarters and part.quarters & _quarters(fold(earlier_prompt)):
            unit.score += 3
        if unit.score >= best_score:
            best_index, best_score = index, unit.score
    reply = turns[best_index][1]
    lines: list[str] = []
    for line in reply.split("\n"):
        line = _CITATION.sub("", line).strip()
        for lead in (*_LEAD.values(), *_MEMORY_LEAD.values()):
            if line.startswith(lead):
                line = line[len(lead) :].strip()
        line = line.lstrip("-• ").strip()
        if line and not line.startswith("|") and line not in REFUSAL.values():
            lines.append(_strip_end(line))
    if not lines:
        return REFUSAL[language]
    if variant == "v2" and _ONE_SENTENCE.search(fold(prompt)):
        return f"{_MEMORY_LEAD[language]} " + "; ".join(_flat(line) for line in lines) + "."
    return "\n".join([_MEMORY_LEAD[language], *(f"- {line}" for line in lines)])


# --------------------------------------------------------------------------------------------
# Tool calls
# --------------------------------------------------------------------------------------------


def search_queries(prompt: str, earlier_prompts: Sequence[str], variant: Variant) -> list[str]:
    """The search queries the model sends for ``prompt`` (see the module doc)."""
    if variant == "v1":
        return [prompt]
    parts = split_parts(prompt)
    if len(parts) == 1 and earlier_prompts and is_follow_up(prompt):
        previous = earlier_prompts[-1]
        subject = _names(previous).phrases(previous) if _names(previous).all else []
        if subject:
            return [f"{prompt.strip()} {' '.join(subject)}"]
    return parts


def _tool_call(query: str, turn: int, index: int, name: str) -> dict[str, Any]:
    digest = zlib.crc32(f"{turn}:{index}:{query}".encode())
    return {
        "id": f"call_{turn}_{index}_{digest:08x}",
        "type": "function",
        "function": {
            "name": name,
            "arguments": json.dumps({"query": query}, ensure_ascii=False),
        },
    }


def _offered_search(tools: Sequence[Mapping[str, Any]]) -> str | None:
    """The name of the search tool on offer: the plugin's, or LibreChat's ``file_search``."""
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") in SEARCH_TOOL_NAMES:
            return str(function["name"])
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def answer(
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    variant: Variant,
) -> dict[str, Any]:
    """One assistant message (OpenAI shape) for the conversation so far."""
    user_indices = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not user_indices:
        return {"role": "assistant", "content": _SMALL_TALK_REPLY["en"]}
    last = user_indices[-1]
    prompt = _text_of(messages[last].get("content"))
    frozen = parse_user(prompt)
    if frozen is not None:  # layer C: the evidence is in the prompt, no tool is offered
        question, raw_sources = frozen
        sources = [_source(raw) for raw in parse_sources(json.dumps({"sources": raw_sources}))]
        language = detect_language(question)
        if variant == "v1":
            return {"role": "assistant", "content": _answer_v1(question, sources, language)}
        return {"role": "assistant", "content": _answer_v2(question, sources, language)}
    language = detect_language(prompt)
    after = messages[last + 1 :]
    if any(m.get("role") == "tool" for m in after):
        sources, anchors = _all_sources(after)
        if variant == "v1":
            text = _answer_v1(prompt, sources, language)
        else:
            text = _answer_v2(prompt, sources, language)
        return {"role": "assistant", "content": _with_anchors(text, anchors)}
    if is_small_talk(prompt):
        thanks_only = _THANKS.search(fold(prompt)) and not _GREETING.search(fold(prompt))
        replies = _THANKS_REPLY if thanks_only else _SMALL_TALK_REPLY
        return {"role": "assistant", "content": replies[language]}
    turns = _turns(messages, last)
    if turns and _MEMORY.search(fold(prompt)):
        return {"role": "assistant", "content": _recall(prompt, turns, variant)}
    tool_name = _offered_search(tools)
    if tool_name is not None:
        earlier = [_text_of(messages[i].get("content")) for i in user_indices[:-1]]
        queries = search_queries(prompt, earlier, variant)
        calls = [_tool_call(q, len(user_indices), i, tool_name) for i, q in enumerate(queries)]
        return {"role": "assistant", "content": None, "tool_calls": calls}
    return {"role": "assistant", "content": REFUSAL[language]}
