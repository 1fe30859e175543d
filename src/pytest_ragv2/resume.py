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
and host) is created atomically when the folder is claimed or resumed and removed when the
session ends. A lock whose process is gone (a killed session) is taken over.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.rawruns import MANIFEST_NAME, check_run_id, line_identity, read_raw_runs

if TYPE_CHECKING:
    from pytest_ragv2.context import RunContext
    from pytest_ragv2.keys import RunKey
    from pytest_ragv2.run_record import RunRecord
    from pytest_ragv2.schema import Case

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


def differences(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What changed between a run's manifest and the session that would resume it."""
    found: list[str] = []
    if recorded.get("seed") != current.get("seed"):
        found.append(f"seed: the run's is {recorded.get('seed')}, this session's {current['seed']}")
    for group in HASHED_FILES:
        was: Mapping[str, str] = recorded.get(group) or {}
        now: Mapping[str, str] = current.get(group) or {}
        for name in sorted(set(was) | set(now)):
            if name not in now:
                found.append(f"{name}: was part of the run, now missing")
            elif name not in was:
                found.append(f"{name}: not part of the run, now present")
            elif was[name] != now[name]:
                found.append(f"{name}: changed since the run (sha256 {was[name][:12]}…)")
    was_options: Mapping[str, Any] = recorded.get("options") or {}
    now_options: Mapping[str, Any] = current.get("options") or {}
    for name in DEFINING_OPTIONS:
        if was_options.get(name) != now_options.get(name):
            found.append(
                f"option {name}: the run's {was_options.get(name)!r}, "
                f"this session's {now_options.get(name)!r}"
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
    """The lock file of the one session holding a run folder."""

    path: Path
    held: bool = False

    @classmethod
    def acquire(cls, run_dir: Path) -> SessionLock:
        path = run_dir / LOCK_NAME
        owner = f"{os.getpid()} {socket.gethostname()}\n"
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                holder = _live_holder(path)
                if holder is not None:
                    raise ResumeError(
                        f"{run_dir}: another session holds this run (pid {holder}, "
                        f"{path.name}); wait for it to end"
                    ) from None
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()  # its session is gone: a kill left the lock behind
                continue
            try:
                os.write(fd, owner.encode())
            finally:
                os.close(fd)
            return cls(path, held=True)
        raise ResumeError(f"{path}: could not take the run's lock")

    def release(self) -> None:
        if self.held:
            self.held = False
            with contextlib.suppress(OSError):
                self.path.unlink()


def _live_holder(path: Path) -> str | None:
    """The pid holding a lock, when that process still runs on this host."""
    try:
        pid_text, _, host = path.read_text(encoding="utf-8").strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return "unknown"  # being written right now, or not ours to judge: held
    if host and host != socket.gethostname():
        return f"{pid} on {host}"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return str(pid)
    return None if _zombie(pid) else str(pid)


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
        self, ctx: RunContext, key: RunKey, case: Case, split: str
    ) -> RunRecord | None:
        """The record of an item already run, scored from its raw run; None when it must
        run (never ran, or ended in an error and errors are retried)."""
        from pytest_ragv2.layer_registry import load_layer
        from pytest_ragv2.systems.outputs import SCORING_ERROR_KINDS

        identity = line_identity({"key": key.to_json()})
        raw = self.earlier.get(identity)
        if raw is None:
            return None
        kb_path = ctx.systems[key.system].capabilities.kb_path
        record = load_layer(key.layer).rescore(
            raw, case, split, ctx.settings, ctx.allowlist, kb_path
        )
        error = record.error
        if self.retry_errors and error is not None and error.kind not in SCORING_ERROR_KINDS:
            return None
        judged = self.earlier.get(line_identity({"key": key.to_json(), "judge": None}))
        if judged is not None:
            record = dataclasses.replace(record, judge=judged["judge"])
        return record


def session_entry(generation: int, retry_errors: bool, argv: list[str], at: str) -> dict[str, Any]:
    """What the manifest's ``resumed`` list records of one resuming session."""
    return {"generation": generation, "retry_errors": retry_errors, "argv": argv, "at": at}
