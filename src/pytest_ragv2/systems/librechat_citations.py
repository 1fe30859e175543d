"""LibreChat's citation markers in an answer, and which source each anchor cites.

Markers (``client/src/utils/citations.ts``): ``\\ue202turn{T}{type}{i}`` (single),
``\\ue200 ... \\ue201`` (a composite group of singles), ``\\ue203 text \\ue204`` (a
highlighted span, the anchor follows it); every marker character also occurs in its escaped
text form, a literal backslash followed by ``ue202`` etc. (LibreChat v0.8.7's tool result
shows the model that form, so that is what models write). Used by the ``librechat-agents``
adapter (``librechat_agents.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.transcripts import Citation

# Citation resolution (see ``resolve_citations``).
MIN_MATCH = 0.5  # share of the cited sentence's words a source must contain to be chosen
MATCH_MARGIN = 0.2  # by how much it must beat the source the anchor's index names
PAGE_BONUS = 0.25  # added when the cited sentence names the source's page
CONTEXT_CHARS = 400  # at most this much text before a marker is read as its sentence

_ANCHOR = r"(?:\\[uU][eE]202|\ue202)turn(\d+)(search|image|news|video|ref|file)(\d+)"
_ESCAPED_CHAR = r"\\[uU][eE]20([0-46])"
# One token of marker syntax: an anchor, or one marker character (real or escaped).
_TOKEN_RE = re.compile(rf"{_ANCHOR}|{_ESCAPED_CHAR}|([\ue200-\ue204\ue206])")
_ANCHOR_RE = re.compile(_ANCHOR)
_CHARS_RE = re.compile(rf"{_ESCAPED_CHAR}|[\ue200-\ue204\ue206]")
_WORD_RE = re.compile(r"\w+")
_PAGE_RE = re.compile(r"\b(?:pages?|pp?\.|pg\.?|seiten?|s\.)\s*(\d+)", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|\n")

_OPEN, _CLOSE, _SPAN_OPEN, _SPAN_CLOSE = "0", "1", "3", "4"  # the marker's last hex digit


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    kind: str  # "anchor" or the marker character's last hex digit ("0", "1", "3", "4", "6")
    turn: int = 0
    ref_type: str = ""
    index: int = 0


def strip_citation_markers(text: str) -> str:
    """``text`` without LibreChat citation markers (anchors, group and span characters),
    real or escaped; an anchor takes the whitespace before it along (as LibreChat's client
    does), so "fact. \\ue202turn0file0" becomes "fact."."""
    return _CHARS_RE.sub("", re.sub(r"\s*" + _ANCHOR, "", text))


def _tokens(text: str) -> list[_Token]:
    found = []
    for match in _TOKEN_RE.finditer(text):
        if match.group(1) is not None:
            found.append(
                _Token(
                    match.start(),
                    match.end(),
                    "anchor",
                    int(match.group(1)),
                    match.group(2),
                    int(match.group(3)),
                )
            )
        else:
            char = match.group(4) or match.group(5)[-1]
            found.append(_Token(match.start(), match.end(), char))
    return found


def resolve_citations(answer: str, groups: Sequence[Sequence[RetrievedItem]]) -> list[Citation]:
    """One ``Citation`` per ``file`` anchor of ``answer``, in order.

    ``groups`` holds the sources of each ``file_search`` attachment of the turn, in the
    order delivered. ``\\ue202turn{T}file{i}`` names, like LibreChat's client reads it, the
    i-th source of the T-th attachment. That index is the position in the tool's own top-10
    list, and LibreChat filters and re-sorts that list before the attachment (and every
    call's anchors say ``turn0``), so the index can point at the wrong source. Hence the
    anchor's sentence is compared with every source of the turn, deterministically:

    - the sentence is the highlighted span the anchor follows, or else the last sentence of
      the text between the previous citation and the anchor's group of markers (markers
      removed);
    - a source's match is the share of the sentence's words (lower-cased ``\\w+`` with a
      digit or of four letters or more, so "the", "and", "de" do not count) found in its
      content, plus ``PAGE_BONUS`` when the sentence names its page ("page 4",
      "p. 4", "S. 4", "Seite 4");
    - the indexed source is kept unless another one matches at least ``MIN_MATCH`` and beats
      it by ``MATCH_MARGIN`` (ties: the earlier source); with no indexed source the best
      one is taken if it matches at least ``MIN_MATCH``;
    - the anchors of one group (``\ue200 ... \ue201`` or adjacent anchors) cite different
      sources: an anchor is never moved onto a source another anchor of its group names or
      was already given;
    - otherwise the citation is dangling: ``Citation(marker)`` with every field ``None``.
    """
    tokens = _tokens(answer)
    sources = [item for group in groups for item in group]
    anchors = []
    for position, token in enumerate(tokens):
        if token.kind != "anchor" or token.ref_type != "file":
            continue
        indexed: RetrievedItem | None = None
        if token.turn < len(groups) and token.index < len(groups[token.turn]):
            indexed = groups[token.turn][token.index]
        group, cited = _cited_text(answer, tokens, position)
        anchors.append((token, group, cited, indexed))
    citations = []
    chosen_in_group: dict[int, list[RetrievedItem]] = {}
    for token, group, cited, indexed in anchors:
        # The anchors of one group cite different sources: none is moved onto a source
        # another anchor of its group names or was already given.
        excluded = chosen_in_group.setdefault(group, []) + [
            other_indexed
            for other_token, other_group, _, other_indexed in anchors
            if other_group == group and other_token is not token and other_indexed is not None
        ]
        candidates = [item for item in sources if not any(item is taken for taken in excluded)]
        chosen = _choose(cited, indexed, candidates)
        marker = answer[token.start : token.end]
        if chosen is not None:
            chosen_in_group[group].append(chosen)
        citations.append(Citation.of_item(marker, chosen))
    return citations


def _cited_text(answer: str, tokens: Sequence[_Token], position: int) -> tuple[int, str]:
    """The marker group of the anchor at ``tokens[position]`` (the position of the group's
    first token) and the text the group stands behind (see ``resolve_citations``)."""
    # The group: anchors and group characters separated by whitespace only.
    first = position
    while first > 0:
        previous = tokens[first - 1]
        between = answer[previous.end : tokens[first].start]
        if between.strip() or previous.kind not in ("anchor", _OPEN, _CLOSE, _SPAN_CLOSE):
            break
        first -= 1
        if previous.kind == _SPAN_CLOSE:
            opening = next(
                (token for token in reversed(tokens[:first]) if token.kind == _SPAN_OPEN),
                None,
            )
            start = 0 if opening is None else opening.end
            return first, strip_citation_markers(answer[start : previous.start])
    # The text since the previous citation, cut to its last sentence; when nothing but
    # punctuation lies in between, the last sentence before the group.
    previous_end = next(
        (token.end for token in reversed(tokens[:first]) if token.kind in ("anchor", _CLOSE)),
        0,
    )
    group_start = tokens[first].start
    cited = _last_sentence(strip_citation_markers(answer[previous_end:group_start]))
    if not _WORD_RE.search(cited):
        cited = _last_sentence(strip_citation_markers(answer[:group_start]))
    return first, cited


def _last_sentence(text: str) -> str:
    body = text[-CONTEXT_CHARS:].rstrip().rstrip(".!?;:,").rstrip()
    ends = [match.end() for match in _SENTENCE_END_RE.finditer(body)]
    return (body[ends[-1] :] if ends else body).strip()


def _words(text: str) -> set[str]:
    """The words that say something: with a digit, or of four letters or more."""
    return {
        word
        for word in _WORD_RE.findall(text.lower())
        if len(word) >= 4 or any(char.isdigit() for char in word)
    }


def _choose(
    cited: str, indexed: RetrievedItem | None, sources: Sequence[RetrievedItem]
) -> RetrievedItem | None:
    if not sources:
        return indexed
    cited_words = _words(cited)
    named_pages = {int(page) for page in _PAGE_RE.findall(cited)}

    def match(item: RetrievedItem) -> float:
        score = 0.0
        if cited_words:
            score = len(cited_words & _words(item.text)) / len(cited_words)
        if item.page is not None and item.page in named_pages:
            score += PAGE_BONUS
        return score

    scores = [match(item) for item in sources]
    best_position = max(range(len(sources)), key=lambda at: (scores[at], -at))
    best, best_score = sources[best_position], scores[best_position]
    if indexed is None:
        return best if best_score >= MIN_MATCH else None
    if best is indexed or best_score < MIN_MATCH:
        return indexed
    return best if best_score - match(indexed) >= MATCH_MARGIN else indexed
