"""The one exception an adapter raises inside a call: it becomes the run's (or the turn's)
recorded error, never an exception out of the session.
"""

from __future__ import annotations

from pytest_ragv2.systems.outputs import ErrorKind, RunError
from pytest_ragv2.systems.secret_policy import redact_urls_in


class AdapterFailure(Exception):
    """Raised inside an adapter; the adapter records it as the run's (or turn's) error."""

    def __init__(self, kind: ErrorKind, message: str, status_code: int | None = None) -> None:
        message = redact_urls_in(message)  # a URL's credentials never reach a record
        super().__init__(message)
        self.error = RunError(kind=kind, message=message, status_code=status_code)
