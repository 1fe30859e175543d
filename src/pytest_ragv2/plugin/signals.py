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
Where the first signal lands matters too: from the plugin's import (when the command line
asks for a layer) until the session's handlers exist it is kept and raised once they do;
from the session's configuration to its collection it waits for the collection, so that it
ends a session pytest has started (which writes its reports); and inside an item's protocol
but outside its run it waits for the run's start or the item's end, never landing inside
pytest's own context managers. Once such a process exits (its ``atexit`` functions run),
SIGINT and SIGTERM are ignored:
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
from dataclasses import dataclass
from types import FrameType, TracebackType
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


@dataclass(slots=True)
class _Where:
    """Where the main thread is, for the first signal: inside an item's protocol but not
    inside its run, pytest is entering or leaving the item's context managers (its log
    capture's ``__enter__`` half done, a ``KeyboardInterrupt`` there broke its ``__exit__``
    with a TypeError and lost the interrupt); the interrupt then waits for a point where
    they are whole: the start of the run, or the end of the item's protocol."""

    in_protocol: bool = False
    in_run: bool = False
    # from the session's configuration to its collection: an interrupt there would end
    # the session before pytest's session start, which is before any report is written
    starting: bool = False
    pending: int | None = None


_WHERE = _Where()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """The first SIGINT or SIGTERM: every later one is held, and this one interrupts, at
    once or (inside an item's protocol, outside its run) at the next safe point."""
    for number in _CAUGHT:
        signal.signal(number, _held)
    _INTERRUPTED.set()
    if _WHERE.starting or (_WHERE.in_protocol and not _WHERE.in_run):
        _WHERE.pending = signum
        return
    raise KeyboardInterrupt(signal.Signals(signum).name)


def hold_until_collection() -> None:
    """From now until :func:`collection_begins`: an interrupt waits, so that it ends a
    session that has started (pytest then writes its reports and releases its folder)."""
    _WHERE.starting = True


def collection_begins() -> None:
    """The session has started: an interrupt that waited is raised here."""
    _WHERE.starting = False
    _raise_pending()


def _raise_pending() -> None:
    signum, _WHERE.pending = _WHERE.pending, None
    if signum is not None:
        raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def item_protocol() -> Iterator[None]:
    """Around one item's whole protocol (setup, call, teardown and their reports): an
    interrupt that arrives here outside the run is raised once the item is done."""
    _WHERE.in_protocol = True
    try:
        yield
    finally:
        _WHERE.in_protocol = False
        _raise_pending()


@contextlib.contextmanager
def run_section() -> Iterator[None]:
    """Around a run's calls to its system: an interrupt stops them at once (the adapters
    end their requests and processes on it), and one that waited is raised here first."""
    _raise_pending()
    _WHERE.in_run = True
    try:
        yield
    except KeyboardInterrupt as exc:
        # raised afresh from here: the signal landed at any instruction of the run, and a
        # frame of CPython 3.11 can have no line number there, which pytest's report of
        # the interrupt cannot format (a TypeError instead of the session's end)
        raise KeyboardInterrupt(*exc.args) from None
    finally:
        _WHERE.in_run = False


def without_unnumbered_frames(tb: TracebackType | None) -> TracebackType | None:
    """A traceback without the entries that have no line number (see ``run_section``)."""
    kept: list[TracebackType] = []
    while tb is not None:
        if tb.tb_lineno is not None:
            kept.append(tb)
        tb = tb.tb_next
    rebuilt: TracebackType | None = None
    for entry in reversed(kept):
        rebuilt = TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


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


_EARLY: list[int] = []  # a signal that came before the session's handlers were installed
_BEFORE_EARLY: dict[signal.Signals, _Handler] = {}  # the handlers before note_early_signals


def note_early_signals() -> None:
    """From the plugin's import, when the command line asks for a layer, until the session
    installs its handlers: a first SIGTERM or SIGINT is noted (and raised as the session's
    interrupt from ``pytest_configure`` on: exit status 2, not a death by signal in
    pytest's start-up), a second one obeyed at once."""
    if not _main_thread() or _BEFORE_EARLY:
        return

    def early(signum: int, frame: FrameType | None) -> None:
        if _EARLY:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)
            return
        _EARLY.append(signum)

    for number in _CAUGHT:
        _BEFORE_EARLY[number] = signal.getsignal(number)
        signal.signal(number, early)


def end_early_signals() -> None:
    """The early handlers given back (an inert session): a signal they noted is obeyed."""
    if not _BEFORE_EARLY:
        return
    for number, handler in _BEFORE_EARLY.items():
        signal.signal(number, handler)
    _BEFORE_EARLY.clear()
    if _EARLY:
        signal.raise_signal(_EARLY.pop())


def raise_early_signal() -> None:
    """The interrupt of a signal noted before the session's handlers existed."""
    if _EARLY:
        _interrupt(_EARLY.pop(), None)


def interrupt_once() -> Callable[[], None]:
    """From now on the first SIGINT or SIGTERM raises KeyboardInterrupt and every later one
    is held; returns the undo (the handlers before, whatever happened since)."""
    if not _main_thread():
        return lambda: None
    previous = {number: signal.getsignal(number) for number in _CAUGHT}
    if _BEFORE_EARLY:  # the early handlers stand for the ones before them
        previous.update(_BEFORE_EARLY)
        _BEFORE_EARLY.clear()
    for number in _CAUGHT:
        signal.signal(number, _interrupt)

    def restore() -> None:
        late = _one_late(previous) if _INTERRUPTED.is_set() else None
        if late is not None:
            atexit.register(_ignore_from_here)
        _INTERRUPTED.clear()
        _WHERE.pending = None
        _WHERE.starting = False
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
