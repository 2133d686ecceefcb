"""Request ids, the access log and HTTP metrics: one ASGI layer around the whole application.

:class:`RequestObservation` wraps Litestar's router and its exception handling, so it sees every
request, including the 404s and 405s that never reach a route. For each request it

* takes the client's ``X-Request-ID`` when it is sane (1-128 characters of ``[A-Za-z0-9._:/+=@-]``)
  or makes one, puts it into the logging context (rag.logs) and echoes it in the response header
  (problem details bodies carry it too, see rag.api.problems);
* logs one ``rag.access`` line: method, path, route template, status, milliseconds;
* counts the request and its latency by method, route template and status (rag.metrics), unless
  metrics are off.

``GET /metrics`` renders rag.metrics' registry in the Prometheus text format.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from litestar import Response, get
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from rag.api.problems import PROBLEM_JSON, problem
from rag.logs import new_request_id, request_id, sane_request_id
from rag.metrics import HTTP_LATENCY, HTTP_REQUESTS, REGISTRY

access_log = logging.getLogger("rag.access")

HEADER = b"x-request-id"
# uvicorn's h11 parser bounds only headers that arrive in pieces (16 KiB); all at once it takes
# any size, and every one of them is copied into each request's scope
MAX_HEADER_BYTES = 16 * 1024
# what uvicorn is told to buffer of a request's head: over MAX_HEADER_BYTES and under this,
# however it arrives, the answer is this layer's 431 rather than h11's bare 400
H11_HEAD_BYTES = 128 * 1024
_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


class RequestObservation:
    """ASGI middleware: request id, access log line, request metrics."""

    def __init__(self, app: Any, *, metrics: bool) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for name, value in scope.get("headers", ()):
            if name == HEADER:
                given = sane_request_id(value.decode("latin-1"))
                break
        rid = given or new_request_id()
        token = request_id.set(rid)
        status = 500  # what a response that never started counts as
        started = time.perf_counter()

        async def send_with_id(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != HEADER]
                message = {**message, "headers": [*headers, (HEADER, rid.encode("ascii"))]}
            await send(message)

        try:
            if "\x00" in scope.get("path", ""):
                # names no route nor file, and the static files' os.stat() raises on it
                await _send(send_with_id, problem("not-found", "no such path"))
            elif (size := _header_bytes(scope)) > MAX_HEADER_BYTES:
                detail = f"{size} bytes of request headers; the limit is {MAX_HEADER_BYTES}"
                await _send(send_with_id, problem("headers-too-large", detail))
            else:
                await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            method = scope.get("method", "GET")
            method = method if method in _METHODS else "OTHER"
            # the template, not the path: /v1/documents/{ref:str} is one series, not one per id
            route = scope.get("path_template") or "unmatched"
            if self.metrics:
                HTTP_REQUESTS.labels(method, route, str(status)).inc()
                HTTP_LATENCY.labels(method, route, str(status)).observe(seconds)
            access_log.info(
                "%s %s %s %.1f ms",
                method,
                scope.get("path", ""),
                status,
                seconds * 1000,
                extra={
                    "method": method,
                    "route": route,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                },
            )
            request_id.reset(token)


def _header_bytes(scope: Any) -> int:
    return sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))


async def _send(send: Any, response: Response[Any]) -> None:
    body = json.dumps(response.content, ensure_ascii=False).encode()
    headers = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@get("/metrics", sync_to_thread=False, include_in_schema=False)
def metrics() -> Response[bytes]:
    """Prometheus metrics (text exposition format)."""
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
