"""``/v1/documents``: add (JSON or a file upload), list, show and delete the caller's documents.

Adding has the CLI's semantics: the same ``source_id`` with unchanged content is skipped, changed
content replaces the document atomically. A multipart upload takes a ``file`` part in any format
ingestion reads (txt, md, html, pdf, docx, jsonl) and optional ``source_id`` (default: the file
name), ``title`` and ``lang`` parts; a JSONL file adds one document per line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any

import msgspec
from litestar import HttpMethod, Request, Response, delete, get, post, route
from litestar.concurrency import sync_to_thread
from litestar.di import NamedDependency
from litestar.exceptions import ClientException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import (
    OpenAPIFormat,
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    RequestBody,
    Schema,
)
from litestar.params import FromPath, Parameter

from rag.api.auth import Caller
from rag.api.problems import V1_ERRORS, field_error, msgspec_field, problem_responses
from rag.api.schemas import DocumentIn
from rag.api.services import Services
from rag.api.upload_form import read_upload_form
from rag.errors import EmptyInput, InputError, NotFound, TooLarge, UnsupportedFormat
from rag.ingest.document_fields import (
    MAX_SOURCE_ID_CHARS,
    MAX_TITLE_CHARS,
    InvalidField,
    check_lang,
    check_metadata,
    check_source_id,
    check_title,
)
from rag.ingest.formats import ExtractLimits, clean_text
from rag.ingest.loaders import LoadedDocument, LoadFailure, load_bytes
from rag.ingest.memory import TRIM_AFTER_CHARS, release_memory
from rag.settings import Settings
from rag.store import delete_document, document_id, get_document, list_documents

_decoder = msgspec.json.Decoder(DocumentIn)


@dataclass
class AddDocumentOperation(Operation):
    """OpenAPI for a route that reads its body itself: JSON or a multipart upload."""

    def __post_init__(self) -> None:
        string, obj = OpenAPIType.STRING, OpenAPIType.OBJECT
        source_id = Schema(
            type=string,
            min_length=1,
            max_length=MAX_SOURCE_ID_CHARS,
            pattern=r"\S",
            description="Not blank; no control characters. The same id again replaces.",
        )
        title = Schema(type=string, max_length=MAX_TITLE_CHARS)
        lang = Schema(
            type=string,
            pattern="^[A-Za-z]{2,3}$",
            description="A language code rag keys words for (cs, sk, pl, de, ru, en ...); "
            "unset: detected",
        )
        document = Schema(
            type=obj,
            required=["source_id", "text"],
            properties={
                "source_id": source_id,
                "text": Schema(type=string, min_length=1),
                "title": Schema(one_of=[title, Schema(type=OpenAPIType.NULL)]),
                "lang": Schema(one_of=[lang, Schema(type=OpenAPIType.NULL)]),
                "metadata": Schema(type=obj, description="At most 64 KiB of JSON, 16 levels"),
            },
            description=DocumentIn.__doc__,
        )
        upload = Schema(
            type=obj,
            required=["file"],
            properties={
                "file": Schema(type=string, format=OpenAPIFormat.BINARY),
                "source_id": source_id,
                "title": title,
                "lang": lang,
            },
        )
        self.request_body = RequestBody(
            required=True,
            content={
                "application/json": OpenAPIMediaType(schema=document),
                "multipart/form-data": OpenAPIMediaType(schema=upload),
            },
        )


def _json_documents(body: bytes, max_bytes: int) -> list[LoadedDocument | LoadFailure]:
    try:
        doc = _decoder.decode(body)
    except msgspec.ValidationError as e:
        raise field_error(msgspec_field(str(e)), str(e)) from None
    except msgspec.DecodeError as e:
        raise ClientException(f"the body is not valid JSON: {e}") from None
    except RecursionError:
        raise ClientException("the body is not valid JSON: nested too deeply") from None
    size = len(doc.text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise TooLarge(f"text is {size} bytes; the limit is {max_bytes} bytes")
    try:
        source_id = check_source_id(doc.source_id)
        title = check_title(doc.title)
        lang = check_lang(doc.lang)
        metadata = check_metadata(dict(doc.metadata))
    except InvalidField as e:
        raise field_error(e.field, e.message) from None
    text = clean_text(doc.text)
    if not text:
        raise EmptyInput(f"{source_id}: text has no visible characters")
    return [LoadedDocument(source_id, title, text, lang, metadata, source_id)]


async def _upload(request: Request[Any, Any, Any]) -> tuple[bytes, str, dict[str, str]]:
    """The uploaded file's bytes and name, and the optional text parts."""
    form = await read_upload_form(request)
    fields = {k: v.strip() for k in ("source_id", "title", "lang") if (v := form.fields.get(k))}
    try:
        if "source_id" in fields:
            check_source_id(fields["source_id"])
        check_title(fields.get("title"))
        if lang := check_lang(fields.get("lang")):
            fields["lang"] = lang
        else:
            fields.pop("lang", None)
        check_source_id(form.filename or "upload")
    except InvalidField as e:
        field = "file" if e.field == "source_id" and "source_id" not in fields else e.field
        raise field_error(field, e.message) from None
    return form.data, form.filename or "upload", fields


def _uploaded_documents(
    data: bytes, filename: str, fields: dict[str, str], settings: Settings
) -> list[LoadedDocument | LoadFailure]:
    items = load_bytes(
        data,
        filename,
        max_bytes=settings.max_upload_bytes,
        source_id=fields.get("source_id"),
        limits=ExtractLimits.of(settings),
    )
    overrides: dict[str, Any] = {k: v for k, v in fields.items() if k in ("title", "lang")}
    return [
        dataclasses.replace(i, **overrides) if isinstance(i, LoadedDocument) else i for i in items
    ]


