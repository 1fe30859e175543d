"""The demo reference agent: one turn as a command printing Codex JSON lines.

    python -m ragv2_demo.reference --url http://127.0.0.1:8411 --variant v2 \\
        --file-id guide-produit-nimbus --file-id faq-support "<prompt>"

It behaves like ``codex exec --json`` with one MCP search tool: it asks the demo answer model
(``answer.py``) what to do with the prompt, runs each ``search_knowledge_base`` call it
makes against the demo server's rag_api route ``POST {url}/<variant>/query_multiple`` over
HTTP, gives the model the results as numbered sources (the JSON of
``systems/kb_tool.render_sources``; rag_api's 0-based page and row become 1-based), and
prints the answer. Events on stdout, one JSON object per line::

    {"type": "thread.started", "thread_id": ...}
    {"type": "turn.started"}
    {"type": "item.started",   "item": {"id": "item_0", "type": "mcp_tool_call",
                                        "server": "ragv2-demo", "tool": "search_knowledge_base",
                                        "arguments": {"query": ...}, "status": "in_progress"}}
    {"type": "item.completed", "item": {... "result": {"content": [{"type": "text",
                                        "text": <sources JSON>}]}, "status": "completed"}}
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": ...}}
    {"type": "turn.completed", "usage": {"input_tokens", "cached_input_tokens",
                                         "output_tokens"}}

As with Codex, the usage of a resumed turn is the thread's running total (the counts of
every turn so far), not the turn's own: the command adapter takes the difference.

A search that fails (HTTP error, timeout) is a failed ``mcp_tool_call`` (``error.message``,
status ``failed``) and the model answers without sources; rag_api's 404 "no documents" is an
empty result. Anything unexpected prints ``turn.failed`` and exits 1.

One process is one turn. With ``--state-dir DIR`` the thread's messages (prompts, tool calls
and results, answers) are saved under ``DIR/<thread_id>.json`` after each turn, and a later
turn started with ``--resume <thread_id>`` continues that thread, as ``codex exec resume``
does: the command adapter's ``resume_argv`` runs the turns after the first so, and the
conversation's memory and implicit follow-ups hold. Without them every prompt is answered as
a fresh conversation. The file ids to search come from
``--file-id`` (repeatable, or comma-separated) and ``--corpus DIR`` (every file stem under
it, as the demo server names them). Usage counts whitespace tokens like the demo server.
Only the answer model, the plugin's light contracts (``systems.kb_tool``: the tool, the
sources' JSON; ``systems.upload_names``) and light standard modules are imported, so the
command starts fast: HTTP is spoken over a plain socket (``http://`` only, which is what the
demo server serves), because ``urllib``/``http.client`` pull the ``email`` package, ~50 ms
per turn.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import TYPE_CHECKING, Any

from pytest_ragv2.systems.kb_tool import SEARCH_TOOL, SOURCE_FIELDS, render_error, render_sources
from pytest_ragv2.systems.outputs import RetrievedItem
from pytest_ragv2.systems.upload_names import filename_from_source
from ragv2_demo.answer import answer

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragv2_demo.answer_language import Variant

MCP_SERVER = "ragv2-demo"
CORPUS_SUFFIXES = frozenset({".md", ".pdf", ".docx", ".xlsx", ".json", ".txt"})
NO_DOCUMENTS = "No documents found for the given query"


class SearchError(Exception):
    pass


def _emit(event: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _tokens(text: str) -> int:
    return len(text.split())


def _message_tokens(messages: Sequence[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        total += _tokens(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            total += _tokens(call["function"]["arguments"])
    return total


def corpus_file_ids(directory: str) -> list[str]:
    """File ids of the corpus files under ``directory``, as the demo server names them."""
    ids: set[str] = set()
    for _root, _dirs, files in os.walk(directory):
        for name in files:
            stem, suffix = os.path.splitext(name)
            if suffix.lower() in CORPUS_SUFFIXES and not name.startswith(("_", ".")):
                ids.add(stem)
    return sorted(ids)


def http_post_json(url: str, body: Any, timeout_s: float) -> tuple[int, bytes]:
    """POST ``body`` as JSON to an ``http://`` URL; (status, response body)."""
    if not url.startswith("http://"):
        raise SearchError(f"only http:// URLs are supported: {url}")
    authority, _, path = url[len("http://") :].partition("/")
    host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "80")
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    head = (
        f"POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode("ascii")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s) as sock:
        sock.sendall(head + payload)
        chunks: list[bytes] = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    raw = b"".join(chunks)
    header_block, _, content = raw.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        raise SearchError(f"not an HTTP answer: {raw[:100]!r}") from None
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if headers.get("transfer-encoding", "").lower() == "chunked":
        content = _dechunk(content)
    elif "content-length" in headers and len(content) < int(headers["content-length"]):
        raise SearchError("the answer was cut short")
    return status, content


def _dechunk(data: bytes) -> bytes:
    out: list[bytes] = []
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(rest[:size])
        data = rest[size + 2 :]
    return b"".join(out)


def rag_search(
    url: str, variant: Variant, query: str, file_ids: list[str], k: int, timeout_s: float
) -> list[dict[str, Any]]:
    """The documents rag_api returns for ``query`` (``[]`` on its 404 "no documents")."""
    target = f"{url.rstrip('/')}/{variant}/query_multiple"
    try:
        status, content = http_post_json(
            target, {"query": query, "file_ids": file_ids, "k": k}, timeout_s
        )
    except OSError as exc:
        raise SearchError(f"{type(exc).__name__}: {exc}") from None
    detail = content.decode("utf-8", errors="replace")
    if status == 404 and NO_DOCUMENTS in detail:
        return []
    if status != 200:
        raise SearchError(f"HTTP {status}: {detail[:300]}")
    try:
        payload = json.loads(content)
    except ValueError:
        raise SearchError(f"the answer is not JSON: {detail[:300]}") from None
    if not isinstance(payload, list):
        raise SearchError(f"unexpected answer: {detail[:300]}")
    return [pair[0] for pair in payload if isinstance(pair, list) and pair]


def source_items(documents: Sequence[dict[str, Any]], start: int) -> list[RetrievedItem]:
    """rag_api documents as numbered sources (ranked from ``start``; page and row made
    1-based), for ``kb_tool.render_sources``."""
    items: list[RetrievedItem] = []
    for n, document in enumerate(documents, start=start):
        metadata = document.get("metadata") or {}
        if "filename" not in metadata and isinstance(metadata.get("source"), str):
            metadata = {
                **metadata,
                "filename": filename_from_source(metadata["source"], metadata.get("user_id")),
            }
        fields: dict[str, Any] = {}
        for name in SOURCE_FIELDS:
            value = metadata.get(name)
            if value is None:
                continue
            fields[name] = (
                value + 1 if name in ("page", "row") and isinstance(value, int) else value
            )
        items.append(RetrievedItem(rank=n, text=str(document.get("page_content", "")), **fields))
    return items


def _new_thread_id() -> str:
    thread = os.urandom(16).hex()
    return "-".join((thread[:8], thread[8:12], thread[12:16], thread[16:20], thread[20:]))


def load_thread(state_dir: str, thread_id: str) -> dict[str, Any]:
    """A saved thread: its earlier turns' messages (prompt, tool calls, results, answers) and
    the next source number, so a resumed turn sees the conversation as Codex would."""
    path = os.path.join(state_dir, f"{thread_id}.json")
    with open(path, encoding="utf-8") as stream:
        data: dict[str, Any] = json.load(stream)
    return data


def save_thread(
    state_dir: str,
    thread_id: str,
    messages: list[dict[str, Any]],
    n: int,
    turn_usage: list[dict[str, int]] | None = None,
) -> None:
    """Save the thread; ``turn_usage`` is each turn's own usage, in order (the running
    total a resumed turn reports is their sum)."""
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, f"{thread_id}.json")
    data = {"messages": messages, "next_source": n, "turn_usage": turn_usage or []}
    with open(path, "w", encoding="utf-8") as stream:
        json.dump(data, stream, ensure_ascii=False)


