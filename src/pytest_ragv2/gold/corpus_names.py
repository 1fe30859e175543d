"""The identifiers and filenames of the corpus directory (``[tool.ragv2] corpus``), read once
per process, and only when a scorer first needs them.

An answer that names a reference its passages do not hold — the policy's number from the
preamble, a sibling model of the datasheet it read — names a real thing, not an invented one:
the ``fabricated_identifier`` veto is for identifiers found nowhere in the corpus. The
documents are read with the parsers the embedded demo indexes them with (PDF, DOCX, XLSX,
Markdown, JSON, text), through the plugin's bridge to the demo package. A document that
cannot be read (its parser is not installed, the file is broken) is named in one warning,
and its identifiers stay unknown: an answer naming one of them is judged on its passages
alone, as without a corpus.
"""

from __future__ import annotations

import warnings
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from pytest_ragv2.scoring.grounding import CorpusNames


class CorpusNamesWarning(UserWarning):
    """Some corpus documents could not be read for their identifiers."""


def corpus_names_source(corpus: Path | None) -> Callable[[], CorpusNames] | None:
    """A lazy reader of ``corpus``'s names; None when it is not a directory."""
    if corpus is None or not corpus.is_dir():
        return None
    return partial(read_corpus_names, corpus.resolve())


@lru_cache(maxsize=4)
def read_corpus_names(corpus: Path) -> CorpusNames:
    """The names of every document under ``corpus`` (cached per process)."""
    from pytest_ragv2.run.demo import corpus_documents
    from pytest_ragv2.scoring.grounding import CorpusNames

    try:
        documents, unread = corpus_documents(corpus)
    except OSError as exc:  # the folder went away or cannot be listed: the passages decide
        warnings.warn(
            CorpusNamesWarning(f"the corpus could not be read for its identifiers ({exc})"),
            stacklevel=2,
        )
        return CorpusNames()
    if unread:
        warnings.warn(
            CorpusNamesWarning(
                f"{len(unread)} corpus document(s) could not be read for the identifiers they "
                "hold, so an answer naming one of those is judged on its passages alone: "
                + "; ".join(unread[:5])
                + (" ..." if len(unread) > 5 else "")
            ),
            stacklevel=2,
        )
    return CorpusNames.of(documents)