def _add(
    services: NamedDependency[Services],
    caller: Caller,
    load: Callable[[], list[LoadedDocument | LoadFailure]],
) -> Response[Any]:
    """Parse (PDF, DOCX ... take CPU time) and ingest, in a worker thread.

    A large ingest frees hundreds of MB when it ends, which malloc would keep (rag.ingest.memory).
    """
    items = load()
    failures = [i for i in items if isinstance(i, LoadFailure)]
    if failures and len(failures) == len(items):
        raise failures[0].error  # nothing to add: answer with the (first) reason
    chars = sum(len(i.text) for i in items if isinstance(i, LoadedDocument))
    try:
        summary = services.ingest(caller, items)
    finally:
        if chars >= TRIM_AFTER_CHARS:
            del items  # the documents' text goes too
            release_memory()
    if summary.failed and not (summary.added or summary.replaced or summary.unchanged):
        raise InputError(summary.failures[0]["error"])
    status = 201 if summary.added or summary.replaced else 200
    return Response(summary.as_dict(), status_code=status)


@post(
    "/documents",
    operation_class=AddDocumentOperation,
    responses={
        200: ResponseSpec(dict[str, Any], description="Every document was unchanged"),
        **problem_responses(*V1_ERRORS, 400, 413, 415, 422),
    },
)
async def add_document(
    request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> Response[Any]:
    """Add or replace a document: JSON ``{source_id, text, title?, lang?, metadata?}`` or a file.

    Answers 201 when something was added or replaced, 200 when every document was unchanged.
    """
    caller: Caller = request.user
    max_bytes = services.settings.max_upload_bytes
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    load: Callable[[], list[LoadedDocument | LoadFailure]]
    if content_type == "multipart/form-data":
        data, filename, fields = await _upload(request)
        load = partial(_uploaded_documents, data, filename, fields, services.settings)
    elif content_type in ("application/json", ""):
        load = partial(_json_documents, await request.body(), max_bytes)
    else:
        raise UnsupportedFormat(f"send application/json or multipart/form-data, not {content_type}")
    return await sync_to_thread(_add, services, caller, load)


@get("/documents", sync_to_thread=True, responses=problem_responses(*V1_ERRORS, 400, 422))
def documents_list(
    request: Request[Caller, Any, Any],
    services: NamedDependency[Services],
    after: Annotated[int, Parameter(ge=0, description="Show documents after this id.")] = 0,
    limit: Annotated[int, Parameter(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """The caller's documents by id; pass the last id as ``after`` for the next page."""
    caller: Caller = request.user
    with services.scoped(caller).connection() as conn:
        rows = list_documents(conn, caller.owner_id, after=after, limit=limit)
    next_after = rows[-1]["document_id"] if len(rows) == limit else None
    return {"documents": rows, "next_after": next_after}


def _find(
    conn: Any, owner_id: int, path: str, action: Callable[[Any, int, str], dict[str, Any]]
) -> dict[str, Any]:
    """``action`` on the document a ``{ref:path}`` parameter names.

    The router collapses slashes, so a source_id stored with a leading one ("/srv/kb/a.md", as
    ``rag ingest`` once stored absolute paths) is asked for as "srv/kb/a.md": when no document
    has that id, the one with the slash is meant.
    """
    ref = path.lstrip("/")
    try:
        return action(conn, owner_id, ref)
    except NotFound:
        if document_id(ref) is not None:
            raise
        try:
            return action(conn, owner_id, "/" + ref)
        except NotFound:
            raise NotFound(f"no document {ref!r}") from None


@get(
    "/documents/{ref:path}",
    sync_to_thread=True,
    responses=problem_responses(*V1_ERRORS, 400, 404),
)
def documents_show(
    ref: FromPath[str], request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> dict[str, Any]:
    """One document, by numeric id or source_id."""
    caller: Caller = request.user
    with services.scoped(caller).connection() as conn:
        return _find(conn, caller.owner_id, ref, get_document)


@delete(
    "/documents/{ref:path}",
    status_code=200,
    sync_to_thread=True,
    responses=problem_responses(*V1_ERRORS, 400, 404),
)
def documents_delete(
    ref: FromPath[str], request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> dict[str, Any]:
    """Delete a document, its chunks and their statistics, in one transaction."""
    caller: Caller = request.user
    with services.scoped(caller).connection() as conn:
        return {"deleted": _find(conn, caller.owner_id, ref, delete_document)}


def _options(path: str, handlers: list[HTTPRouteHandler]) -> HTTPRouteHandler:
    """An OPTIONS handler for ``path`` that names every method its handlers serve.

    Litestar builds the automatic one with the first handler registered for a path only, so
    ``OPTIONS /v1/documents`` would leave out GET; this one is registered first instead.
    """
    methods = {"OPTIONS"} | {m for h in handlers if path in h.paths for m in h.http_methods}
    allow = ", ".join(sorted(methods))

    def options() -> Response[None]:
        return Response(None, status_code=204, headers={"Allow": allow})

    return route(
        path,
        http_method=[HttpMethod.OPTIONS],
        include_in_schema=False,
        sync_to_thread=False,
        name=f"options {path}",
    )(options)


_HANDLERS = [add_document, documents_list, documents_show, documents_delete]
ROUTES = [_options(p, _HANDLERS) for p in ("/documents", "/documents/{ref:path}")] + _HANDLERS