def running_total(turn_usage: Sequence[dict[str, int]]) -> dict[str, int]:
    """The thread's usage so far, as Codex reports it on a resumed turn."""
    total: dict[str, int] = {}
    for usage in turn_usage:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return total


def run_turn(
    prompt: str,
    url: str,
    variant: Variant,
    file_ids: list[str],
    k: int,
    timeout_s: float,
    *,
    state_dir: str | None = None,
    resume: str | None = None,
) -> None:
    """Print the Codex events of one turn (of a resumed thread with ``resume``)."""
    earlier: list[dict[str, Any]] = []
    turn_usage: list[dict[str, int]] = []
    next_source = 1
    if resume is not None:
        if state_dir is None:
            raise ValueError("--resume needs --state-dir")
        thread = load_thread(state_dir, resume)
        earlier, next_source = list(thread["messages"]), int(thread["next_source"])
        turn_usage = list(thread.get("turn_usage", []))
    thread_id = resume or _new_thread_id()
    _emit({"type": "thread.started", "thread_id": thread_id})
    _emit({"type": "turn.started"})
    messages: list[dict[str, Any]] = [*earlier, {"role": "user", "content": prompt}]
    input_tokens = output_tokens = 0
    item_number = 0
    for _ in range(2):  # the model searches once, then answers
        input_tokens += _message_tokens(messages)
        reply = answer(messages, [SEARCH_TOOL], variant)
        output_tokens += _message_tokens([reply])
        calls = reply.get("tool_calls") or []
        if not calls:
            text = str(reply.get("content") or "")
            _emit(
                {
                    "type": "item.completed",
                    "item": {"id": f"item_{item_number}", "type": "agent_message", "text": text},
                }
            )
            messages.append({"role": "assistant", "content": text})
            break
        messages.append(reply)
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            item: dict[str, Any] = {
                "id": f"item_{item_number}",
                "type": "mcp_tool_call",
                "server": MCP_SERVER,
                "tool": call["function"]["name"],
                "arguments": arguments,
                "result": None,
                "error": None,
                "status": "in_progress",
            }
            item_number += 1
            _emit({"type": "item.started", "item": item})
            try:
                documents = rag_search(
                    url, variant, str(arguments.get("query", "")), file_ids, k, timeout_s
                )
            except SearchError as exc:
                content = render_error(str(exc))
                item = {**item, "error": {"message": str(exc)}, "status": "failed"}
            else:
                sources = source_items(documents, next_source)
                content = render_sources(sources, next_source)
                next_source += len(sources)
                result = {"content": [{"type": "text", "text": content}]}
                item = {**item, "result": result, "status": "completed"}
            _emit({"type": "item.completed", "item": item})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    usage = {
        "input_tokens": input_tokens,
        "cached_input_tokens": 0,
        "output_tokens": output_tokens,
    }
    turn_usage.append(usage)
    if state_dir is not None:
        save_thread(state_dir, thread_id, messages, next_source, turn_usage)
    _emit({"type": "turn.completed", "usage": running_total(turn_usage)})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ragv2_demo.reference",
        description="One turn of the demo reference agent, as Codex JSON lines.",
    )
    parser.add_argument("prompt")
    parser.add_argument("--url", required=True, help="the demo server, e.g. http://127.0.0.1:8411")
    parser.add_argument("--variant", choices=("v1", "v2"), default="v2")
    parser.add_argument(
        "--file-id", action="append", default=[], help="a file id to search (repeatable)"
    )
    parser.add_argument("--corpus", action="append", default=[], help="search every file under DIR")
    parser.add_argument("--k", type=int, default=5, help="sources per search (default 5)")
    parser.add_argument("--timeout", type=float, default=30.0, help="per search, seconds")
    parser.add_argument(
        "--state-dir", help="where threads are kept, so that a later turn can resume one"
    )
    parser.add_argument("--resume", metavar="THREAD_ID", help="continue this thread")
    args = parser.parse_args(argv)
    file_ids = [part for value in args.file_id for part in value.split(",") if part]
    for directory in args.corpus:
        file_ids += corpus_file_ids(directory)
    if not file_ids:
        parser.error("no file ids: give --file-id or --corpus")
    variant: Variant = "v1" if args.variant == "v1" else "v2"
    try:
        run_turn(
            args.prompt,
            args.url,
            variant,
            list(dict.fromkeys(file_ids)),
            args.k,
            args.timeout,
            state_dir=args.state_dir,
            resume=args.resume,
        )
    except Exception as exc:  # a bug must still end the turn in Codex's terms
        _emit({"type": "turn.failed", "error": {"message": f"{type(exc).__name__}: {exc}"}})
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
