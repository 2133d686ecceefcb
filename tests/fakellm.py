"""A fake OpenAI-compatible chat server on loopback: real HTTP, scripted behaviour, recorded calls.

Modes: ``ok`` (answers citing [1]), ``error`` (HTTP 500 with ``error_message``), ``garbage`` (200 with a body that is not
JSON), ``slow`` (sleeps ``delay`` seconds first), ``empty`` (an empty answer), ``cut`` (a stream that
breaks after its first pieces). ``respond``, when set, chooses the reply from the request body
(e.g. one reply for a follow-up rewrite, another for an answer). Every request body is kept in
``calls``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose listen backlog holds a load test's burst.

    socketserver listens with a backlog of 5: forty clients connecting at once overflow it, the
    kernel drops their handshakes and some clients fail with a connection error before the fake
    model ever sees them (a real model server listens with a backlog in the hundreds).
    """

    request_queue_size = 256
    daemon_threads = True


class FakeLLM:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.mode = "ok"
        self.delay = 0.0
        self.reply = "Odpověď podle zdroje [1]."
        self.error_message = "boom"
        self.respond: Callable[[dict[str, Any]], str] | None = None
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.calls.append(body)
                if fake.mode == "slow":
                    time.sleep(fake.delay)
                if fake.mode == "error":
                    error = {"error": {"message": fake.error_message}}
                    self._send(500, json.dumps(error).encode())
                    return
                if fake.mode == "garbage":
                    self._send(200, b"<html>not json</html>")
                    return
                text = "" if fake.mode == "empty" else fake.reply
                if fake.respond is not None and fake.mode != "empty":
                    text = fake.respond(body)
                if body.get("stream"):
                    self._stream(text, body.get("model", "fake"), cut=fake.mode == "cut")
                    return
                self._send(
                    200,
                    json.dumps(
                        {
                            "id": "fake-1",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "fake"),
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": {
                                "prompt_tokens": 1,
                                "completion_tokens": 1,
                                "total_tokens": 2,
                            },
                        }
                    ).encode(),
                )

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str, model: str, cut: bool = False) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = [text[i : i + 8] for i in range(0, len(text), 8)]
                for n, piece in enumerate(pieces):
                    if cut and n == 2:
                        self.wfile.write(b'data: {"choices": [{"delta": \n\n')
                        self.wfile.flush()
                        return
                    chunk = {
                        "id": "fake-1",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [
                            {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                        ],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                done = {
                    "id": "fake-1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                }
                self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        self.server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
