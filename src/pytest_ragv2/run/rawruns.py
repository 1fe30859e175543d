"""Append-only raw run store and the run manifest.

Every request and response is written and flushed, one JSON line per run, before the run is
scored: a scorer bug never costs a rerun, and ``ragv2 rescore`` can rebuild every figure from
these files alone. Each process writes its own file (``runs-<worker>.jsonl``), so xdist
workers never interleave lines.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import platform
import re
import sys
import zlib
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from pytest_ragv2.report.safe_text import json_dumps
from pytest_ragv2.run.fingerprint import git_output, sha256
from pytest_ragv2.systems.outputs import RetrievedItem

MANIFEST_NAME = "manifest.json"
PACKAGES_RECORDED = ("pytest", "pytest-xdist", "pytest-html", "httpx", "pydantic", "scipy")


def new_run_id(seed: int, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-s{seed}"


# a run id names a folder under raw-runs/ and reports/: no separator, no "..", no control
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class RunIdError(ValueError):
    """A run id that is unsafe as a folder name, or whose folder another run holds."""


def check_run_id(run_id: str) -> str:
    if not RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise RunIdError(
            f"--ragv2-run-id={run_id!r}: a run id is 1 to 128 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit, without '..' (it names a folder under "
            "raw-runs/ and reports/)"
        )
    return run_id


def claim_run_dir(
    raw_runs: Path,
    explicit: str | None,
    seed: int,
    *,
    claim: bool = True,
    now: datetime | None = None,
) -> str:
    """The run id of a new session, its folder under ``raw_runs`` created atomically (a
    directory is created by exactly one process), so two sessions never share a folder —
    not with the same ``--ragv2-run-id``, not with the same seed in the same second. A
    given id whose folder exists is refused; a generated one takes the next free suffix.
    ``claim=False`` (a plan, which writes nothing) only picks the id."""
    if explicit:
        check_run_id(explicit)
        if not claim:
            return explicit
        raw_runs.mkdir(parents=True, exist_ok=True)
        try:
            (raw_runs / explicit).mkdir()
        except FileExistsError:
            raise RunIdError(
                f"--ragv2-run-id={explicit}: {raw_runs / explicit} already exists; choose "
                "another id (runs are never appended to an earlier run)"
            ) from None
        return explicit
    base = new_run_id(seed, now)
    if claim:
        raw_runs.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 10_000):
        run_id = base if attempt == 1 else f"{base}-{attempt}"
        if not claim:
            if not (raw_runs / run_id).exists():
                return run_id
            continue
        try:
            (raw_runs / run_id).mkdir()
        except FileExistsError:
            continue
        return run_id
    raise RunIdError(f"no free run folder for {base} under {raw_runs}")


sha256_file = sha256  # one definition: the gateways' fingerprint computes it on every host


def hash_files(paths: Iterable[Path], relative_to: Path) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for path in sorted(paths):
        try:
            name = str(path.relative_to(relative_to))
        except ValueError:
            name = str(path)
        hashes[name] = sha256_file(path)
    return hashes


def git_commit(directory: Path) -> str | None:
    """The commit checked out in ``directory``'s repository: read from ``.git`` directly
    (a subprocess costs tens of milliseconds of every session's start), else asked of git."""
    for candidate in (directory, *directory.parents):
        git_dir = candidate / ".git"
        if git_dir.is_dir():
            commit = _read_head(git_dir)
            return commit if commit is not None else _ask_git(directory)
        if git_dir.is_file():  # a worktree or submodule: let git resolve it
            return _ask_git(directory)
    return None


def _read_head(git_dir: Path) -> str | None:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        loose = git_dir / ref
        if loose.is_file():
            return loose.read_text(encoding="utf-8").strip() or None
        packed = git_dir / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref:
                    return sha
    except OSError:
        return None
    return None


def _ask_git(directory: Path) -> str | None:
    return git_output(directory, "rev-parse", "HEAD", timeout_s=5.0) or None


def git_dirty(directory: Path) -> bool | None:
    """Whether the checkout holding ``directory`` has changes to tracked files (None when it
    is no git checkout, or git cannot tell): asked of git, so only where it matters (a
    shard, whose merge refuses shards of different code)."""
    status = git_output(directory, "status", "--porcelain", "--untracked-files=no")
    return bool(status) if status is not None else None


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("pytest-ragv2", *PACKAGES_RECORDED):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def write_manifest(run_dir: Path, manifest: Mapping[str, Any]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / MANIFEST_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json_dumps(manifest, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
    return path


STORED_CHUNKS_NAME = "stored-chunks.json.gz"


def write_stored_chunks(
    run_dir: Path, chunks: Mapping[str, Sequence[RetrievedItem] | None]
) -> None:
    """What each system's service listed as stored for the gold files, kept so that a
    rescore computes the same attainable ceilings; a system that could not list them (None)
    is left out, and no file is written when none could."""
    listed = {
        name: [item.to_json() for item in items]
        for name, items in sorted(chunks.items())
        if items is not None
    }
    if not listed:
        return
    path = run_dir / STORED_CHUNKS_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(json_dumps(listed).encode("utf-8"), mtime=0))
    os.replace(tmp, path)


def read_stored_chunks(run_dir: Path) -> dict[str, list[RetrievedItem]]:
    """The listings :func:`write_stored_chunks` kept; none for a run that kept none."""
    path = run_dir / STORED_CHUNKS_NAME
    if not path.is_file():
        return {}
    listed: dict[str, list[dict[str, Any]]] = json.loads(gzip.decompress(path.read_bytes()))
    return {
        name: [RetrievedItem.from_json(item) for item in items] for name, items in listed.items()
    }


def build_manifest(
    *,
    run_id: str,
    seed: int,
    rootdir: Path,
    config_path: Path | None,
    case_files: Iterable[Path],
    gold_files: Iterable[Path],
    allowlist: Path | None,
    systems: Mapping[str, Any],
    options: Mapping[str, Any],
    expected_runs: int | None = None,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "seed": seed,
        "started_at": datetime.now(UTC).isoformat(),
        "git_commit": git_commit(rootdir),
        "argv": sys.argv[1:],
        "versions": package_versions(),
        "platform": platform.platform(),
        # where the run's paths came from, so a rescore elsewhere reads the same configuration
        "rootdir": str(rootdir.resolve()),
        "config_path": str(config_path.resolve()) if config_path else None,
        "config": hash_files([config_path], rootdir) if config_path else {},
        "case_files": hash_files(case_files, rootdir),
        "gold_files": hash_files(gold_files, rootdir),
        "allowlist": hash_files([allowlist], rootdir) if allowlist and allowlist.is_file() else {},
        "systems": dict(systems),
        "options": dict(options),
        "expected_runs": expected_runs,
    }


@dataclass(frozen=True, slots=True)
class RecordedConfig:
    """The configuration a run was made with, as its manifest tells: the file (None when
    the run had none) and the rootdir its defaults are relative to; ``rootdir`` is None
    when the manifest does not tell. ``how`` says how it was found, or why not."""

    rootdir: Path | None
    path: Path | None
    how: str


def recorded_config(manifest: Mapping[str, Any], run_dir: Path) -> RecordedConfig:
    """The configuration file and rootdir of a run, from its manifest.

    A manifest records both (``config_path``, ``rootdir``). One written before they were
    recorded names its configuration only relative to the rootdir, with the file's hash:
    it is looked for from the run directory upwards and taken when the hash matches, else
    taken changed when it lies beside the ``raw-runs`` folder holding the run (the default
    layout). A manifest of a run without a configuration file whose run directory lies in
    a ``raw-runs`` folder gets that folder's parent as its rootdir.
    """
    hashes: dict[str, str] = dict(manifest.get("config") or {})
    recorded_hash = next(iter(hashes.values())) if len(hashes) == 1 else None
    if "config_path" in manifest and manifest.get("rootdir"):
        rootdir = Path(str(manifest["rootdir"]))
        if manifest["config_path"] is None:
            return RecordedConfig(rootdir, None, "the run had no configuration file")
        path = Path(str(manifest["config_path"]))
        if path.is_file():
            changed = recorded_hash is not None and sha256_file(path) != recorded_hash
            note = ", changed since the run" if changed else ""
            return RecordedConfig(rootdir, path, f"recorded in the run's manifest{note}")
        missing = f"{path}, recorded in the run's manifest, no longer exists"
    else:
        missing = "the run's manifest does not record its configuration's path (an older run)"
    if len(hashes) == 1:
        name, digest = next(iter(hashes.items()))
        for folder in run_dir.resolve().parents:
            candidate = folder / name
            if candidate.is_file() and sha256_file(candidate) == digest:
                how = f"{missing}; found by the hash the manifest recorded"
                return RecordedConfig(folder, candidate, how)
        beside = _beside_raw_runs(run_dir, name)
        if beside is not None:
            how = f"{missing}; {name} beside raw-runs/ has changed since the run"
            return RecordedConfig(beside.parent, beside, how)
        return RecordedConfig(None, None, f"{missing}, and no {name} with its hash lies above")
    if not hashes and run_dir.resolve().parent.name == "raw-runs":
        rootdir = run_dir.resolve().parent.parent
        how = f"{missing}; the run had no configuration file, rootdir taken from raw-runs/"
        return RecordedConfig(rootdir, None, how)
    return RecordedConfig(None, None, missing)


def _beside_raw_runs(run_dir: Path, name: str) -> Path | None:
    """``name`` in the folder holding ``raw-runs/`` when the run lies there (the default)."""
    parent = run_dir.resolve().parent
    candidate = parent.parent / name
    return candidate if parent.name == "raw-runs" and candidate.is_file() else None


class RawRunWriteError(OSError):
    """The raw runs could not be written (a full disk, a file-size limit, a lost mount):
    the session stops, and every line written before stays whole and rescorable."""


class RawRunWriter:
    """One process's append-only JSON-lines file. Each line goes to the file in one write
    or not at all: a write that fails part way (ENOSPC, EFBIG) is cut back to the last
    whole line, and the writer refuses every later line."""

    def __init__(
        self, run_dir: Path, worker: str, generation: int = 0, *, compress: bool = False
    ) -> None:
        self.path = run_dir / raw_run_file_name(worker, generation, compress=compress)
        self._compress = compress
        self._run_dir = run_dir
        self._fd: int | None = None
        self._failed: str | None = None

    def append(self, record: Mapping[str, Any]) -> None:
        self.append_line((json_dumps(record, ensure_ascii=False, default=str) + "\n").encode())

    def append_line(self, line: bytes) -> None:
        """One encoded line (a JSON document and its newline), compressed here if the
        file's lines are."""
        if self._failed is not None:
            raise RawRunWriteError(self._failed)
        try:
            if self._fd is None:
                self._run_dir.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._write_whole(self._fd, gzip_member(line) if self._compress else line)
        except OSError as exc:
            self._failed = f"raw runs could not be written: {self.path}: {exc.strerror or exc}"
            error = RawRunWriteError(self._failed)
            error.errno = exc.errno
            raise error from exc

    def _write_whole(self, fd: int, line: bytes) -> None:
        start = os.lseek(fd, 0, os.SEEK_END)
        written = 0
        try:
            while written < len(line):
                written += os.write(fd, line[written:])
        except OSError:
            if written:
                with contextlib.suppress(OSError):  # cut the torn line back off
                    os.ftruncate(fd, start)
            raise

    @property
    def failure(self) -> str | None:
        """Why the raw runs could not be written, once they could not."""
        return self._failed

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


class ShippingWriter(RawRunWriter):
    """The writer of a worker on another host: it keeps each line, exactly as the local
    writer would encode it, until the item's report carries it to the controller, which
    appends it to this worker's file on its own disk. Nothing is written here."""

    def __init__(
        self, run_dir: Path, worker: str, generation: int = 0, *, compress: bool = False
    ) -> None:
        super().__init__(run_dir, worker, generation, compress=compress)
        self._pending: list[str] = []

    def append_line(self, line: bytes) -> None:
        self._pending.append(line.decode("utf-8"))

    def take(self) -> list[str]:
        """The lines kept since the last call (uncompressed: the controller compresses)."""
        taken, self._pending = self._pending, []
        return taken


def raw_run_file_name(worker: str, generation: int = 0, *, compress: bool = False) -> str:
    """A process's raw-run file: ``runs-<worker>.jsonl`` in the session that started the
    run, ``runs-<worker>.r<N>.jsonl`` in its N-th resumption (``--ragv2-resume``); with
    ``.gz`` when its lines are compressed (a chat layer's)."""
    name = f"runs-{worker}.jsonl" if generation == 0 else f"runs-{worker}.r{generation}.jsonl"
    return name + ".gz" if compress else name


def gzip_member(line: bytes) -> bytes:
    """One line as a gzip member of its own: a file of such members is a gzip file any
    tool reads (``zcat``), and each line still reaches the disk whole or not at all."""
    return gzip.compress(line, compresslevel=6, mtime=0)


_GENERATION = re.compile(r"\.r(\d+)\.jsonl(?:\.gz)?$")


def generation_of(path: Path) -> int:
    found = _GENERATION.search(path.name)
    return int(found.group(1)) if found else 0


def raw_run_files(run_dir: Path) -> list[Path]:
    """The raw-run files of a run directory, the first session's first, then each
    resumption's in turn."""
    found = [*run_dir.glob("runs-*.jsonl"), *run_dir.glob("runs-*.jsonl.gz")]
    return sorted(found, key=lambda path: (generation_of(path), path.name))


# a raw line as this package writes it starts with its key, the case first: read there, a
# case id not asked for skips the line unparsed (a line written otherwise is parsed)
_LINE_CASE = re.compile(r'\{"key": \{"case": "([^"\\]*)"')


def _lines(path: Path, cases: Container[str] | None = None) -> Iterator[dict[str, Any]]:
    if path.name.endswith(".gz"):
        yield from _gzip_lines(path, cases)
        return
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            if not line.endswith("\n"):
                break  # a torn last line (a killed process)
            if _wanted(line, cases):
                yield json.loads(line)


def _wanted(line: str, cases: Container[str] | None) -> bool:
    if cases is None:
        return True
    found = _LINE_CASE.match(line)
    return found is None or found.group(1) in cases


def _gzip_lines(path: Path, cases: Container[str] | None = None) -> Iterator[dict[str, Any]]:
    """The lines of a file of gzip members, read as a stream; a member is taken once it is
    whole and its checksum holds, so a member torn by a killed process is skipped."""
    member = zlib.decompressobj(wbits=31)
    pieces: list[bytes] = []
    with path.open("rb") as stream:
        pending = stream.read(1 << 20)
        while pending:
            try:
                pieces.append(member.decompress(pending))
            except zlib.error:
                return  # a member cut short and followed by nothing readable
            if member.eof:
                for line in b"".join(pieces).decode("utf-8").splitlines(keepends=True):
                    if line.endswith("\n") and _wanted(line, cases):
                        yield json.loads(line)
                pieces = []
                pending = member.unused_data
                member = zlib.decompressobj(wbits=31)
                if not pending:
                    pending = stream.read(1 << 20)
            else:
                pending = stream.read(1 << 20)


def line_identity(raw: Mapping[str, Any]) -> str:
    """What a later line of the same identity replaces: a run's key, or its judge's grade
    (a line with ``judge`` and no run of its own)."""
    kind = "judge" if "judge" in raw and "transcript" not in raw else "run"
    return kind + json.dumps(raw.get("key"), sort_keys=True)


def read_raw_runs(run_dir: Path, cases: Container[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every raw run of a run directory; a torn last line (a killed process) is skipped.

    A run made again by a resumption (``--ragv2-retry-errors``) replaces the earlier line of
    the same key: each key is read once, as the latest session made it. ``cases``: only
    the runs of these cases are wanted (the others may be skipped without being parsed)."""
    files = raw_run_files(run_dir)
    newest = max((generation_of(path) for path in files), default=0)
    # the keys each resumption wrote, to skip their earlier lines (resumptions are small)
    written_after: dict[int, set[str]] = {}
    later: set[str] = set()
    for generation in range(newest, 0, -1):
        for path in files:
            if generation_of(path) == generation:
                later.update(line_identity(raw) for raw in _lines(path))
        written_after[generation - 1] = set(later)
    for path in files:
        superseded = written_after.get(generation_of(path), set())
        for raw in _lines(path, cases):
            if not superseded or line_identity(raw) not in superseded:
                yield raw
