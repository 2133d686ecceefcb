"""uvicorn's HTTP/1.1 protocol with a deadline on each request's head.

uvicorn closes an idle keep-alive connection, but a client that opens a connection and sends its
request line and headers a byte at a time holds it as long as it likes: one process serves every
caller, so a few hundred such clients exhaust its sockets. :func:`head_timeout_protocol` gives
each request's head (request line and headers) ``seconds`` from the moment the connection opens
or its previous response completes; a head that is not complete by then is answered with a 408
problem and the connection is closed. The body is not timed here: uploads are bounded by size.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from rag.api.problems import PROBLEM_JSON, problem


def _timeout_response() -> bytes:
    response = problem("request-timeout", "the request's line and headers came too slowly")
    body = json.dumps(response.content).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        f"content-type: {PROBLEM_JSON}\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def head_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """An :class:`H11Protocol` whose request heads must arrive within ``seconds``."""

    class HeadTimeoutProtocol(H11Protocol):
        head_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self.head_timer = self.loop.call_later(seconds, self._head_timed_out)

        def _disarm(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def _head_timed_out(self) -> None:
            self.head_timer = None
            # only a connection still waiting for a head: a request being served is not cut
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.write(_timeout_response())
                self.transport.close()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeadTimeoutProtocol
