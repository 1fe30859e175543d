"""Which language is an answer written in? (``py3langid``, every language it knows.)

The identifier (py3langid, a maintained fork of langid.py: naive Bayes over byte n-grams,
numpy only) is loaded on the first call in a process and kept: about 0.4 s and 94 MB from
the library's compressed model, a few hundredths of a second from the decompressed copy the
first session leaves in the user's cache (``scoring/language_cache.py``).
It ranks every language it knows (142 labels), with probabilities normalised over them.

- When the most likely language is **outside** the candidates (the configured languages
  plus the expected one) with a probability of at least ``min_confidence``, the answer is
  named as that language ("it" for Italian) — and so fails the language check of a French
  prompt instead of passing as French.
- Otherwise the answer is one of the candidates: the probabilities of the candidates alone,
  renormalised (exactly what an identifier restricted to them returns). A close neighbour
  of a candidate (Luxembourgish beside German, Occitan beside French, Nigerian Pidgin beside
  English) rarely clears the bar on its own, so short and technical answers keep the
  candidate reading they had.

Before identification the text loses what carries no language or another language's
words: quoted passages (« ... », „...“, "..."), code spans, URLs, filenames, citation
markers, every token holding a digit (numbers, part numbers, units glued to numbers) and
markdown punctuation. A text with fewer than ``min_words`` words of two letters or more
left is **undetermined** (None): "Ja.", "90 Tage." or "Le TVM 30-H2." carry too little
evidence for a verdict. Only the first ``RAW_SAMPLE_CHARS`` characters of the answer are
read (the identifier is given the first ``SAMPLE_CHARS`` of what is left after cleaning), so
identification costs the same on a 1 MB answer as on a 10 KB one. A detected language other
than the expected one with a probability under ``min_confidence`` is undetermined as well
(a mixed answer that quotes a German datasheet in English is not judged on a guess).
"""

from __future__ import annotations

import contextlib
import importlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_ragv2.scoring.markers import CITATION_MARKER, FILENAME, URL

# a quoted passage is at most _QUOTE_CHARS long: the scan from an opening mark stops there
_QUOTE_CHARS = 2_000
_QUOTED = re.compile(
    rf"«[^»]{{0,{_QUOTE_CHARS}}}»|„[^“”\"]{{0,{_QUOTE_CHARS}}}[“”\"]|“[^”]{{0,{_QUOTE_CHARS}}}”"
    rf"|\"[^\"\n]{{0,{_QUOTE_CHARS}}}\"|`[^`]{{0,{_QUOTE_CHARS}}}`"
)
SAMPLE_CHARS = 600  # of the cleaned answer, given to the identifier
RAW_SAMPLE_CHARS = 20_000  # of the answer, cleaned (before the cleaning, never after)
_DIGIT = re.compile(r"\d")
_MARKDOWN = re.compile(r"[|*#_>=~+-]+")
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True, slots=True)
class LanguageGuess:
    """The identified language (None: undetermined), its probability and why."""

    language: str | None
    confidence: float
    reason: str


def language_text(text: str) -> str:
    """``text`` without what carries no language (see the module docstring)."""
    for pattern in (_QUOTED, URL, FILENAME, CITATION_MARKER):
        text = pattern.sub(" ", text)
    # every token holding a digit (token by token: a regex scan around each digit of a long
    # token would be quadratic), then markdown punctuation
    text = " ".join(token for token in text.split() if _DIGIT.search(token) is None)
    return " ".join(_MARKDOWN.sub(" ", text).split())


_LOADING = threading.Lock()  # one load per process, whichever thread asks first


@lru_cache(maxsize=1)
def _identifier() -> Any:
    with _LOADING:
        return _load_identifier()


@lru_cache(maxsize=1)
def _load_identifier() -> Any:
    from pytest_ragv2.scoring import language_cache

    langid = importlib.import_module("py3langid.langid")
    cached = language_cache.load_cached(langid)
    if cached is not None:
        return cached
    identifier = langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=True)
    language_cache.store(langid, identifier)  # the next session maps it instead
    return identifier


