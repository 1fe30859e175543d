"""The original file name of a rag_api ``source`` path (stdlib only: the demo reference
runner, a subprocess per turn, imports it too)."""

from __future__ import annotations

import re
from functools import lru_cache

_UPLOAD_SUFFIX = re.compile(r"^(?P<stem>.+)_[0-9a-f]{32}(?P<suffix>\.[^./\\]*)?$")
# Python's tempfile names: rag_api re-encodes a CSV that is not UTF-8 (chardet says "ascii"
# for a plain ASCII file) into a temporary copy, and that copy's path becomes the source.
_SEPARATORS = re.compile(r"[\\/]")
_TEMP_NAME = re.compile(r"^tmp[a-z0-9_]{8}(?:\.[^./\\]*)?$")


def filename_from_source(source: str, user_id: object = None) -> str | None:
    """The original file name of a rag_api ``source`` path, in every form rag_api has
    written it:

    - ``<upload dir>/<user_id>/<stem>_<32 hex digits><suffix>`` (since 2026-03: a unique name
      per upload under the user's folder) -> ``<stem><suffix>``;
    - ``<upload dir>/<user_id>-<original name>`` (older builds) -> ``<original name>``;
    - a temporary copy (``/tmp/tmpk7p2rk8b.csv``: a CSV rag_api re-encoded) -> None: the
      name is lost, and the file is known by its ``file_id`` only;
    - any other path -> its basename.
    """
    if user_id is None or isinstance(user_id, str):  # a corpus's few paths, met again and again
        return _name_in(source, user_id)
    return _name_in.__wrapped__(source, user_id)


@lru_cache(maxsize=4096)
def _name_in(source: str, user_id: object) -> str | None:
    basename = _SEPARATORS.split(source)[-1]
    if _TEMP_NAME.match(basename):
        return None
    unique = _UPLOAD_SUFFIX.match(basename)
    if unique is not None:
        return unique["stem"] + (unique["suffix"] or "")
    if isinstance(user_id, str) and user_id and basename.startswith(f"{user_id}-"):
        basename = basename[len(user_id) + 1 :]
    return basename or None
