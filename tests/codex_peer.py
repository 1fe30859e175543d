"""A deterministic local peer for the real Codex CLI: an OpenAI Responses-API server and a
tiny stdio MCP knowledge-base server. Used to record ``tests/fixtures/codex/`` (see
``tests/codex_record.py``); not imported by the test suite.

    python -m tests.codex_peer serve --port 0 --log requests.jsonl   # prints the port
    python -m tests.codex_peer mcp [--pid-file F]                    # an MCP server on stdio

The Responses server answers ``POST /v1/responses`` with a Server-Sent-Events stream
(``response.created``, ``response.output_item.added``/``done``, ``response.output_text.delta``,
``response.completed`` with ``usage``). What it does depends on the last user message:
``RUN:<cmd>`` calls the shell tool first, ``KB:<query>`` the MCP search tool, ``WEB:<query>``
emits a web search call, ``FAIL`` streams a partial answer then ``response.failed``, ``HTTP500``
answers HTTP 500; otherwise it answers ``Answer <n>: <prompt>``. Token counts are a pure
function of the request (its input items and the answer), and every request is logged with
them as a JSON line, so a recording can be checked against what the model "used".
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KB_SOURCES = {
    "sources": [
        {"n": 1, "file_id": "guide-produit-nimbus", "page": 3, "text": "Nimbus max 16 bar."},
        {"n": 2, "file_id": "faq-support", "text": "Support answers within 4 h."},
    ]
}


def usage_for(request_number: int, input_items: int, answer: str) -> dict[str, Any]:
    """The usage the server reports for one request: deterministic, distinct per request."""
    input_tokens = 1000 + 100 * input_items + request_number
    cached = 0 if request_number == 0 else 512
    output_tokens = 10 + len(answer.split())
    reasoning = 3
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def _user_text(items: list[Any]) -> str:
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            parts = item.get("content") or []
            texts = [p.get("text", "") for p in parts if isinstance(p, dict)]
            text = "\n".join(texts)
            if not text.lstrip().startswith("<"):  # skip Codex's environment-context block
                return text.strip()
    return ""


def _tool_name(tools: list[Any], *, prefix: str = "", wanted: tuple[str, ...] = ()) -> str:
    names = [str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")]
    for name in names:
        if name in wanted or (prefix and name.startswith(prefix)):
            return name
    raise LookupError(f"no tool {wanted or prefix!r} among {names}")


class Peer:
    def __init__(self, log_path: str) -> None:
        self.log_path = log_path
        self.count = 0
        self.lock = threading.Lock()

    def next_number(self) -> int:
        with self.lock:
            number = self.count
            self.count += 1
            return number

    def log(self, record: dict[str, Any]) -> None:
        with self.lock, open(self.log_path, "a", encoding="utf-8") as stream:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")


def plan(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str]:
    """(mode, output items, answer text) for one request."""
    items = body.get("input") or []
    tools = body.get("tools") or []
    prompt = _user_text(items)
    answered_tool = bool(items) and items[-1].get("type", "").endswith("_output")
    if prompt.startswith("HTTP500"):
        return "http500", [], ""
    if prompt.startswith("FAIL"):
        return "failed", [_message("Partial answer before the failure")], ""
    if not answered_tool and prompt.startswith("RUN:"):
        name = _tool_name(tools, wanted=("shell_command", "exec_command", "shell"))
        command = prompt[len("RUN:") :].strip()
        arguments: dict[str, Any] = {"command": command}
        if name == "shell":
            arguments = {"command": ["bash", "-lc", command]}
        elif name == "exec_command":
            arguments = {"cmd": command}
        return "tool", [_call(name, arguments)], ""
    if not answered_tool and prompt.startswith("KB:"):
        namespace = _tool_name(tools, prefix="mcp__")
        call = _call("search", {"query": prompt[len("KB:") :].strip()})
        return "tool", [{**call, "namespace": namespace}], ""
    if not answered_tool and prompt.startswith("WEB:"):
        search = {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": prompt[len("WEB:") :].strip()},
        }
        text = "Searched the web."
        return "answer", [search, _message(text)], text
    text = f"Answer: {prompt}"
    if answered_tool:
        text = "From the tool: 16 bar [1]."
    return "answer", [_message(text)], text


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def make_handler(peer: Peer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            peer.log({"method": "GET", "path": self.path})
            payload = json.dumps({"object": "list", "data": []}).encode()
            self.send_response(200 if self.path.endswith("/models") else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            number = peer.next_number()
            mode, output, text = plan(body)
            usage = usage_for(number, len(body.get("input") or []), text)
            record: dict[str, Any] = {"request": number, "path": self.path, "mode": mode}
            record["prompt"] = _user_text(body.get("input") or [])
            record["tools"] = [t.get("name") for t in body.get("tools") or []]
            if os.environ.get("CODEX_PEER_DUMP"):
                record["body"] = body
            if mode == "http500":
                peer.log(record)
                payload = b'{"error": {"message": "scripted server error"}}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if mode != "failed":
                record["usage"] = usage
            peer.log(record)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            response = {"id": f"resp_{number}", "object": "response", "status": "in_progress"}
            self._event("response.created", {"response": response})
            for index, item in enumerate(output):
                self._event("response.output_item.added", {"output_index": index, "item": item})
                if item["type"] == "message":
                    delta = item["content"][0]["text"]
                    self._event(
                        "response.output_text.delta",
                        {"output_index": index, "item_id": item["id"], "delta": delta},
                    )
                self._event("response.output_item.done", {"output_index": index, "item": item})
            if mode == "failed":
                error = {"code": "server_error", "message": "scripted failure mid-stream"}
                failed = {**response, "status": "failed", "error": error}
                self._event("response.failed", {"response": failed})
            else:
                done = {**response, "status": "completed", "output": output, "usage": usage}
                self._event("response.completed", {"response": done})
            self.wfile.flush()
            self.close_connection = True

        def _event(self, name: str, data: dict[str, Any]) -> None:
            line = json.dumps({"type": name, **data})
            self.wfile.write(f"event: {name}\ndata: {line}\n\n".encode())
            self.wfile.flush()

    return Handler


def serve(port: int, log_path: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), make_handler(Peer(log_path)))
    print(server.server_address[1], flush=True)
    server.serve_forever()


def mcp(pid_file: str | None = None) -> None:
    """A stdio MCP server with one tool, ``search``, answering numbered sources; a query
    containing "slow" takes a minute. With ``pid_file`` it writes its pid, process group and
    session there."""
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as stream:
            stream.write(f"{os.getpid()} {os.getpgrp()} {os.getsid(0)}")
    tool = {
        "name": "search",
        "description": "Search the knowledge base; returns numbered sources.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    }
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        method = message.get("method")
        result: dict[str, Any]
        if method == "initialize":
            result = {
                "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "kb", "version": "1.0"},
            }
        elif method == "tools/list":
            result = {"tools": [tool]}
        elif method == "tools/call":
            if "slow" in json.dumps(message["params"].get("arguments")):
                time.sleep(60)
            text = json.dumps(KB_SOURCES)
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            answer = {"jsonrpc": "2.0", "id": message["id"]}
            answer["error"] = {"code": -32601, "message": f"unknown method {method}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))
        sys.stdout.write("\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[sys.argv.index("--port") + 1]), sys.argv[sys.argv.index("--log") + 1])
    else:
        mcp(sys.argv[sys.argv.index("--pid-file") + 1] if "--pid-file" in sys.argv else None)
