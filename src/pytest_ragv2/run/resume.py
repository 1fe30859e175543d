"""Resuming a run: the same run folder, the same seed and items, only the runs not yet made.

``--ragv2-resume=<run-id|last>`` takes an earlier run whose session was interrupted,
killed or stopped. Its manifest says what the run was (seed, options, systems, the hashes
of its configuration, cases, gold and allow-list); a resumption is refused, naming every
difference, when any of that changed, since the runs already made would then not belong
to the same run. Each item whose raw run is already on disk is scored from that raw run
(as ``ragv2 rescore`` would) instead of being run again; the others run and are appended,
by every process, to files of their own (``runs-<worker>.r<N>.jsonl``), so nothing written
before is ever rewritten. ``--ragv2-retry-errors`` also runs again every item whose raw
run ended in an error; the new line replaces the old one for every reader.

One session at a time holds a run folder: a lock file (``session.lock``, the holder's pid
and host) is created atomically, written whole, when the folder is claimed or resumed and
removed when the session ends. A lock whose process is gone (a killed session), or an
empty one, is taken over.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import secrets
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.config.inputs import InputFileError, read_input_bytes
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.run.rawruns import (
    MANIFEST_NAME,
    RawRunWriteError,
    check_run_id,
    line_identity,
    read_raw_runs,
)

if TYPE_CHECKING:
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.run.raw_models import RawRun, ScoredRawRun

LAST = "last"
LOCK_NAME = "session.lock"
# what makes a run the run it is; the other options (progress, budget, preflight, the run
# id itself) may differ between the sessions of one run
DEFINING_OPTIONS = (
    "layer",
    "repetitions",
    "splits",
    "languages",
    "configured_roles",
    "judge",
    "demo_faults",
    "ragv2_systems",
    "ragv2_evidence",
)
HASHED_FILES = ("config", "case_files", "gold_files", "allowlist")


class ResumeError(ValueError):
    """A run that cannot be resumed, or a run folder another session holds."""


class SessionLockWarning(UserWarning):
    """A stale session lock was taken over (its session is gone)."""


def resolve_run(raw_runs: Path, given: str) -> str:
    """The run id ``--ragv2-resume`` names: an id, or ``last`` (the newest manifest)."""
    if given == LAST:
        newest: tuple[str, str] | None = None
        for manifest in raw_runs.glob(f"*/{MANIFEST_NAME}"):
            with contextlib.suppress(OSError, ValueError):
                started = str(json.loads(manifest.read_text(encoding="utf-8"))["started_at"])
                if newest is None or (started, manifest.parent.name) > newest:
                    newest = (started, manifest.parent.name)
        if newest is None:
            raise ResumeError(f"--ragv2-resume=last: no run with a manifest under {raw_runs}")
        return newest[1]
    try:
        check_run_id(given)
    except ValueError as exc:
        raise ResumeError(str(exc).replace("--ragv2-run-id", "--ragv2-resume")) from None
    if not (raw_runs / given / MANIFEST_NAME).is_file():
        raise ResumeError(
            f"--ragv2-resume={given}: {raw_runs / given / MANIFEST_NAME} does not exist "
            "(a run can be resumed once its first session has collected its items)"
        )
    return given


def read_manifest(run_dir: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((run_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{run_dir / MANIFEST_NAME}: cannot be read: {exc}") from None
    if not isinstance(manifest, dict):
        raise ResumeError(f"{run_dir / MANIFEST_NAME}: not a run manifest")
    return manifest


def changed_files(
    recorded: Mapping[str, Any], current: Mapping[str, Any], groups: Sequence[str] = HASHED_FILES
) -> list[tuple[str, str | None, str | None]]:
    """Each file of two manifests' hashed ``groups`` whose sha256 differs: (name, the
    first's, the second's), None where a manifest does not hold it."""
    found: list[tuple[str, str | None, str | None]] = []
    for group in groups:
        was: Mapping[str, str] = recorded.get(group) or {}
        now: Mapping[str, str] = current.get(group) or {}
        found.extend(
            (name, was.get(name), now.get(name))
            for name in sorted(set(was) | set(now))
            if was.get(name) != now.get(name)
        )
    return found


def changed_options(
    recorded: Mapping[str, Any], current: Mapping[str, Any], names: Sequence[str]
) -> list[tuple[str, Any, Any]]:
    """Each of the options ``names`` that two manifests set otherwise: (name, first, second)."""
    was: Mapping[str, Any] = recorded.get("options") or {}
    now: Mapping[str, Any] = current.get("options") or {}
    return [
        (name, was.get(name), now.get(name)) for name in names if was.get(name) != now.get(name)
    ]


def differences(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What changed between a run's manifest and the session that would resume it."""
    found: list[str] = []
    if recorded.get("seed") != current.get("seed"):
        found.append(f"seed: the run's is {recorded.get('seed')}, this session's {current['seed']}")
    for name, was_hash, now_hash in changed_files(recorded, current):
        if now_hash is None:
            found.append(f"{name}: was part of the run, now missing")
        elif was_hash is None:
            found.append(f"{name}: not part of the run, now present")
        else:
            found.append(f"{name}: changed since the run (sha256 {was_hash[:12]}…)")
    found.extend(
        f"option {name}: the run's {was!r}, this session's {now!r}"
        for name, was, now in changed_options(recorded, current, DEFINING_OPTIONS)
    )
    was_systems: Mapping[str, Any] = recorded.get("systems") or {}
    now_systems: Mapping[str, Any] = current.get("systems") or {}
    for name in sorted(set(was_systems) | set(now_systems)):
        if name not in now_systems:
            found.append(f"system {name}: part of the run, not of this session")
        elif name not in was_systems:
            found.append(f"system {name}: not part of the run")
        else:
            found.extend(
                f"system {name}: {path} changed"
                for path in _changed_paths(was_systems[name], now_systems[name])
            )
    return found


