"""The language identifier's model, kept decompressed on disk between sessions.

py3langid ships its model LZMA-compressed: decompressing it costs every session that scores
an answer 0.35 s and 68 MB before its first answer can be judged. The first session stores
the identifier's arrays uncompressed (``.npy``, about 68 MB) in the user's cache; later
sessions map them instead (the 28 MB probability table stays in the page cache, shared by
every process, and only the rows an answer needs are read).

The cache is a copy, never the reference: it is keyed by the installed model file and
py3langid's own module (size and modification time), and a cached identifier is used only
if it ranks a probe sentence exactly as the library's identifier did when it was stored.
Anything else (no cache directory, a full disk, another py3langid layout) falls back to the
library's own loading. ``RAGV2_CACHE_DIR`` names the directory (empty: no cache); by
default ``$XDG_CACHE_HOME/pytest-ragv2`` or ``~/.cache/pytest-ragv2``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from array import array
from pathlib import Path
from types import ModuleType
from typing import Any

CACHE_ENV = "RAGV2_CACHE_DIR"
PROBE = "Der Vertrag verlängert sich um ein Jahr, wenn er nicht gekündigt wird."
PROBE_LABELS = 5  # the probe's first labels and probabilities, compared on load
_FORMAT = 1  # of the cache's own layout


def cache_root() -> Path | None:
    """Where cached models live; None when ``RAGV2_CACHE_DIR`` is set empty."""
    given = os.environ.get(CACHE_ENV)
    if given is not None:
        return Path(given) if given.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-ragv2"


def model_dir(langid: ModuleType) -> Path | None:
    """This installation's cache folder: named after the model file and the library."""
    root = cache_root()
    if root is None:
        return None
    stamp = hashlib.sha256(str(_FORMAT).encode())
    for path in (Path(langid.MODEL_DIR) / langid.MODEL_FILE, Path(str(langid.__file__))):
        found = path.stat()
        stamp.update(f"{path.name}:{found.st_size}:{found.st_mtime_ns};".encode())
    return root / f"langid-{stamp.hexdigest()[:16]}"


def load_cached(langid: ModuleType, norm_probs: bool = True) -> Any | None:
    """The identifier from the cache, or None (no cache, or one that does not check out)."""
    try:
        folder = model_dir(langid)
        if folder is None or not (folder / "meta.json").is_file():
            return None
        import numpy as np

        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        nextmove = array(meta["nextmove_type"])
        nextmove.frombytes(_bytes_of(np.load(folder / "nextmove.npy", mmap_mode="r")))
        row = array(meta["row_type"])
        row.frombytes(_bytes_of(np.load(folder / "row.npy", mmap_mode="r")))
        identifier = langid.LanguageIdentifier(
            np.load(folder / "ptc.npy", mmap_mode="r"),
            np.load(folder / "pc.npy"),
            list(meta["classes"]),
            nextmove,
            np.load(folder / "output.npy").tolist(),
            norm_probs=norm_probs,
            tk_row=row,
        )
        if _probe(identifier) != [tuple(entry) for entry in meta["probe"]]:
            return None
        return identifier
    except Exception:  # a cache that cannot be read is no cache: the library loads it
        return None


def store(langid: ModuleType, identifier: Any) -> Path | None:
    """Write ``identifier``'s arrays to the cache (whole or not at all); best effort."""
    try:
        folder = model_dir(langid)
        if folder is None or (folder / "meta.json").is_file():
            return folder
        import numpy as np

        folder.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            nextmove, row = identifier.tk_nextmove, identifier.tk_row
            np.save(building / "ptc.npy", np.asarray(identifier.nb_ptc))
            np.save(building / "pc.npy", np.asarray(identifier.nb_pc))
            np.save(building / "nextmove.npy", np.frombuffer(nextmove, dtype=nextmove.typecode))
            np.save(building / "row.npy", np.frombuffer(row, dtype=row.typecode))
            np.save(building / "output.npy", np.asarray(identifier.tk_output, dtype=np.int32))
            meta = {
                "classes": list(identifier.nb_classes),
                "nextmove_type": nextmove.typecode,
                "row_type": row.typecode,
                "probe": _probe(identifier),
            }
            (building / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
            os.replace(building, folder)  # another process may have stored it first
        finally:
            shutil.rmtree(building, ignore_errors=True)
        return folder
    except Exception:  # a cache that cannot be written costs the next session 0.35 s
        return None


def _probe(identifier: Any) -> list[tuple[str, float]]:
    return [(str(label), round(float(p), 6)) for label, p in identifier.rank(PROBE)][:PROBE_LABELS]


def _bytes_of(mapped: Any) -> memoryview:
    """A mapped array's bytes, not copied (``array.frombytes`` takes bytes-like only)."""
    return memoryview(mapped).cast("B")
