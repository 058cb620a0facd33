"""A real OpenAI-compatible HTTP server on 127.0.0.1 whose replies tests script in advance.

Tests (and later the pipeline tests) queue actions: a reply with chosen text and usage, a delay, an HTTP status
with optional Retry-After, a malformed body, or a hang. Each POST /v1/chat/completions takes the next action;
when the queue is empty the server uses `default` (a reply, unless a test changes it) or a `responder` callable
that sees the request. A request for `n` > 1 choices takes n actions, one per choice, and is billed as OpenAI bills
it: the first action's prompt tokens once, every choice's completion tokens. GET /v1/models lists `model_name`.
Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Action:
    """What the server does for one request."""

    kind: str  # "reply" | "status" | "malformed" | "hang"
    text: str = ""
    prompt_tokens: int = 7
    completion_tokens: int = 5
    delay_s: float = 0.0
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"


def reply(text: str, prompt_tokens: int = 7, completion_tokens: int = 5, delay_s: float = 0.0) -> Action:
    return Action("reply", text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, delay_s=delay_s)


def status(code: int, message: str = "scripted error", retry_after: float | None = None) -> Action:
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Action("status", text=message, status=code, headers=headers)


def malformed() -> Action:
    return Action("malformed")


def hang(seconds: float = 30.0) -> Action:
    return Action("hang", delay_s=seconds)


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class _Listener(ThreadingHTTPServer):
    # http.server's default backlog of 5 drops connections when dozens of concurrent clients connect at once.
    request_queue_size = 128


class ScriptedServer:
    """Start with `start()` (or use as a context manager); `url` is the base URL ending in /v1."""

    def __init__(self, model_name: str = "scripted-model"):
        self.model_name = model_name
        self.default: Action = reply("scripted default reply")
        self.responder: Callable[[Received], Action] | None = None
        self.max_choices: int | None = None  # 1: ignore n, as llama-cpp-python's server and Ollama do
        self.requests: list[Received] = []
        self._queue: deque[Action] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Listener(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *actions: Action) -> None:
        with self._lock:
            self._queue.extend(actions)

    def chat_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases handlers that are hanging
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, received: Received, record: bool = True) -> Action:
        with self._lock:
            if record:
                self.requests.append(received)
            if self._queue:
                return self._queue.popleft()
        return self.responder(received) if self.responder else self.default

    def _choices(self, received: Received, first: Action) -> list[Action]:
        """The actions of every choice: `first`, then one more per further choice the request asked for."""
        asked = received.body.get("n", 1)
        wanted = min(asked, self.max_choices or asked) if isinstance(asked, int) else 1
        return [first, *(self._next(received, record=False) for _ in range(wanted - 1))]


def _completion_body(server: ScriptedServer, actions: list[Action], request: dict[str, Any]) -> dict[str, Any]:
    completion = sum(a.completion_tokens for a in actions)
    return {
        "id": f"chatcmpl-{len(server.requests)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", server.model_name),
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": a.text}, "finish_reason": a.finish_reason}
            for i, a in enumerate(actions)
        ],
        "usage": {
            "prompt_tokens": actions[0].prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": actions[0].prompt_tokens + completion,
        },
    }


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/").endswith("/v1/models"):
                self._send_json(200, {"object": "list", "data": [{"id": server.model_name, "object": "model"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw or b"{}")
            received = Received(self.path, dict(self.headers), body, time.monotonic())
            if not self.path.rstrip("/").endswith("/chat/completions"):
                server.requests.append(received)
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            self._act(server._next(received), received)

        def _act(self, action: Action, received: Received) -> None:
            if action.kind == "hang":
                server._stopping.wait(action.delay_s)
                return self._send_json(504, {"error": {"message": "hung request finally answered"}})
            if action.delay_s:
                server._stopping.wait(action.delay_s)
            if action.kind == "status":
                error = {"error": {"message": action.text, "type": "scripted", "code": action.status}}
                return self._send_json(action.status, error, action.headers)
            if action.kind == "malformed":
                return self._send_raw(200, b'{"id": "chatcmpl-x", "choices": [ {"message": ', "application/json")
            return self._send_json(200, _completion_body(server, server._choices(received, action), received.body))

        def _send_json(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_raw(code, json.dumps(payload).encode(), "application/json", headers)

        def _send_raw(self, code: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout fired); nothing left to tell it

    return Handler
