"""Every secret this process has handed to an adapter call, for the scrubbers that never see
the adapter's own list (pytest's tracebacks: ``pytest_ragv2.plugin.trace_secrets``; log records:
``pytest_ragv2.plugin.log_secrets``).

``secret_policy.secret_values`` remembers what it returns, so a credential made at run time
(a JWT signed from the configured secret) is known as soon as it is used. No imports: the
policy module imports this one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

_LOCK = threading.Lock()
_SEEN: set[str] = set()
_VERSION = [0]  # how many times _SEEN grew: a reader's cache is stale when it differs


def remember(values: Iterable[str]) -> None:
    """Add ``values`` (empty strings ignored) to the process's secrets."""
    found = {value for value in values if value}
    if found - _SEEN:
        with _LOCK:
            _SEEN.update(found)
            _VERSION[0] += 1


def remembered() -> frozenset[str]:
    """Every secret remembered so far in this process."""
    with _LOCK:
        return frozenset(_SEEN)


def version() -> int:
    """A number that changes whenever a secret is added (cheap: no copy, no lock)."""
    return _VERSION[0]
