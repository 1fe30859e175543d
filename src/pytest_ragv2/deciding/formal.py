"""The formal protocol: the gate lock, the holdout's one look, and what kind of run this is.

``ragv2 freeze-gates`` writes a lock: hashes of the gates (both layers' thresholds and the
decision rule), the cases and the gold, the repetitions, the commit and the time. A holdout
run needs a lock that matches the project as it is; it records "holdout seen" in the lock,
and from then on the lock is final: a changed gate is refused for the holdout and flagged
in every report. ``--ragv2-formal`` refuses to start unless every case is adjudicated, the
gates are frozen and the full case set runs at the locked repetitions. A session with a
provisional case is a development run and says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_ragv2.config.settings import Settings
from pytest_ragv2.run.rawruns import git_commit

LOCK_FILE = "ragv2-gates.lock.json"
LOCK_VERSION = 1


class ProtocolError(Exception):
    """A run the protocol refuses; the message names what to do."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a lock freezes, each part as a SHA-256 of its canonical form."""

    gates: str
    cases: str
    gold: str
    repetitions: int | None

    def differences(self, other: Fingerprint) -> list[str]:
        names = {"gates": "the gates", "cases": "the cases", "gold": "the gold"}
        changed = [text for key, text in names.items() if getattr(self, key) != getattr(other, key)]
        if self.repetitions != other.repetitions:
            changed.append(f"the repetitions ({other.repetitions} locked, {self.repetitions} now)")
        return changed


@dataclass(frozen=True, slots=True)
class HoldoutLook:
    run_id: str
    time: str


@dataclass(slots=True)
class Lock:
    fingerprint: Fingerprint
    created: str
    commit: str | None
    holdout_seen: list[HoldoutLook] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": LOCK_VERSION,
            "created": self.created,
            "commit": self.commit,
            **asdict(self.fingerprint),
            "holdout_seen": [asdict(look) for look in self.holdout_seen],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Lock:
        return cls(
            fingerprint=Fingerprint(
                gates=str(data["gates"]),
                cases=str(data["cases"]),
                gold=str(data["gold"]),
                repetitions=data.get("repetitions"),
            ),
            created=str(data["created"]),
            commit=data.get("commit"),
            holdout_seen=[
                HoldoutLook(str(look["run_id"]), str(look["time"]))
                for look in data.get("holdout_seen", [])
            ],
        )


