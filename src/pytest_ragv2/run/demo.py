"""The embedded default: with no systems configured, demo-v1 (baseline) against demo-v2.

The demo service is started lazily in a background thread so that building its index
overlaps pytest's collection; whoever first needs its URL waits for it. This module is the
plugin's one bridge to the demo's own package, ``ragv2_demo`` (imported lazily: only when no
system is configured), whose reference runner it starts as ``python -m ragv2_demo.reference``,
and whose document parsers read the corpus for the identifiers it holds
(:func:`corpus_documents`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragv2.config.settings import SystemSettings
from pytest_ragv2.layers.registry import layer_info
from pytest_ragv2.systems.command import PROMPT_PLACEHOLDER, THREAD_PLACEHOLDER, CommandConfig
from pytest_ragv2.systems.http_json import HttpJsonFields, HttpJsonRetrieval
from pytest_ragv2.systems.openai_chat import OpenAIChatConfig
from pytest_ragv2.systems.rag_api import RagApiRetrieval

if TYPE_CHECKING:
    from ragv2_demo.server import DemoServer

DEMO_EXTRA_HINT = (
    "no systems are configured, so pytest-ragv2 runs its embedded demo systems, "
    "which need the demo extra: pip install 'pytest-ragv2[demo]' "
    "(or configure [tool.ragv2.systems])"
)


class DemoUnavailable(RuntimeError):
    pass


def check_demo_importable() -> None:
    try:
        import ragv2_demo.server  # noqa: F401
    except ImportError as exc:
        raise DemoUnavailable(f"{DEMO_EXTRA_HINT} ({exc})") from exc


def demo_systems(
    url: str,
    layer: str | None = "A",
    file_ids: Sequence[str] = (),
    faults: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    corpus: Path | None = None,
    state_dir: Path | None = None,
) -> dict[str, SystemSettings]:
    """The demo systems at ``url``. Layer A compares the two retrieval paths; layer B adds
    each one's chat path (the demo answer model, searching through the harness-executed
    knowledge-base tool) and a Codex-shaped reference runner, a real command, which searches
    the allow-listed ``file_ids`` (with no allow-list: every file of ``corpus``) and, given a
    ``state_dir``, keeps its threads there so that a multi-turn case resumes one thread.

    ``faults`` maps a demo system to a fault spec of the demo server (``"5xx-once"``,
    ``"latency-50,truncate"``, ``"hang-5"``: docs/demo.md) switched on for its retrieval and
    chat paths, for testing how a session records a failing system."""
    faults = {system: spec.replace(" ", "") for system, spec in (faults or {}).items()}

    def rag(variant: str, system: str) -> str:
        spec = faults.get(system)
        return f"{url}/fault/{spec}/{variant}" if spec else f"{url}/{variant}"

    def chat_url(variant: str, system: str) -> str:
        spec = faults.get(system)
        return f"{url}/chat/{variant}/fault/{spec}" if spec else f"{url}/chat/{variant}"

    info = layer_info(layer) if layer is not None else None
    chat = info is not None and info.chat
    descriptors = {"deployment_id": "embedded-demo", "index_version": "corpus-at-start"}
    if chat:
        descriptors["answer_model"] = "demo extractive answer model (deterministic)"
    systems = {
        "demo-v1": SystemSettings(
            role="baseline",
            retrieval=RagApiRetrieval(adapter="rag-api", url=rag("v1", "demo-v1")),
            chat=_demo_chat(chat_url("v1", "demo-v1"), "v1", timeout_s) if chat else None,
            slot="demo-model",
            descriptors={**descriptors, "retrieval": "vector only, fixed-size chunks"},
        ),
        "demo-v2": SystemSettings(
            role="candidate",
            retrieval=v2_search_retrieval(rag("v2", "demo-v2")),
            chat=_demo_chat(chat_url("v2", "demo-v2"), "v2", timeout_s) if chat else None,
            slot="demo-model",
            descriptors={
                **descriptors,
                "retrieval": "exact + BM25 + vector, RRF fusion, rerank; structure-aware chunks",
            },
        ),
    }
    if chat and info is not None and not info.answer_models_only:
        reference = [
            sys.executable,
            "-m",
            "ragv2_demo.reference",
            "--url",
            f"{url}/fault/{faults['demo-ref']}" if faults.get("demo-ref") else url,
            "--variant",
            "v2",
            *(["--file-id", ",".join(file_ids)] if file_ids else []),
            *(["--corpus", str(corpus)] if corpus is not None and not file_ids else []),
            *(["--state-dir", str(state_dir)] if state_dir is not None else []),
        ]
        systems["demo-ref"] = SystemSettings(
            role="reference",
            chat=CommandConfig(
                adapter="command",
                argv=[*reference, PROMPT_PLACEHOLDER],
                resume_argv=(
                    [*reference, "--resume", THREAD_PLACEHOLDER, PROMPT_PLACEHOLDER]
                    if state_dir is not None
                    else None
                ),
                timeout_s=timeout_s,
            ),
            slot="demo-reference",
            descriptors={**descriptors, "runner": "Codex-shaped JSON lines, V2 retrieval"},
        )
    return systems


def v2_search_retrieval(base_url: str) -> HttpJsonRetrieval:
    """Demo V2 is a new retrieval service, not rag_api: its own ``POST /search`` answers
    structure-aware chunks with the section, table and row rag_api's wire has no room for
    (demo V1 keeps rag_api's wire, exactly as the real service sends it)."""
    return HttpJsonRetrieval(
        adapter="http-json",
        url=f"{base_url}/search",
        documents_url=f"{base_url}/documents",
        body={"query": "{query}", "k": "{k}", "file_ids": "{file_ids}"},
        items_path="results",
        fields=HttpJsonFields(
            text="content",
            file_id="doc.id",
            filename="doc.filename",
            page="doc.page",
            section="doc.heading",
            table="doc.table",
            row="doc.row",
            row_key="doc.row_key",
            score="score",
        ),
    )


def _demo_chat(url: str, variant: str, timeout_s: float) -> OpenAIChatConfig:
    return OpenAIChatConfig(
        adapter="openai-chat",
        url=url,
        model=f"demo-{variant}",
        stream=True,
        timeout_s=timeout_s,
    )


STOP_WAIT_S = 10.0
START_ATTEMPTS = 2


class DemoService:
    """Starts the demo server on a free loopback port in a background thread."""

    def __init__(self, corpus: Path) -> None:
        self._corpus = corpus
        self._ready = threading.Event()
        self._server: DemoServer | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="ragv2-demo-start", daemon=True)

    def start(self) -> DemoService:
        self._thread.start()
        return self

    def _start(self) -> None:
        try:
            for attempt in range(START_ATTEMPTS):
                try:
                    self._server = self._started()
                    break
                except SystemError as exc:
                    # CPython 3.11 keeps its AST conversion's recursion depth per
                    # interpreter: a conversion in another thread at the same moment fails
                    # this one ("AST constructor recursion depth mismatch"), and an import
                    # that failed so is rolled back, so a second start is clean
                    if "AST constructor" not in str(exc) or attempt + 1 == START_ATTEMPTS:
                        raise
        except BaseException as exc:  # surfaced to whoever waits for the URL
            self._error = exc
        finally:
            self._ready.set()

    def _started(self) -> DemoServer:
        from ragv2_demo.engine import DemoIndex
        from ragv2_demo.server import DemoServer

        return DemoServer(DemoIndex.from_corpus(self._corpus)).start()

    @property
    def url(self) -> str:
        self._ready.wait()
        if self._server is None:
            raise DemoUnavailable(f"the demo service did not start: {self._error!r}")
        return self._server.url

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """Stop the server once it started; a start still under way after ``wait_s`` is
        left to end with the process (its thread is a daemon). A Ctrl-C or SIGTERM that
        lands inside an import of the main thread can leave that module's import lock held
        for good, and a start importing the same module then never ends."""
        if not self._ready.wait(wait_s):
            return
        if self._server is not None:
            self._server.stop()


def corpus_documents(corpus: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Every document under ``corpus`` as (filename, plain text), read with the demo's
    parsers as its index reads them, and those that could not be read, each as its path
    relative to ``corpus`` with the reason."""
    from ragv2_demo.chunks import IGNORED_FILENAMES, document_text
    from ragv2_demo.parsers import SUPPORTED_SUFFIXES, parse_document

    documents: list[tuple[str, str]] = []
    unread: list[str] = []
    for path in sorted(corpus.rglob("*")):
        if (
            not path.is_file()
            or path.suffix.lower() not in SUPPORTED_SUFFIXES
            or path.name.startswith(("_", "."))
            or path.name in IGNORED_FILENAMES
        ):
            continue
        try:
            documents.append((path.name, document_text(parse_document(path))[0]))
        except Exception as exc:  # one unreadable document must not stop the others
            unread.append(f"{path.relative_to(corpus).as_posix()} ({type(exc).__name__}: {exc})")
    return documents, unread
