"""Errors as RFC 9457 problem details: one mapping from error kinds to HTTP, at the edge only.

Every error response is ``application/problem+json`` with ``type``, ``title``, ``status``,
``detail``, ``instance`` (the request path), ``kind`` and ``request_id`` (the one in the
``X-Request-ID`` header and the server's log lines). ``type`` is
``https://rag.example/problems/<kind>``: stable per kind, never dereferenced by rag; ``kind``
repeats its last segment so that clients can switch on it. The kinds of :mod:`rag.errors` keep
their names.

======================  ======  ==========================================================
kind                    status  when
======================  ======  ==========================================================
validation              422     the body or a parameter does not fit the schema or a limit;
                                ``errors`` lists ``{"field", "message"}``
invalid-input           422     the core rejected the input (e.g. an unknown language)
empty-input             422     an empty, blank or binary document
corrupt-input           422     a file its library cannot parse
unsupported-format      415     a file type ingestion cannot read
too-large               413     over ``max_upload_bytes`` (request body or document)
bad-request             400     a body that is not JSON or not multipart as announced
unauthorized            401     no, an unknown or a revoked API key (``WWW-Authenticate``)
not-found               404     no such document, key or route
method-not-allowed      405     the route exists, the method does not
request-timeout         408     a request's line and headers not sent within
                                ``header_timeout`` (rag.api.http_protocol); the connection closes
headers-too-large       431     request headers over 16 KiB in all (rag.api.observability)
database-unavailable    503     PostgreSQL down or every pooled connection busy (``Retry-After``)
retrieval               503     both retrievers failed for one question (``Retry-After``)
embedder                503     the embedding backend failed where nothing could fall back
llm                     502     the chat model failed where nothing could fall back
not-ready               503     ``/readyz``: a check failed; ``checks`` says which
embedding-pending       409     an owner's chunks still wait for vectors (evaluation only)
database, config        500     a server-side fault; details only in the server log
internal                500     an unexpected exception; no traceback leaves the server
======================  ======  ==========================================================
"""

from __future__ import annotations

import logging
import re
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi.datastructures import ResponseSpec

from rag.api.auth import Unauthorized
from rag.errors import (
    ConfigError,
    CorruptInput,
    DatabaseError,
    DatabaseUnavailable,
    EmbedderError,
    EmptyInput,
    InputError,
    LLMError,
    NotFound,
    NotReady,
    RagError,
    RetrievalError,
    TooLarge,
    UnsupportedFormat,
    one_line,
)
from rag.logs import request_id

log = logging.getLogger(__name__)

PROBLEM_BASE = "https://rag.example/problems/"
PROBLEM_JSON = "application/problem+json"
RETRY_AFTER_SECONDS = 2

# kind -> (status, title)
PROBLEMS: dict[str, tuple[int, str]] = {
    "validation": (422, "The request is not valid"),
    InputError.kind: (422, "The input cannot be used"),
    EmptyInput.kind: (422, "The document has no text"),
    CorruptInput.kind: (422, "The file cannot be read"),
    UnsupportedFormat.kind: (415, "The file type is not supported"),
    TooLarge.kind: (413, "The request or document is too large"),
    "bad-request": (400, "The request body cannot be parsed"),
    Unauthorized.kind: (401, "A valid API key is required"),
    NotFound.kind: (404, "Not found"),
    "method-not-allowed": (405, "Method not allowed"),
    "request-timeout": (408, "The request came too slowly"),
    "headers-too-large": (431, "Request header fields too large"),
    DatabaseUnavailable.kind: (503, "The database is unavailable"),
    RetrievalError.kind: (503, "Retrieval failed"),
    EmbedderError.kind: (503, "The embedding model failed"),
    LLMError.kind: (502, "The chat model failed"),
    "not-ready": (503, "The service is not ready"),
    NotReady.kind: (409, "Some chunks still wait for their vectors"),
    DatabaseError.kind: (500, "Database error"),
    ConfigError.kind: (500, "The service is misconfigured"),
    "internal": (500, "Internal server error"),
}
_RETRY = {DatabaseUnavailable.kind, RetrievalError.kind, EmbedderError.kind, "not-ready"}
_STATUS_KIND = {
    400: "bad-request",
    401: Unauthorized.kind,
    404: NotFound.kind,
    405: "method-not-allowed",
    413: TooLarge.kind,
    415: UnsupportedFormat.kind,
    422: "validation",
    503: "not-ready",
}
_MSGSPEC_PATH = re.compile(r"`\$\.?([^`]*)`")


