"""Logging: one line per record, text or JSON, each carrying the id of the request it served.

The HTTP middleware (rag.api.observability) puts the request's id into :data:`request_id`, a
context variable; worker threads inherit it (Litestar copies the context into them), and
:class:`RequestIdFilter` copies it onto every record, so a line logged deep in retrieval names its
request. Records outside a request carry ``-``.

Question and document text stays out of the logs: code that would log one passes it through
:func:`private`, which shows only its length unless ``RAG_LOG_TEXT`` asks for the text itself.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import json
import logging
import re
import uuid
from typing import IO, Any

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "rag_request_id", default=None
)
# A client's id is kept only when it is short and plain, so it cannot forge log lines or headers.
_SANE_ID = re.compile(r"^[A-Za-z0-9._:/+=@-]{1,128}$")
_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"
# LogRecord attributes that are not "extra" fields
_RESERVED = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id"}
_log_text = False


def sane_request_id(value: str | None) -> str | None:
    """``value`` if it is usable as a request id (1-128 safe characters), else None."""
    if value and _SANE_ID.match(value):
        return value
    return None


def new_request_id() -> str:
    return uuid.uuid4().hex


def private(text: str) -> str:
    """``text`` when text logging is on; otherwise only its length."""
    return repr(text) if _log_text else f"<{len(text)} chars>"


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id`` from the context (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id.get() or "-",
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def make_handler(stream: IO[str] | None, fmt: str) -> logging.Handler:
    """A stream handler in format ``fmt`` ("json" or "text") that stamps request ids."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(_TEXT_FORMAT))
    return handler


def configure(fmt: str, level: int, *, log_text: bool = False) -> None:
    """Route all logging (rag's, uvicorn's, libraries') to stderr in format ``fmt``."""
    global _log_text
    _log_text = log_text
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_rag", False):
            root.removeHandler(h)
    handler = make_handler(None, fmt)
    handler._rag = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
