"""Logging: one line per record, text or JSON, each carrying the id of the request it served.

The HTTP middleware (rag.api.observability) puts the request's id into :data:`request_id`, a
context variable; worker threads inherit it (Litestar copies the context into them), and
:class:`RequestIdFilter` copies it onto every record, so a line logged deep in retrieval names its
request. Records outside a request carry ``-``.

Question and document text stays out of the logs: code that would log one passes it through
:func:`private`, which shows only its length unless ``RAG_LOG_TEXT`` asks for the text itself.

A field can hold what a client sent (the percent-decoded path of the access log, a file name in a
message), so no field may end a line or drive a terminal: the text format writes every control
character escaped (``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\x9b``, ``\\u2028``), continuation
lines of a traceback indented; JSON escapes C0 itself, and DEL, C1 and the Unicode line
separators are written as ``\\u`` escapes too.
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
# C0, DEL, C1 and the Unicode line and paragraph separators (a terminal or a log viewer breaks
# lines at, or interprets, every one of them)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# what json.dumps(ensure_ascii=False) leaves raw of the above
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029]")


def sane_request_id(value: str | None) -> str | None:
    """``value`` if it is usable as a request id (1-128 safe characters), else None."""
    if value and _SANE_ID.match(value):
        return value
    return None


def new_request_id() -> str:
    return uuid.uuid4().hex


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape: one line, inert on a terminal."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


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
        line = json.dumps(out, ensure_ascii=False, default=str)
        return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


class TextFormatter(logging.Formatter):
    """``_TEXT_FORMAT`` with every field's control characters escaped (see the module docstring).

    A traceback keeps its lines, but each of its lines is indented and escaped on its own, so a
    line a client's text broke off cannot pass for a record of its own.
    """

    def __init__(self) -> None:
        super().__init__(_TEXT_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escape_controls(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return _indented(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return _indented(super().formatStack(stack_info))


def _indented(block: str) -> str:
    return "\n".join("  " + escape_controls(line) for line in block.split("\n"))


def make_handler(stream: IO[str] | None, fmt: str) -> logging.Handler:
    """A stream handler in format ``fmt`` ("json" or "text") that stamps request ids."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
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