class FieldProblem(msgspec.Struct):
    """One invalid field of a ``validation`` problem."""

    field: str
    message: str


class Problem(msgspec.Struct):
    """An RFC 9457 problem, as every error response is (``application/problem+json``)."""

    type: str
    title: str
    status: int
    detail: str
    kind: str
    instance: str | None = None
    errors: list[FieldProblem] | None = None
    checks: dict[str, Any] | None = None


_WHEN = {
    400: "The body is not JSON (or nested too deeply), or not multipart as announced",
    401: "No, an unknown or a revoked API key",
    404: "No such document",
    413: "The body, or what a file expands to, is over a limit",
    415: "A content or file type that is not supported",
    422: "A field does not fit the schema or a limit; `errors` names it",
    502: "The chat model failed where nothing could fall back",
    503: "The database is down or busy, or retrieval failed; retry after `Retry-After` seconds",
}


V1_ERRORS = (401, 503)  # every /v1 route: the key lookup, the database
QUESTION_ERRORS = (*V1_ERRORS, 400, 413, 422)
ANSWER_ERRORS = (*QUESTION_ERRORS, 502)


def problem_responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI for the error statuses a route answers, each a problem-details body."""
    return {
        status: ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM_JSON,
            description=_WHEN.get(status, PROBLEMS.get(_STATUS_KIND.get(status, ""), ("", ""))[1]),
            generate_examples=False,
        )
        for status in statuses
    }


def problem_type(kind: str) -> str:
    """The ``type`` URI of a problem kind."""
    return PROBLEM_BASE + kind


def problem(
    kind: str,
    detail: str,
    *,
    instance: str | None = None,
    status: int | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response[dict[str, Any]]:
    """A problem-details response of ``kind``."""
    code, title = PROBLEMS.get(kind, (status or 500, "Error"))
    code = status or code
    body: dict[str, Any] = {
        "type": problem_type(kind),
        "title": title,
        "status": code,
        "detail": detail,
        "kind": kind,
    }
    if instance:
        body["instance"] = instance
    if (rid := request_id.get()) is not None:
        body["request_id"] = rid
    body.update(extra)
    all_headers = dict(headers or {})
    if kind in _RETRY:
        all_headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    if kind == Unauthorized.kind:
        all_headers.setdefault("WWW-Authenticate", 'Bearer realm="rag"')
    return Response(body, status_code=code, media_type=PROBLEM_JSON, headers=all_headers)


def field_error(field: str, message: str) -> ValidationException:
    """A 422 naming the offending field."""
    return ValidationException(
        detail=f"{field}: {message}", extra=[{"field": field, "message": message}]
    )


def msgspec_field(message: str) -> str:
    """The field a msgspec validation message points at ("... - at `$.history[0].role`")."""
    m = _MSGSPEC_PATH.search(message)
    if m:
        return m.group(1) or "body"
    m = re.search(r"missing required field `([^`]+)`", message)
    return m.group(1) if m else "body"


def rag_error_handler(request: Request[Any, Any, Any], exc: RagError) -> Response[dict[str, Any]]:
    """RagError subclasses by kind; server-side faults keep their message in the log."""
    kind = (
        exc.kind
        if exc.kind in PROBLEMS
        else (InputError.kind if isinstance(exc, InputError) else "internal")
    )
    status = PROBLEMS[kind][0]
    if status >= 500:
        # A retryable outage is logged where it is noticed (rag.db_health), not once per request.
        level = logging.INFO if kind in _RETRY else logging.ERROR
        log.log(level, "%s %s: %s: %s", request.method, request.url.path, kind, one_line(exc))
        detail = {
            DatabaseUnavailable.kind: "the database is unavailable; retry shortly",
            RetrievalError.kind: "retrieval failed; retry shortly",
        }.get(kind, "the server could not complete the request; see its log")
    else:
        detail = one_line(exc)
    return problem(kind, detail, instance=request.url.path)


def http_error_handler(
    request: Request[Any, Any, Any], exc: HTTPException
) -> Response[dict[str, Any]]:
    """Litestar's own errors (validation, routing, body size) as problem details."""
    status = exc.status_code
    if isinstance(exc, ValidationException) or (status == 400 and isinstance(exc.extra, list)):
        errors = _field_errors(exc.extra)
        if errors:
            return problem(
                "validation",
                exc.detail or "invalid request",
                status=422,
                instance=request.url.path,
                errors=errors,
            )
    if status == 500 and exc.detail == "client disconnected prematurely":
        # an upload cut off mid-body: the client's doing, and nothing was written
        log.info("%s %s: client disconnected mid-body", request.method, request.url.path)
        return problem(
            "bad-request",
            "the client disconnected before the body was complete",
            status=400,
            instance=request.url.path,
        )
    kind = _STATUS_KIND.get(status, "internal" if status >= 500 else "bad-request")
    if status == 413:
        return problem(
            kind, _body_limit_detail(request), instance=request.url.path, headers=exc.headers
        )
    if status >= 500:
        log.error("%s %s: %s", request.method, request.url.path, exc.detail)
        detail = "the server could not complete the request; see its log"
    else:
        detail = exc.detail or PROBLEMS.get(kind, (status, "Error"))[1]
    headers = dict(exc.headers or {})
    return problem(kind, detail, status=status, instance=request.url.path, headers=headers)