def _digest(parts: Iterable[bytes]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(len(part).to_bytes(8, "big"))
        hasher.update(part)
    return hasher.hexdigest()


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _files(root: Path, paths: Iterable[Path]) -> list[bytes]:
    parts: list[bytes] = []
    for path in sorted(set(paths)):
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        parts += [name.encode(), path.read_bytes()]
    return parts


def gate_settings(settings: Settings) -> dict[str, Any]:
    """Every setting that decides a gate: both layers' thresholds, rules and weights."""
    frozen: dict[str, Any] = {
        "gates": settings.gates.model_dump(mode="json"),
        "answer_gates": settings.answer_gates.model_dump(mode="json"),
        "item_pass": settings.item_pass.model_dump(mode="json"),
    }
    weights = getattr(settings, "score_weights", None)
    if weights is not None:
        frozen["score_weights"] = weights.model_dump(mode="json")
    return frozen


def project_root(settings: Settings, root: Path) -> Path:
    """The folder the lock names files from: the configuration file's, else ``root`` (the
    rootdir). pytest and ``ragv2 freeze-gates --config`` run from any folder agree on it,
    so a lock frozen from elsewhere matches the session."""
    return settings.source.parent.resolve() if settings.source is not None else root


def fingerprint(settings: Settings, root: Path) -> Fingerprint:
    root = project_root(settings, root)

    def under(directory: Path | None, exclude: Path | None = None) -> list[Path]:
        if directory is None or not directory.is_dir():
            return []
        found = [p for p in directory.rglob("*") if p.is_file() and p.suffix in (".yaml", ".yml")]
        if exclude is not None:
            found = [p for p in found if not p.resolve().is_relative_to(exclude.resolve())]
        return found

    gold_files = under(settings.gold)
    if settings.allowlist is not None and settings.allowlist.is_file():
        gold_files.append(settings.allowlist)
    return Fingerprint(
        gates=_digest([_canonical(gate_settings(settings))]),
        cases=_digest(_files(root, under(settings.cases, exclude=settings.gold))),
        gold=_digest(_files(root, gold_files)),
        repetitions=settings.repetitions,
    )


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def lock_path(settings: Settings, root: Path) -> Path:
    """The lock lives beside the configuration file (else in the rootdir)."""
    return (settings.source.parent if settings.source is not None else root) / LOCK_FILE


def read_lock(path: Path) -> Lock | None:
    if not path.is_file():
        return None
    try:
        return Lock.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ProtocolError(f"{path}: not a gate lock ({exc})") from None


def write_lock(path: Path, lock: Lock) -> None:
    """The lock written whole, or left as it was (a failed write leaves no temporary)."""
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(lock.to_json(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def freeze_gates(settings: Settings, root: Path, path: Path) -> Lock:
    """Write the lock; refused once the holdout has been seen (the lock is then final)."""
    existing = read_lock(path)
    if existing is not None and existing.holdout_seen:
        first = existing.holdout_seen[0]
        raise ProtocolError(
            f"{path}: the holdout was seen (run {first.run_id}, {first.time}); the gates "
            "are final for it and cannot be frozen again"
        )
    lock = Lock(fingerprint(settings, root), _now(), git_commit(project_root(settings, root)))
    write_lock(path, lock)
    return lock


def check_holdout(settings: Settings, root: Path, path: Path) -> Lock:
    """A holdout run needs a lock matching the project as it is now."""
    lock = read_lock(path)
    if lock is None:
        raise ProtocolError(
            f"a holdout run needs a gate lock: {path.name} not found; decide the gates, then "
            "run `ragv2 freeze-gates` (the holdout is run against frozen gates only)"
        )
    changed = fingerprint(settings, root).differences(lock.fingerprint)
    if changed:
        seen = (
            f" after the holdout was seen (run {lock.holdout_seen[0].run_id}): the holdout "
            "is refused to these gates for good"
            if lock.holdout_seen
            else "; freeze them again with `ragv2 freeze-gates` before the holdout run"
        )
        raise ProtocolError(
            f"{path.name} (frozen {lock.created}) does not match: {', '.join(changed)} "
            f"changed{seen}"
        )
    return lock


def record_holdout_look(path: Path, lock: Lock, run_id: str) -> None:
    lock.holdout_seen.append(HoldoutLook(run_id, _now()))
    write_lock(path, lock)


def check_formal(
    settings: Settings,
    root: Path,
    path: Path,
    *,
    provisional: Sequence[str],
    narrowed_by: Sequence[str],
) -> Lock:
    """--ragv2-formal: adjudicated gold, frozen gates, every case at the locked repetitions."""
    problems: list[str] = []
    if provisional:
        shown = ", ".join(provisional[:10]) + (" …" if len(provisional) > 10 else "")
        problems.append(
            f"{len(provisional)} case(s) have provisional gold ({shown}): adjudicate them "
            "(gold_status: adjudicated) first"
        )
    problems += [f"the case set is narrowed by {option}" for option in narrowed_by]
    lock = read_lock(path)
    if lock is None:
        problems.append(f"the gates are not frozen ({path.name} not found: `ragv2 freeze-gates`)")
    else:
        changed = fingerprint(settings, root).differences(lock.fingerprint)
        if changed:
            problems.append(f"{path.name} does not match: {', '.join(changed)} changed")
    if problems or lock is None:
        raise ProtocolError(
            "--ragv2-formal: a formal run refuses to start:\n"
            + "\n".join(f"  {problem}" for problem in problems)
        )
    return lock


def gates_changed_after_holdout(settings: Settings, root: Path, path: Path) -> str | None:
    """The flag every report carries once a gate differs from a lock the holdout has seen."""
    try:
        lock = read_lock(path)
    except ProtocolError as exc:
        return str(exc)
    if lock is None or not lock.holdout_seen:
        return None
    if fingerprint(settings, root).gates == lock.fingerprint.gates:
        return None
    look = lock.holdout_seen[0]
    return (
        f"the gates differ from those frozen in {path.name}, and the holdout was seen "
        f"against the frozen ones (run {look.run_id}, {look.time}): these gates were "
        "changed after the holdout was seen"
    )


@dataclass(frozen=True, slots=True)
class RunKind:
    """What kind of run a session was, for every report."""

    kind: str  # "development", "holdout" or "formal"
    provisional_cases: int
    cases: int
    flags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        if self.kind == "development" and self.provisional_cases:
            return (
                f"development run: {self.provisional_cases} of {self.cases} case(s) have "
                "provisional gold (not a formal result)"
            )
        return f"{self.kind} run"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "provisional_cases": self.provisional_cases,
            "cases": self.cases,
            "flags": list(self.flags),
        }


def run_kind(
    gold_status_by_case: dict[str, str | None],
    *,
    holdout: bool,
    formal: bool,
    flags: Sequence[str] = (),
) -> RunKind:
    provisional = sum(status != "adjudicated" for status in gold_status_by_case.values())
    if formal:
        kind = "formal"
    elif provisional:
        kind = "development"
    elif holdout:
        kind = "holdout"
    else:
        kind = "development"
    return RunKind(kind, provisional, len(gold_status_by_case), tuple(flags))
