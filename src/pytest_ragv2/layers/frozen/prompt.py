"""The fixed, versioned prompt of layer C: the frozen evidence and the question, no tools.

Every answer model receives exactly these two messages; the template's SHA-256 goes into the
run manifest, so two runs compare answer models only when they saw the same words. The
sources are the knowledge-base tool's numbered-source JSON (``{"sources": [{"n": 1,
"file_id", "filename", "page", ..., "text"}]}``), so ``[n]`` citations resolve as at layer B.
Standard library only: the demo's answer model reads its own prompt with :func:`parse_user`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

TEMPLATE_VERSION = "ragv2-frozen-prompt/1"
SYSTEM_PROMPT = (
    "You answer questions about a company's documents. Use only the numbered sources in the "
    "user's message; you have no tools and no other knowledge of these documents. Cite every "
    "fact with the number of its source in square brackets, as [1]. If the sources do not "
    "hold the answer, say that the documents do not contain it. Answer in the language of "
    "the question."
)
SOURCES_HEADER = "Sources:"
QUESTION_HEADER = "Question:"
TEMPLATE_SHA256 = hashlib.sha256(
    f"{TEMPLATE_VERSION}\n{SYSTEM_PROMPT}\n{SOURCES_HEADER}\n{QUESTION_HEADER}".encode()
).hexdigest()


def user_message(sources_json: str, question: str) -> str:
    return f"{SOURCES_HEADER}\n{sources_json}\n\n{QUESTION_HEADER} {question}"


def messages(sources_json: str, question: str) -> list[dict[str, str]]:
    """The two messages every answer model receives for one case and language."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user_message(sources_json, question)},
    ]


def parse_user(content: str) -> tuple[str, list[dict[str, Any]]] | None:
    """(question, sources) of a user message written by :func:`user_message`, else None."""
    if not content.startswith(SOURCES_HEADER + "\n"):
        return None
    body, separator, question = content[len(SOURCES_HEADER) + 1 :].rpartition(
        f"\n\n{QUESTION_HEADER} "
    )
    if not separator:
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    sources = data.get("sources") if isinstance(data, dict) else None
    if not isinstance(sources, list):
        return None
    return question, [source for source in sources if isinstance(source, dict)]