def _changed_paths(was: Any, now: Any, prefix: str = "") -> list[str]:
    if isinstance(was, dict) and isinstance(now, dict):
        return [
            path
            for key in sorted(set(was) | set(now), key=str)
            for path in _changed_paths(was.get(key), now.get(key), f"{prefix}{key}.")
        ]
    return [] if was == now else [prefix.rstrip(".") or "configuration"]


@dataclass(slots=True)
class SessionLock:
    """The lock file of the one session holding a run folder: ``<pid> <host>``.

    It is written whole into a file of its own beside the lock and linked into place, so a
    lock exists complete or not at all: a full disk fails the session before it holds the
    run, leaving nothing behind. A lock already there is judged: one of a live session (or
    of another host, which cannot be judged from here) is refused; a stale one — its
    process is gone, or it is empty (left by a session of an earlier version that died
    before writing its pid) — is taken over, and ``taken_over`` says why.
    """

    path: Path
    held: bool = False
    taken_over: str | None = None

    @classmethod
    def acquire(cls, run_dir: Path) -> SessionLock:
        """Hold ``run_dir``. Raises :class:`ResumeError` when another session holds it, and
        :class:`~pytest_ragv2.run.rawruns.RawRunWriteError` when the lock cannot be written."""
        path = run_dir / LOCK_NAME
        owner = f"{os.getpid()} {socket.gethostname()}\n".encode()
        draft = run_dir / f".{LOCK_NAME}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
        try:
            _write_new(draft, owner)
        except OSError as exc:
            raise _not_written(path, exc) from None
        taken_over: str | None = None
        try:
            for _ in range(3):
                try:
                    _place(draft, path, owner)
                except FileExistsError:
                    stale = _judge(path, run_dir)
                    if stale.identity is not None:
                        _set_aside(path, stale)
                        taken_over = stale.reason
                    continue
                except OSError as exc:
                    raise _not_written(path, exc) from None
                return cls(path, held=True, taken_over=taken_over)
        finally:
            with contextlib.suppress(OSError):
                draft.unlink()
        raise ResumeError(f"{path}: could not take the run's lock (other sessions took it)")

    def release(self) -> None:
        if self.held:
            self.held = False
            with contextlib.suppress(OSError):
                self.path.unlink()


def _not_written(path: Path, exc: OSError) -> RawRunWriteError:
    error = RawRunWriteError(f"raw runs could not be written: {path}: {exc.strerror or exc}")
    error.errno = exc.errno
    return error


