"""report.html's plots drawn in a helper process that the session starts at its beginning.

matplotlib takes about 0.3 s to import, and a session against a fast system keeps its main
thread busy from its first run to its last: imported in a background thread, matplotlib
would take the GIL from every run; imported at the end, it lengthens every session by as
much. A helper process imports it on another core while the runs go on, then waits for
what the figures read (pickled through its stdin: :func:`~pytest_ragv2.report.plots.
plot_inputs` of the summary, plain types that need none of the summary's modules, and
each system's run latencies, not the records) and sends the figures back (pickled through
its stdout). It draws them with :func:`pytest_ragv2.report.plots.draw`, the very function
the session calls itself.

Whatever goes wrong with the helper (it could not start, it died, it timed out, it sent
garbage) the session draws the plots itself: the worker is only ever a head start. It
reads its input until EOF, so it ends when the session does, however the session ends.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import subprocess
import sys
import threading
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ragv2.deciding.records import RunRecord
    from pytest_ragv2.report.model import Summary
    from pytest_ragv2.report.plots import Figure

PLOT_TIMEOUT_S = 120.0  # drawing 100,000 runs' plots takes a few seconds
# a helper is ready 0.5 s after its start on an idle machine: one that is not within this
# much of the end (a loaded machine, a stuck process) is let go
READY_WAIT_S = 3.0
READY = b"R"
# past this many runs, sending what the plots read (a row per case of the compared
# systems, a latency per run) may cost more than the helper saves: the session draws the
# plots itself. At 50,000 layer-A runs the helper saved 0.2 s and the 30 MB matplotlib
# costs in this process.
MAX_RUNS_SENT = 100_000


def _spawn() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_ragv2.report.plot_worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


# a helper started as the plugin is configured, before the session's own modules are
# imported (0.2 s): the first PlotWorker takes it
_EARLY: list[subprocess.Popen[bytes]] = []


def start_early() -> None:
    """Start one helper now, for the first layer's figures (none in a process that has
    matplotlib already, nor off POSIX: see ``Controller.start_plot_workers``)."""
    if _EARLY or "matplotlib.figure" in sys.modules or os.name != "posix":
        return
    with contextlib.suppress(OSError):  # no helper: a later one, or the plots drawn here
        _EARLY.append(_spawn())


def discard_early() -> None:
    """Stop a helper started early that no PlotWorker took (no case, a usage error)."""
    while _EARLY:
        _stop(_EARLY.pop())


class PlotWorker:
    """One helper process, used for one layer's figures, then done."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = _EARLY.pop() if _EARLY else _spawn()
        # the exchange with the helper once submitted: its thread and what it received
        self._job: tuple[threading.Thread, list[object]] | None = None

    def submit(self, summary: Summary, records: Sequence[RunRecord]) -> None:
        """Hand the helper its work now, to draw while the session builds the rest of the
        page; :meth:`figures` collects it. A helper still in its imports (a session of a
        few runs) is waited for: it started them before this process would, on another
        core. One not ready within ``READY_WAIT_S`` is let go, and the plots drawn here."""
        process = self._process
        if process is None or self._job is not None:
            return
        if len(records) > MAX_RUNS_SENT or not _ready(process, READY_WAIT_S):
            self.close()
            return
        try:
            from pytest_ragv2.report.plot_inputs import plot_inputs
            from pytest_ragv2.report.plots import run_latencies

            latencies = {
                system: array("d", values)
                for system, values in run_latencies(summary, records).items()
            }
            payload = pickle.dumps(
                (plot_inputs(summary), latencies), protocol=pickle.HIGHEST_PROTOCOL
            )
        except Exception:  # anything unpicklable: drawn here
            self.close()
            return
        received: list[object] = []

        def exchange() -> None:
            try:
                out, _ = process.communicate(payload, timeout=PLOT_TIMEOUT_S)
                if process.returncode == 0:
                    received.append(pickle.loads(out))
            except Exception:  # a dead or stuck helper, or garbage sent: drawn here
                _stop(process)

        thread = threading.Thread(target=exchange, name="ragv2-plot-worker", daemon=True)
        thread.start()
        self._job = (thread, received)

    def figures(self, summary: Summary, records: Sequence[RunRecord]) -> list[Figure] | None:
        """The figures (submitted now if they were not), or None when the helper cannot
        give them: the caller draws them. One use."""
        self.submit(summary, records)
        job, self._job = self._job, None
        process, self._process = self._process, None
        if job is None:
            return None
        thread, received = job
        thread.join(PLOT_TIMEOUT_S + 5.0)
        if thread.is_alive() and process is not None:
            with contextlib.suppress(OSError):
                process.kill()  # the thread's own exchange ends with it
        if not received:
            return None
        made = received[0]
        return made if isinstance(made, list) else None

    def close(self) -> None:
        process, self._process = self._process, None
        job, self._job = self._job, None
        if process is None:
            return
        if job is None:
            _stop(process)
            return
        with contextlib.suppress(OSError):
            process.kill()  # the exchange's thread sees its pipes close, and ends
        job[0].join(5.0)


def _ready(process: subprocess.Popen[bytes], timeout_s: float = 0.0) -> bool:
    """The helper said it is ready (one byte on its stdout), waited for ``timeout_s`` at
    most."""
    stdout = process.stdout
    if stdout is None:
        return False
    try:
        readable, _, _ = select.select([stdout], [], [], timeout_s)
        return bool(readable) and stdout.read(1) == READY
    except (OSError, ValueError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(Exception):
        process.communicate(timeout=5.0)


def main() -> int:
    from pytest_ragv2.report.plots import draw, warm

    warm()  # the head start: matplotlib's import while the session runs
    # what it is sent (plot_inputs.PlotInputs) unpickles with what the plots module imports:
    # ready now
    sys.stdout.buffer.write(READY)
    sys.stdout.buffer.flush()
    try:
        summary, latencies = pickle.load(sys.stdin.buffer)
    except EOFError:
        return 0  # the session ended without asking (no case ran, an interrupt)
    pickle.dump(draw(summary, latencies), sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
