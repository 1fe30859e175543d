"""SIGTERM handled as Ctrl-C, and one interrupt obeyed: every later one is held.

CI sends SIGTERM when a job is cancelled: the session then stops as on Ctrl-C — the runs in
flight end, the partial results are reported, exit status 2 — instead of dying with no
report. The first SIGINT or SIGTERM raises ``KeyboardInterrupt``, and from that moment
(set by the handler itself, before it raises: there is no window) every further SIGINT or
SIGTERM is noted and not obeyed, so a second Ctrl-C 0.05 s after the first cannot land
between pytest's handling of the first and the reports: they are written, and the exit
status is 2. From the moment the verdict is written (``hold``) every signal is held too,
a first one included: the verdict already stands. After an interrupted session has
ended, one more signal is still noted (it would otherwise land between the reports and the
process's exit and turn exit status 2 into a death by signal); the one after is obeyed.
Once such a process exits (its ``atexit`` functions run), SIGINT and SIGTERM are ignored:
the interpreter's finalization gives a Python handler back to the default, and a second
Ctrl-C landing in those last milliseconds would still kill it. SIGKILL, or SIGQUIT
(Ctrl-\\), still ends a session at once.

Only the main thread of the controlling process handles signals; elsewhere these are
no-ops.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

_CAUGHT = (signal.SIGINT, signal.SIGTERM)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _held(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write(
        f"pytest-ragv2: {signal.Signals(signum).name} noted: the session is stopping and "
        "writes its reports first (SIGKILL or Ctrl-\\ ends it at once)\n"
    )


_INTERRUPTED = threading.Event()  # this process's session was interrupted by a signal


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """The first SIGINT or SIGTERM: every later one is held, and this one interrupts."""
    for number in _CAUGHT:
        signal.signal(number, _held)
    _INTERRUPTED.set()
    raise KeyboardInterrupt(signal.Signals(signum).name)


_Handler = Callable[[int, FrameType | None], Any] | int | None


def _one_late(
    previous: dict[signal.Signals, _Handler],
) -> Callable[[int, FrameType | None], None]:
    """A handler that notes one more signal after an interrupted session has ended (the
    reports are written, the process is about to exit with status 2: a second Ctrl-C
    landing there must not turn the exit into a death by signal), then gives the
    handlers back, so a further one is obeyed."""

    def late(signum: int, frame: FrameType | None) -> None:
        _held(signum, frame)
        for number, handler in previous.items():
            if signal.getsignal(number) is late:
                signal.signal(number, handler)

    return late


def interrupt_once() -> Callable[[], None]:
    """From now on the first SIGINT or SIGTERM raises KeyboardInterrupt and every later one
    is held; returns the undo (the handlers before, whatever happened since)."""
    if not _main_thread():
        return lambda: None
    previous = {number: signal.getsignal(number) for number in _CAUGHT}
    for number in _CAUGHT:
        signal.signal(number, _interrupt)

    def restore() -> None:
        late = _one_late(previous) if _INTERRUPTED.is_set() else None
        if late is not None:
            atexit.register(_ignore_from_here)
        _INTERRUPTED.clear()
        for number, handler in previous.items():
            if signal.getsignal(number) in (_interrupt, _held):
                signal.signal(number, late or handler)

    return restore


def _ignore_from_here() -> None:
    """At the exit of a process whose session was interrupted: its status stands."""
    if _main_thread():
        for number in _CAUGHT:
            signal.signal(number, signal.SIG_IGN)


def hold() -> None:
    """From now on every SIGINT and SIGTERM is noted, not obeyed (until ``interrupt_once``'s
    undo): the verdict is being written."""
    if _main_thread():
        for number in _CAUGHT:
            signal.signal(number, _held)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """SIGINT and SIGTERM noted, not obeyed, for the duration."""
    if not _main_thread():
        yield
        return
    previous = {number: signal.getsignal(number) for number in _CAUGHT}
    for number in _CAUGHT:
        signal.signal(number, _held)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