def _write_new(path: Path, content: bytes) -> None:
    """A new file holding ``content`` whole, or no file (a failed write removes it)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        written = 0
        while written < len(content):
            written += os.write(fd, content[written:])
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    os.close(fd)


_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK})


def _place(draft: Path, path: Path, owner: bytes) -> None:
    """The written lock linked into place; FileExistsError when a lock is there. Where
    hard links are not supported, the lock is created and written in place instead (a
    failed write removes it)."""
    try:
        os.link(draft, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        _write_new(path, owner)


@dataclass(frozen=True, slots=True)
class _Stale:
    reason: str
    # the lock judged: (st_dev, st_ino, st_size, st_mtime_ns) and its content (an inode
    # number alone can be reused at once by the lock written next); None: it is gone
    identity: tuple[int, int, int, int] | None
    content: bytes = b""


def _judge(path: Path, run_dir: Path) -> _Stale:
    """Why the lock at ``path`` may be taken over; :class:`ResumeError` when it is held,
    or is no lock this package wrote (which is not judged)."""
    try:
        info = os.lstat(path)
        content = read_input_bytes(path, 4096, "a session lock")
    except FileNotFoundError:
        return _Stale("it was removed meanwhile", None)
    except InputFileError as exc:
        if exc.missing:
            return _Stale("it was removed meanwhile", None)
        raise ResumeError(
            f"{run_dir}: {path.name} is not a lock this package wrote ({exc.message}); "
            "if no session is running on this run, remove it"
        ) from None
    identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    text = content.decode("utf-8", "replace").strip()
    if not text:
        reason = "it was empty: its session stopped before writing its pid"
        return _Stale(reason, identity, content)
    pid_text, _, host = text.partition(" ")
    if not pid_text.isdigit() or not 0 < int(pid_text) < 2**31:
        raise ResumeError(
            f"{run_dir}: {path.name} names no session ({printable(text[:40])!r}); "
            "if no session is running on this run, remove it"
        )
    pid = int(pid_text)
    if host and host != socket.gethostname():
        raise ResumeError(
            f"{run_dir}: another session holds this run (pid {pid} on {printable(host)}, "
            f"{path.name}); wait for it to end, or remove {path.name} if it has ended"
        )
    if _alive(pid):
        raise ResumeError(
            f"{run_dir}: another session holds this run (pid {pid}, {path.name}); "
            "wait for it to end"
        )
    return _Stale(f"its session (pid {pid}) is no longer running", identity, content)


def _set_aside(path: Path, stale: _Stale) -> None:
    """Remove the stale lock judged, and only it: it is renamed aside first, and a lock
    another session put there since the judgement is put back."""
    aside = path.with_name(f".{LOCK_NAME}.stale-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    try:
        info = os.lstat(aside)
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        if identity != stale.identity or _content(aside) != stale.content:
            with contextlib.suppress(OSError):  # not the lock judged: put it back
                os.link(aside, path)
    finally:
        with contextlib.suppress(OSError):
            aside.unlink()


def _content(path: Path) -> bytes | None:
    try:
        return read_input_bytes(path, 4096, "a session lock")
    except InputFileError:
        return None


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (one not ours to signal does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed process not yet reaped by its parent (Linux): it holds nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


@dataclass(slots=True)
class Resumption:
    """What one process of a resuming session knows of the run's earlier sessions."""

    run_dir: Path
    generation: int  # this session's: 1 for the first resumption
    retry_errors: bool = False
    _earlier: dict[str, dict[str, Any]] | None = field(default=None, repr=False)

    def to_workerinput(self) -> dict[str, Any]:
        return {"generation": self.generation, "retry_errors": self.retry_errors}

    @classmethod
    def from_workerinput(cls, run_dir: Path, data: Mapping[str, Any]) -> Resumption:
        return cls(run_dir, int(data["generation"]), bool(data["retry_errors"]))

    @property
    def earlier(self) -> dict[str, dict[str, Any]]:
        """The raw runs of the earlier sessions, by line identity (read once, on first use)."""
        if self._earlier is None:
            self._earlier = {line_identity(raw): raw for raw in read_raw_runs(self.run_dir)}
        return self._earlier

    def earlier_record(
        self, key: RunKey, rescore: Callable[[ScoredRawRun], RunRecord]
    ) -> RunRecord | None:
        """The record of an item already run, scored from its raw run by ``rescore`` (the
        layer's); None when it must run (never ran, its line does not read as a run, or it
        ended in an error and errors are retried)."""
        from pytest_ragv2.deciding.records import JudgeGrade
        from pytest_ragv2.run.raw_models import JudgeRawRun
        from pytest_ragv2.systems.outputs import SCORING_ERROR_KINDS

        line = self._earlier_line({"key": key.to_json()})
        if line is None or isinstance(line, JudgeRawRun):
            return None
        record = rescore(line)
        error = record.error
        if self.retry_errors and error is not None and error.kind not in SCORING_ERROR_KINDS:
            return None
        judged = self._earlier_line({"key": key.to_json(), "judge": None})
        if isinstance(judged, JudgeRawRun):
            grade = JudgeGrade.from_json(judged.judge) if judged.judge is not None else None
            record = dataclasses.replace(record, judge=grade)
        return record

    def _earlier_line(self, identity: dict[str, Any]) -> RawRun | None:
        from pydantic import ValidationError

        from pytest_ragv2.run.raw_models import read_raw_run

        raw = self.earlier.get(line_identity(identity))
        if raw is None:
            return None
        try:
            return read_raw_run(raw)
        except ValidationError:  # a line that does not read: the item runs again
            return None


def session_entry(generation: int, retry_errors: bool, argv: list[str], at: str) -> dict[str, Any]:
    """What the manifest's ``resumed`` list records of one resuming session."""
    return {"generation": generation, "retry_errors": retry_errors, "argv": argv, "at": at}
