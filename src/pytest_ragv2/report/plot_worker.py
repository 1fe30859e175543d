"""report.html's plots drawn in a helper process that the session starts at its beginning.

matplotlib takes about 0.3 s to import, and a session against a fast system keeps its main
thread busy from its first run to its last: imported in a background thread, matplotlib
would take the GIL from every run; imported at the end, it lengthens every session by as
much. A helper process imports it on another core while the runs go on, then waits for
the summary and the records (pickled through its stdin) and sends the figures back
(pickled through its stdout). It draws them with :func:`pytest_ragv2.report.plots.figures`,
the very function the session would call itself.

Whatever goes wrong with the helper (it could not start, it died, it timed out, it sent
garbage) the session draws the plots itself: the worker is only ever a head start. It
reads its input until EOF, so it ends when the session does, however the session ends.
"""

from __future__ import annotations

import contextlib
import pickle
import select
import subprocess
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ragv2.report.plots import Figure
    from pytest_ragv2.report.summary import Summary
    from pytest_ragv2.run_record import RunRecord

PLOT_TIMEOUT_S = 120.0  # drawing 100,000 runs' plots takes a few seconds
READY = b"R"
# past this many runs, sending the summary (a row per case) costs more than the helper
# saves: the session draws the plots itself, and its 0.3 s of imports is lost in its length
MAX_RUNS_SENT = 5_000


class PlotWorker:
    """One helper process, used for one layer's figures, then done."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-m", "pytest_ragv2.report.plot_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def figures(self, summary: Summary, records: Sequence[RunRecord]) -> list[Figure] | None:
        """The figures, or None when the helper cannot give them (the caller draws them).
        A helper that has not finished its imports yet (a session of a few runs) is let go:
        drawing here is then sooner than waiting for it."""
        process, self._process = self._process, None
        if process is None:
            return None
        if len(records) > MAX_RUNS_SENT or not _ready(process):
            _stop(process)
            return None
        try:
            payload = pickle.dumps((summary, _slim(records)), protocol=pickle.HIGHEST_PROTOCOL)
            out, _ = process.communicate(payload, timeout=PLOT_TIMEOUT_S)
            if process.returncode != 0:
                return None
            made = pickle.loads(out)
        except Exception:  # a dead or stuck helper, or anything unpicklable: draw here
            _stop(process)
            return None
        return made if isinstance(made, list) else None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _stop(process)


def _slim(records: Sequence[RunRecord]) -> list[RunRecord]:
    """What the figures read of the records (a run's key, role, outcome and latency), not
    their metrics and items: a tenth of the bytes to send and for the helper to hold."""
    from pytest_ragv2.run_record import RunRecord

    return [
        RunRecord(
            key=record.key,
            category=record.category,
            split=record.split,
            role=record.role,
            ok=record.ok,
            met=record.met,
            latency_s=record.latency_s,
            skipped=record.skipped,
        )
        for record in records
    ]


def _ready(process: subprocess.Popen[bytes]) -> bool:
    """The helper said it is ready (one byte on its stdout), without waiting for it."""
    stdout = process.stdout
    if stdout is None:
        return False
    try:
        readable, _, _ = select.select([stdout], [], [], 0)
        return bool(readable) and stdout.read(1) == READY
    except (OSError, ValueError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(Exception):
        process.communicate(timeout=5.0)


def main() -> int:
    from pytest_ragv2.report.plots import figures, warm

    warm()  # the head start: matplotlib's import while the session runs
    import pytest_ragv2.report.summary  # noqa: F401  what unpickling the summary needs

    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    try:
        summary, records = pickle.load(sys.stdin.buffer)
    except EOFError:
        return 0  # the session ended without asking (no case ran, an interrupt)
    pickle.dump(figures(summary, records), sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
