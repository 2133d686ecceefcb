"""A fake OpenAI-compatible chat server on loopback: real HTTP, scripted behaviour, recorded calls.

Modes: ``ok`` (answers citing [1]), ``error`` (HTTP 500), ``garbage`` (200 with a body that is not
JSON), ``slow`` (sleeps ``delay`` seconds first), ``empty`` (an empty answer). Every request body is
kept in ``calls``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.mode = "ok"
        self.delay = 0.0
        self.reply = "Odpověď podle zdroje [1]."
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.calls.append(body)
                if fake.mode == "slow":
                    time.sleep(fake.delay)
                if fake.mode == "error":
                    self._send(500, b'{"error": {"message": "boom"}}')
                    return
                if fake.mode == "garbage":
                    self._send(200, b"<html>not json</html>")
                    return
                text = "" if fake.mode == "empty" else fake.reply
                if body.get("stream"):
                    self._stream(text, body.get("model", "fake"))
                    return
                self._send(200, json.dumps({
                    "id": "fake-1", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }).encode())

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in [text[i : i + 8] for i in range(0, len(text), 8)]:
                    chunk = {"id": "fake-1", "object": "chat.completion.chunk", "created": 0,
                             "model": model,
                             "choices": [{"index": 0, "delta": {"content": piece},
                                          "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                done = {"id": "fake-1", "object": "chat.completion.chunk", "created": 0,
                        "model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
