"""No secret in a log record, whichever handler prints or keeps it.

httpx logs every request's URL at INFO (``HTTP Request: POST http://user:pass@host/?sig=…``)
and httpcore, at DEBUG, the response headers a server echoed (an ``Authorization`` or API
key among them). pytest hands such records to handlers of its own — the live log of
``log_cli``, the capture that becomes a report's "Captured log" section (on screen with
``-rA``, in JUnit XML and pytest-html, sent by an xdist worker to its controller), a
``--log-file`` — and a filter on a logger misses the records of its child loggers
(``httpcore.http11``) and of any logger nobody thought of. So the records are scrubbed where
they are made: a ``logging`` record factory, installed for the session in every process
(controller and workers alike), formats a record's message once and, when it holds a
secret, replaces the message (``msg``, with no ``args``) by its scrubbed text; a record's
exception and stack texts likewise. A record without a secret is left as it was.

A record is made only when its logger is enabled for its level, so nothing is spent on
the records nobody asked for (pytest leaves the root logger at WARNING unless told).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from pytest_ragv2.systems.secret_policy import scrub_text

Secrets = Callable[[], Sequence[str]]


class ScrubbingRecordFactory:
    """A ``logging`` record factory: the one it replaced makes the record, then every secret
    ``secrets()`` gives is replaced in it."""

    def __init__(self, previous: Callable[..., logging.LogRecord], secrets: Secrets) -> None:
        self.previous = previous
        self.secrets = secrets
        self.active = True

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        if self.active:
            secrets = self.secrets()
            if secrets:
                scrub_record(record, secrets)
        return record


_FORMATTER = logging.Formatter()


def scrub_record(record: logging.LogRecord, secrets: Sequence[str]) -> None:
    """``record`` with every secret replaced in its message, exception and stack texts."""
    try:
        message = record.getMessage()
    except Exception:  # a broken format: logging reports it, with the arguments scrubbed
        record.msg = scrub_text(str(record.msg), secrets)
        if isinstance(record.args, tuple):
            record.args = tuple(scrub_text(str(arg), secrets) for arg in record.args)
        return
    clean = scrub_text(message, secrets)
    if clean != message:
        record.msg, record.args = clean, ()
    if record.exc_info and not record.exc_text:
        text = _FORMATTER.formatException(record.exc_info)
        clean = scrub_text(text, secrets)
        if clean != text:
            record.exc_text = clean
    if record.stack_info:
        record.stack_info = scrub_text(record.stack_info, secrets)


def install(secrets: Secrets) -> Callable[[], None]:
    """Scrub every log record made from now on of what ``secrets()`` gives; returns what
    undoes it (the factory before is put back, or, when another was installed over this
    one since, this one stops scrubbing)."""
    factory = ScrubbingRecordFactory(logging.getLogRecordFactory(), secrets)
    logging.setLogRecordFactory(factory)

    def uninstall() -> None:
        factory.active = False
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(factory.previous)

    return uninstall
