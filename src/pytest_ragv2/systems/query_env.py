"""Secret query parameters (``query_env``): read from the environment, never recorded.

The values travel only in the request ``send_with_retry`` builds (``secret_query``), which
records the parameter names with ``<redacted>`` and scrubs the values from every body and
message. httpx logs each request's full URL at INFO; a filter on its logger redacts the
parameters configured here, so ``--log-level=INFO`` or ``log_cli`` print no value either.
"""

from __future__ import annotations

import logging
import threading
import urllib.parse
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from pytest_ragv2.systems.base import env_secret
from pytest_ragv2.systems.secret_policy import REDACTED

_LOCK = threading.Lock()
_NAMES: set[str] = set()


def query_env_field() -> Any:
    """The ``query_env`` field every adapter that calls a URL declares."""
    return Field(
        default_factory=dict,
        description="query parameter -> name of the environment variable holding its value, "
        "added to every request's query string (a service authenticated by ?key=...); the "
        "values are secrets, redacted from every record as headers_env values are",
    )


def query_from_env(query_env: Mapping[str, str]) -> dict[str, str]:
    """Parameter -> value, each value read from the environment variable the config names
    (a missing one is the run's adapter error, as for headers_env)."""
    if not query_env:
        return {}
    _redact_in_httpx_log(query_env)
    return {
        name: env_secret(variable, f"query parameter {name}")
        for name, variable in query_env.items()
    }


def redact_query(url: str, names: set[str] | frozenset[str]) -> str:
    """``url`` with the values of the query parameters ``names`` replaced."""
    parts = urllib.parse.urlsplit(url)
    if not parts.query:
        return url
    pairs = []
    for pair in parts.query.split("&"):
        name, equals, _ = pair.partition("=")
        secret = equals and urllib.parse.unquote_plus(name) in names
        pairs.append(f"{name}={REDACTED}" if secret else pair)
    return urllib.parse.urlunsplit(parts._replace(query="&".join(pairs)))


class _HttpxLogFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            with _LOCK:
                names = frozenset(_NAMES)
            record.args = tuple(
                redact_query(str(arg), names) if "://" in str(arg) else arg for arg in record.args
            )
        return True


_FILTER = _HttpxLogFilter()


def _redact_in_httpx_log(query_env: Mapping[str, str]) -> None:
    with _LOCK:
        _NAMES.update(query_env)
    logger = logging.getLogger("httpx")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
