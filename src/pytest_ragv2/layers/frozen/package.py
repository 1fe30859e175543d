"""Frozen evidence packages (layer C): the same evidence for every answer model.

``ragv2 freeze raw-runs/<layer-A run> --system v2`` takes, for each case and prompt language
of that run, the top-k items the system retrieved (its first repetition) and writes them to a
JSON package. Every item carries the SHA-256 of its canonical JSON, and the package the
SHA-256 of everything it holds, so one changed byte is found and located (case, language,
item) when the package is loaded; a package that does not verify is never used.

Format (``"format": "ragv2-evidence/1"``)::

    {"format", "source_run_id", "system", "k", "created_at",
     "entries": [{"case", "lang", "query", "items": [{"rank", "text", "file_id", "filename",
                  "page", "section", "table", "row", "row_key", "score", "sha256"}]}],
     "checksum": "<sha256 of the canonical JSON of everything but the checksum>"}

Pure but for reading and writing files; the standard library only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_ragv2.systems.outputs import RetrievedItem

FORMAT = "ragv2-evidence/1"
ITEM_FIELDS = ("rank", "text", "file_id", "filename", "page", "section", "table", "row", "row_key")
DEFAULT_K = 5


class PackageError(ValueError):
    """A package that cannot be used; ``str()`` names the file and where it is wrong."""


def _canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def _sha256(value: Any) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()


@dataclass(frozen=True, slots=True)
class FrozenEntry:
    case: str
    lang: str
    query: str
    items: tuple[RetrievedItem, ...]


@dataclass(frozen=True, slots=True)
class EvidencePackage:
    source_run_id: str
    system: str
    k: int
    created_at: str
    entries: tuple[FrozenEntry, ...]
    checksum: str

    def entry(self, case: str, lang: str) -> FrozenEntry | None:
        for entry in self.entries:
            if entry.case == case and entry.lang == lang:
                return entry
        return None


def _item_json(item: RetrievedItem) -> dict[str, Any]:
    data = {name: getattr(item, name) for name in ITEM_FIELDS}
    data["score"] = item.score
    return data


def _body(
    source_run_id: str, system: str, k: int, created_at: str, entries: Sequence[FrozenEntry]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "source_run_id": source_run_id,
        "system": system,
        "k": k,
        "created_at": created_at,
        "entries": [
            {
                "case": entry.case,
                "lang": entry.lang,
                "query": entry.query,
                "items": [
                    {**_item_json(item), "sha256": _sha256(_item_json(item))}
                    for item in entry.items
                ],
            }
            for entry in entries
        ],
    }


def package_json(package: EvidencePackage) -> dict[str, Any]:
    body = _body(
        package.source_run_id, package.system, package.k, package.created_at, package.entries
    )
    return {**body, "checksum": package.checksum}


def freeze(
    raw_runs: Iterable[Mapping[str, Any]],
    *,
    source_run_id: str,
    system: str,
    k: int = DEFAULT_K,
    created_at: str | None = None,
) -> EvidencePackage:
    """The package of ``system``'s layer-A raw runs: per case and language, the top ``k``
    items of its first repetition. A run that failed is frozen with no items (the answer
    models then see no evidence, as the system's users would have)."""
    chosen: dict[tuple[str, str], Mapping[str, Any]] = {}
    for raw in raw_runs:
        key = raw.get("key", {})
        if key.get("system") != system or key.get("layer") != "A" or "items" not in raw:
            continue
        slot = (str(key["case"]), str(key["lang"]))
        if slot not in chosen or int(key["rep"]) < int(chosen[slot]["key"]["rep"]):
            chosen[slot] = raw
    if not chosen:
        raise PackageError(f"no layer-A raw run of system {system} in run {source_run_id}")
    entries = tuple(
        FrozenEntry(
            case=case,
            lang=lang,
            query=str(raw.get("query", "")),
            items=tuple(
                RetrievedItem(**{name: item.get(name) for name in (*ITEM_FIELDS, "score")})
                for item in raw["items"][:k]
            ),
        )
        for (case, lang), raw in sorted(chosen.items())
    )
    stamp = created_at or datetime.now(UTC).isoformat(timespec="seconds")
    checksum = _sha256(_body(source_run_id, system, k, stamp, entries))
    return EvidencePackage(source_run_id, system, k, stamp, entries, checksum)


def _serialised(package: EvidencePackage) -> bytes:
    return (json.dumps(package_json(package), ensure_ascii=False, indent=1) + "\n").encode()


def write_package(package: EvidencePackage, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_serialised(package))


def load_package(path: Path) -> EvidencePackage:
    """Read and verify a package; :class:`PackageError` names what is wrong and where."""
    from pytest_ragv2.config.inputs import InputFileError, check_regular, decode_utf8

    where = str(path)
    try:
        check_regular(path)  # a FIFO or a link to /dev/zero is never opened
        written = path.read_bytes()
        data = json.loads(decode_utf8(written))
    except InputFileError as exc:
        at = f"{where}:{exc.line}" if exc.line is not None else where
        raise PackageError(f"evidence package {at}: {exc.message}") from None
    except OSError as exc:
        raise PackageError(f"evidence package {where}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise PackageError(f"{where}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PackageError(f"evidence package {where}: not a {FORMAT} package")
    try:
        entries = tuple(_entry(raw, where) for raw in data["entries"])
        package = EvidencePackage(
            source_run_id=str(data["source_run_id"]),
            system=str(data["system"]),
            k=int(data["k"]),
            created_at=str(data["created_at"]),
            entries=entries,
            checksum=str(data["checksum"]),
        )
    except (KeyError, TypeError) as exc:
        raise PackageError(f"evidence package {where}: missing or malformed {exc}") from None
    body = _body(
        package.source_run_id, package.system, package.k, package.created_at, package.entries
    )
    if _sha256(body) != package.checksum:
        raise PackageError(
            f"evidence package {where}: its checksum does not match its content (an edit "
            "outside the items: source run, system, k, dates, cases, languages, queries or "
            "the checksum itself); re-freeze it with `ragv2 freeze`"
        )
    if written != _serialised(package):
        raise PackageError(
            f"evidence package {where}: its content verifies, but its bytes are not the ones "
            "`ragv2 freeze` wrote (whitespace or key order edited): a frozen package is used "
            "byte for byte"
        )
    return package


def _entry(raw: Mapping[str, Any], where: str) -> FrozenEntry:
    items = []
    for index, data in enumerate(raw["items"], start=1):
        item = RetrievedItem(**{name: data.get(name) for name in (*ITEM_FIELDS, "score")})
        if _sha256(_item_json(item)) != data.get("sha256"):
            raise PackageError(
                f"evidence package {where}: case {raw['case']} ({raw['lang']}) item {index} "
                f"({item.filename or item.file_id}) does not match its sha256: the evidence "
                "was changed after it was frozen"
            )
        items.append(item)
    return FrozenEntry(str(raw["case"]), str(raw["lang"]), str(raw["query"]), tuple(items))


def freeze_run_dir(run_dir: Path, system: str, k: int = DEFAULT_K) -> EvidencePackage:
    """The package of ``system`` in the layer-A run ``raw-runs/<run-id>``."""
    from pytest_ragv2.run.rawruns import MANIFEST_NAME, read_raw_runs

    manifest_path = run_dir / MANIFEST_NAME
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PackageError(f"{manifest_path}: not a readable run manifest ({exc})") from None
    layer = manifest.get("options", {}).get("layer", "A")
    if layer != "A":
        raise PackageError(f"{run_dir}: a layer-{layer} run; evidence is frozen from a layer-A run")
    systems = manifest.get("systems", {})
    if system not in systems:
        raise PackageError(
            f"{run_dir}: no system {system!r} in this run (systems: {', '.join(systems)})"
        )
    return freeze(read_raw_runs(run_dir), source_run_id=str(manifest["run_id"]), system=system, k=k)


def freeze_command(run_dir: Path, system: str, k: int, output: Path | None, out: Any) -> int:
    """``ragv2 freeze``: 0 with the package written, 2 with the reason it cannot be."""
    import sys

    try:
        package = freeze_run_dir(run_dir, system, k)
    except PackageError as exc:
        print(exc, file=sys.stderr)
        return 2
    path = output or Path("evidence") / f"{package.source_run_id}-{system}.json"
    write_package(package, path)
    print(
        f"froze {len(package.entries)} case/language entries of {system} (top {k}) from run "
        f"{package.source_run_id} into {path}; checksum {package.checksum}",
        file=out,
    )
    return 0
