"""Shared fixtures: a small evaluation project written into a pytester directory."""

from __future__ import annotations

import contextlib
import shutil
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# In-process pytester runs drop the modules a run imported. numpy cannot be loaded twice in
# one process, and httpx maps httpcore's exceptions through a table it fills once: a second
# httpcore module would raise exceptions that table does not know. So everything the plugin
# imports lazily is loaded here, once, before any pytester run.
import httpcore  # noqa: F401
import matplotlib.backends.backend_svg  # report.html's plots
import matplotlib.figure  # noqa: F401
import pytest
from hypothesis import settings

import pytest_ragv2.plugin.activate
import pytest_ragv2.plugin.controller
import pytest_ragv2.plugin.html  # noqa: F401
from tests.browser import browser_page, chromium_browser, page_errors  # noqa: F401

# No test asserts on the wall clock: Hypothesis's 200 ms deadline per example failed tests
# on a loaded machine (the first example of a run pays for imports). Speed is measured in
# benchmarks/, never here.
settings.register_profile("ragv2", deadline=None)
settings.load_profile("ragv2")

try:  # the demo extra: numpy-based engine and document parsers
    import ragv2_demo.engine
    import ragv2_demo.server  # noqa: F401
except ImportError:  # pragma: no cover - the demo extra is part of the test extra
    pass

REPO_ROOT = Path(__file__).resolve().parent.parent

SYSTEMS_MODULE = '''
"""In-process systems for plugin tests: answers are looked up by a word of the query."""

ITEMS = {
    "pressure": [
        {"file_id": "datasheet", "filename": "datasheet.pdf", "page": 2, "text": "max 16 bar"},
        {"file_id": "manual", "filename": "manual.docx", "section": "3 Safety", "text": "x"},
    ],
    "druck": [
        {"file_id": "datasheet", "filename": "datasheet.pdf", "page": 2, "text": "max 16 bar"},
    ],
    "part": [
        {"file_id": "parts", "filename": "parts.xlsx", "table": "Parts", "row": 4,
         "row_key": "NX-450B", "text": "NX-450B | seal kit"},
    ],
    "teil": [
        {"file_id": "parts", "filename": "parts.xlsx", "table": "Parts", "row": 4,
         "row_key": "NX-450B", "text": "NX-450B | seal kit"},
    ],
}


def _lookup(query):
    for word, items in ITEMS.items():
        if word in query.lower():
            return [dict(item) for item in items]
    return []


def good(query, k, **options):
    return _lookup(query)[:k]


def weak(query, k, **options):
    # finds the right document but never the right page or row
    items = []
    for item in _lookup(query):
        item = dict(item)
        item.pop("page", None)
        item.pop("row", None)
        item.pop("row_key", None)
        items.append(item)
    return [{"file_id": "noise", "filename": "noise.md", "text": "noise"}] + items[: k - 1]


def leaky(query, k, **options):
    return [{"file_id": "secret", "filename": "secret.pdf", "text": "s"}] + _lookup(query)[: k - 1]


def broken(query, k, **options):
    raise RuntimeError("index offline")


def crashing(query, k, **options):
    # the worker process dies (an OOM kill, a segfault in a native library) on one query
    import os

    if "teil" in query.lower():
        os._exit(1)
    return _lookup(query)[:k]


CALLS = []


def interrupting(query, k, **options):
    # the operator presses Ctrl-C during the third call of this system
    CALLS.append(query)
    if len(CALLS) == 3:
        raise KeyboardInterrupt
    return _lookup(query)[:k]
'''

DEVELOPMENT_CASES = """\
- id: C01
  category: technical_table
  prompt_en: "What is the maximum pressure?"
  prompt_de: "Wie hoch ist der maximale Druck?"
  required_evidence:
    - file_id: datasheet
      filename: datasheet.pdf
      page: 2
- id: C02
  category: exact_lookup
  prompt_en: "Which part is the seal kit?"
  prompt_de: "Welches Teil ist der Dichtsatz?"
  required_evidence:
    - file_id: parts
      table: Parts
      row: NX-450B
- id: C03
  category: safe_no_answer
  prompt_en: "How many customers in Japan?"
  required_evidence: []
  safe_refusal_expected: true
"""

HOLDOUT_CASES = """\
- id: H01
  category: technical_table
  prompt_en: "Holdout pressure question"
  required_evidence:
    - file_id: datasheet
      page: 2
"""

ALLOWLIST = """\
files:
  - {file_id: datasheet, filename: datasheet.pdf}
  - {file_id: manual, filename: manual.docx}
  - {file_id: parts, filename: parts.xlsx}
  - {file_id: noise, filename: noise.md}
"""


def pyproject(baseline: str = "weak", candidate: str = "good", extra: str = "") -> str:
    return textwrap.dedent(
        f"""\
        [tool.pytest.ini_options]
        pythonpath = ["."]

        [tool.ragv2]
        {extra}

        [tool.ragv2.systems.v1]
        role = "baseline"
        retrieval = {{adapter = "python", callable = "ragsystems:{baseline}"}}
        descriptors = {{index_version = "v1-2026-11"}}

        [tool.ragv2.systems.v2]
        role = "candidate"
        retrieval = {{adapter = "python", callable = "ragsystems:{candidate}"}}
        """
    )


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A small evaluation project: two case files, gold allow-list, two python systems."""
    pytester.makepyfile(ragsystems=SYSTEMS_MODULE)
    pytester.mkdir("cases")
    pytester.mkdir("gold")
    (pytester.path / "cases" / "development.yaml").write_text(DEVELOPMENT_CASES)
    (pytester.path / "cases" / "holdout.yaml").write_text(HOLDOUT_CASES)
    (pytester.path / "gold" / "allowlist.yaml").write_text(ALLOWLIST)
    (pytester.path / "pyproject.toml").write_text(pyproject())
    return pytester


@pytest.fixture
def bundled(pytester: pytest.Pytester) -> pytest.Pytester:
    """The bundled benchmark (cases, gold, corpus) in a pytester directory, demo systems."""
    for name in ("cases", "gold", "corpus"):
        shutil.copytree(REPO_ROOT / name, pytester.path / name)
    (pytester.path / "pyproject.toml").write_text('[tool.ragv2]\ncorpus = "corpus"\n')
    return pytester


class QuietHTTPServer(ThreadingHTTPServer):
    """A loopback test server that does not print a client hanging up (a timeout test, a
    cancelled stream): only unexpected handler errors reach the output."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a loopback port for the block: its base URL."""
    server = QuietHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