def preload_identifier() -> threading.Thread:
    """Load the identifier in a background thread (a session about to score answers calls
    this at its start): most of the load is LZMA decompression and numpy, which release
    the GIL, so it runs beside the collection and the first conversations' calls instead
    of before their scoring. A failure is left for the first answer scored to meet."""

    def load() -> None:
        with contextlib.suppress(Exception):
            _identifier()

    thread = threading.Thread(target=load, name="ragv2-language-model", daemon=True)
    thread.start()
    return thread  # join it before the interpreter exits: it may be inside LZMA or numpy


def rank_languages(text: str) -> list[tuple[str, float]]:
    """Every language py3langid knows with its probability for ``text``, best first.

    ``text`` is taken as given (clean it with :func:`language_text` first).
    """
    return [(str(label), float(p)) for label, p in _identifier().rank(text[:SAMPLE_CHARS])]


def identify_language(
    text: str,
    candidates: Sequence[str],
    *,
    expected: str | None = None,
    min_words: int = 3,
    min_confidence: float = 0.8,
) -> LanguageGuess:
    """The language of ``text`` among ``candidates`` (plus ``expected``), or undetermined."""
    cleaned = language_text(text[:RAW_SAMPLE_CHARS])
    words = len(_WORD.findall(cleaned))
    if words < min_words:
        return LanguageGuess(None, 0.0, f"too short to judge ({words} words)")
    languages = tuple(sorted({*candidates, *([expected] if expected else [])}))
    if len(languages) < 2:
        return LanguageGuess(languages[0] if languages else None, 1.0, "single candidate")
    try:
        # the identifier's cost grows with the text; a few sentences settle the language
        ranked = rank_languages(cleaned)
    except ImportError:
        return LanguageGuess(None, 0.0, "not judged: py3langid is not installed")
    top, top_probability = ranked[0]
    if top not in languages and top_probability >= min_confidence:
        return LanguageGuess(
            top, top_probability, f"{top} at {top_probability:.2f} (not a configured language)"
        )
    among = [(label, p) for label, p in ranked if label in languages]
    total = sum(p for _, p in among)
    if not among or total <= 0.0:
        return LanguageGuess(None, 0.0, f"undetermined ({top} at {top_probability:.2f})")
    label, probability = among[0]
    confidence = probability / total
    if expected is not None and label != expected and confidence < min_confidence:
        return LanguageGuess(
            None, confidence, f"undetermined ({label} at {confidence:.2f} < {min_confidence})"
        )
    return LanguageGuess(label, confidence, f"{label} at {confidence:.2f}")


# a part of an answer, for the mixed-language check: a sentence, cut at semicolons and dashes
_PART_CUT = re.compile(r";|\s[-\u2013\u2014]\s")
MIXED_MIN_WORDS = 4


def other_language_part(
    answer: str,
    candidates: Sequence[str],
    expected: str,
    *,
    min_confidence: float = 0.8,
) -> str | None:
    """A configured language other than ``expected`` that a part of ``answer`` (a sentence,
    or a part of one cut at a semicolon or a dash, of four words or more) is written in,
    when another part is in ``expected``: an answer half in the question's language ("That
    is not covered by the documents I have – die Sicherheitsrichtlinie sagt nichts über
    Phishing-Schulungen."). None when every part that can be judged is in one language."""
    from pytest_ragv2.scoring.answer_text import sentence_spans

    found: set[str] = set()
    for start, end in sentence_spans(answer):
        position = start
        for cut in (*_PART_CUT.finditer(answer, start, end), None):
            stop = cut.start() if cut is not None else end
            part = answer[position:stop]
            position = cut.end() if cut is not None else end
            guess = identify_language(
                part,
                candidates,
                expected=expected,
                min_words=MIXED_MIN_WORDS,
                min_confidence=min_confidence,
            )
            if guess.language is not None and guess.language in candidates:
                found.add(guess.language)
    others = sorted(found - {expected})
    return others[0] if others and expected in found else None
