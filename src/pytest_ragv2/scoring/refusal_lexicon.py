"""The per-language lexicon of the refusal constructions (:mod:`pytest_ragv2.scoring.refusal`).

Data only: folded words (accents dropped, casefolded, "ß" as "ss"); an entry ending in ``*``
is a prefix (a stem). Entries of several words ("base de connaissances") are looked up in
the clause's words joined by spaces; the ``*_phrases`` fields are regular expressions over
those joined words. docs/answer-scoring.md lists the words by role and language.

The words are grouped by what they say about whom, not by the refusals they were seen in:

- **text-report** predicates are about a text by their meaning (mentioned, stated, listed,
  "steht", "figure"): negated, they say the sources are silent, whoever the subject;
- **discovery** predicates (found, identified, "festgestellt") say something was looked for:
  negated, they refuse only when the assistant looked (first person singular) or the clause
  puts the search in the sources; "no vulnerability was found during the audit" is an event;
- **knowledge** predicates (know, confirm, say, answer, determine) refuse only in the first
  person, impersonally ("impossible de dire", "lässt sich nicht sagen", "cannot be
  determined") or with a source as subject ("the documents don't say");
- **weak** predicates (contain, give, have, available, appear) refuse only with a source as
  their subject or place, or in the first person with an information word as object;
- **sources** are what the assistant reads: source nouns (documents, excerpts, context,
  knowledge base, datasheet), any **carrier** noun (pieces, texts, material, information)
  marked as **given** to the assistant ("pièces transmises", "the material provided", "die
  übermittelten Unterlagen"), and relatives that name what the assistant was given or
  knows ("what I was given", "ce qui m'a été fourni", "was mir vorliegt").
"""

from __future__ import annotations

from collections.abc import Mapping

from pytest_ragv2.scoring.lexicon import Lexicon
from pytest_ragv2.scoring.refusal_lexicon_de import GERMAN
from pytest_ragv2.scoring.refusal_lexicon_en import ENGLISH
from pytest_ragv2.scoring.refusal_lexicon_fr import FRENCH

__all__ = ["LEXICONS", "Lexicon"]

LEXICONS: Mapping[str, Lexicon] = {"fr": FRENCH, "de": GERMAN, "en": ENGLISH}