def _body_limit_detail(request: Request[Any, Any, Any]) -> str:
    try:
        limit = request.route_handler.resolve_request_max_body_size()
    except Exception:  # noqa: BLE001 - the detail is a courtesy; the status says it all
        limit = None
    if not limit:
        return "the request body is too large"
    return f"the request body is over this route's limit of {limit} bytes"


def unexpected_error_handler(
    request: Request[Any, Any, Any], exc: Exception
) -> Response[dict[str, Any]]:
    """Anything else: logged with its traceback, answered without it."""
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return problem("internal", "unexpected error; see the server log", instance=request.url.path)


def recursion_error_handler(
    request: Request[Any, Any, Any], exc: RecursionError
) -> Response[dict[str, Any]]:
    """A JSON body nested deeper than the decoder recurses is the client's doing: a 400."""
    if "deserializ" in str(exc):  # msgspec: "maximum recursion depth exceeded while deserializing"
        return problem(
            "bad-request",
            "the body is not valid JSON: nested too deeply",
            status=400,
            instance=request.url.path,
        )
    return unexpected_error_handler(request, exc)


def _field_errors(extra: Any) -> list[dict[str, str]]:
    out = []
    for item in extra if isinstance(extra, list) else []:
        if not isinstance(item, dict):
            continue
        message = str(item.get("message", "invalid value"))
        field = item.get("field") or item.get("key")
        if not field or field == "data":  # Litestar names the whole body "data"
            field = msgspec_field(message)
        out.append({"field": str(field), "message": message})
    return out


EXCEPTION_HANDLERS: dict[Any, Any] = {
    RagError: rag_error_handler,
    HTTPException: http_error_handler,
    RecursionError: recursion_error_handler,
    Exception: unexpected_error_handler,
}
