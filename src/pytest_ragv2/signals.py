"""SIGTERM handled as Ctrl-C, and a shield around the verdict.

CI sends SIGTERM when a job is cancelled: the session then stops as on Ctrl-C — the runs in
flight end, the partial results are reported, exit status 2 — instead of dying with no
report. While the verdict and the reports are written, a further SIGINT or SIGTERM (a second
Ctrl-C half a second after the first) is noted and not obeyed, so they are always written.
Only the main thread of the controlling process can handle signals; elsewhere both are no-ops.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def interrupt_on_sigterm() -> Callable[[], None]:
    """From now on SIGTERM raises KeyboardInterrupt, as SIGINT does; returns the undo."""
    if not _main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is interrupt:
            signal.signal(signal.SIGTERM, previous)

    return restore


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """SIGINT and SIGTERM noted, not obeyed, for the duration."""
    if not _main_thread():
        yield
        return
    caught = (signal.SIGINT, signal.SIGTERM)
    previous = {number: signal.getsignal(number) for number in caught}

    def hold(signum: int, frame: FrameType | None) -> None:
        sys.stderr.write(
            f"pytest-ragv2: {signal.Signals(signum).name} while the verdict is written: "
            "finishing the reports first\n"
        )

    for number in caught:
        signal.signal(number, hold)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
