"""A progress line on long runs: runs done of the total, errors, the ETA and the latest run.

pytest's own dots say how far a session is; a gold-case session also wants to know how long
it will take and whether the systems are failing. At most one line every ``interval_s``
seconds, never under ``-q`` or in a CI log (``--ragv2-progress`` decides; ``auto`` shows it
on an interactive terminal only).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pytest_ragv2.deciding.records import RunRecord
from pytest_ragv2.report.safe_text import printable
from pytest_ragv2.systems.outputs import SCORING_ERROR_KINDS

DEFAULT_INTERVAL_S = 15.0


def progress_interval(setting: str | None, *, verbosity: int, interactive: bool) -> float | None:
    """Seconds between progress lines, or None for none: ``off``, ``on``, ``auto`` (the
    default: on an interactive terminal, not under -q, not in CI) or a number of seconds."""
    value = (setting or "auto").strip().lower()
    if value == "off":
        return None
    if value == "on":
        return DEFAULT_INTERVAL_S
    if value == "auto":
        in_ci = os.environ.get("CI", "").lower() not in ("", "0", "false")
        return DEFAULT_INTERVAL_S if interactive and verbosity >= 0 and not in_ci else None
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(
            f"--ragv2-progress: {setting!r} is not auto, on, off or a number of seconds"
        ) from None
    if seconds < 0:
        raise ValueError(f"--ragv2-progress: {setting!r} is negative")
    return seconds


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


@dataclass(slots=True)
class Progress:
    """Counts the runs as their reports arrive and writes a line when one is due."""

    total: int
    interval_s: float
    write_line: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)
    shown_at: float = field(default=-1.0)
    done: int = 0
    errors: int = 0
    unmet: int = 0
    latency_s: float = 0.0
    latest: str = ""

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()
        self.shown_at = self.started

    def add(self, record: RunRecord) -> None:
        self.done += 1
        scoring = record.error is not None and record.error.kind in SCORING_ERROR_KINDS
        self.errors += not record.ok and not scoring  # the system's errors, as error_rate
        self.unmet += not record.met and not record.skipped
        self.latency_s += record.latency_s
        key = record.key
        self.latest = f"{key.case} on {key.system} ({key.lang}, r{key.rep})"
        now = self.clock()
        if self.done < self.total and now - self.shown_at >= self.interval_s:
            self.shown_at = now
            self.write_line(printable(self.line(now)))

    def line(self, now: float) -> str:
        elapsed = now - self.started
        share = self.done / self.total if self.total else 1.0
        # the pace so far (wall time per finished run) already counts parallel workers
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        mean_ms = self.latency_s / self.done * 1000 if self.done else 0.0
        return (
            f"ragv2: {self.done:,}/{self.total:,} runs ({share:.0%}), "
            f"{self.errors} error(s), {self.unmet} unmet, mean latency {mean_ms:.0f} ms, "
            f"ETA {fmt_duration(eta)}; latest {self.latest}"
        )
