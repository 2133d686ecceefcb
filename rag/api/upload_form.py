"""A ``multipart/form-data`` upload read part by part: the file's bytes and the text parts.

Litestar's form parser decodes every text part with the charset the part declares and lets the
decoding error escape (a 500 that names no field); here a text part must be UTF-8, and one that
is not is a 422 naming its part. The file part is kept in memory as it arrives: ingestion reads
all of it anyway, and the request's size limit (Litestar's, applied to the stream) bounds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar.exceptions import ClientException
from multipart import (  # type: ignore[import-untyped]
    MultipartSegment,
    ParserError,
    ParserLimitReached,
    PushMultipartParser,
)

from rag.api.problems import field_error

# No text part (source_id, title, lang) is worth more; the document checks refuse far less.
MAX_TEXT_PART_BYTES = 64 * 1024
MAX_PARTS = 100


@dataclass
class UploadForm:
    """The ``file`` part (its name and bytes) and the first value of every text part."""

    filename: str | None = None
    data: bytes = b""
    fields: dict[str, str] = field(default_factory=dict)


async def read_upload_form(request: Any) -> UploadForm:
    """Parse the request's multipart body.

    Raises:
        ClientException: the body is not multipart/form-data (400); a text part is not UTF-8
            or is too large, or there is no file part (422 naming the part).
    """
    boundary = request.content_type[1].get("boundary")
    if not boundary:
        raise ClientException("multipart boundary missing in Content-Type")
    form = UploadForm()
    file_seen = False
    parts: list[tuple[MultipartSegment, bytearray]] = []
    try:
        with PushMultipartParser(boundary.encode("latin-1"), max_segment_count=MAX_PARTS) as parser:
            async for chunk in request.stream():
                _feed(parser, chunk, parts)
            _feed(parser, b"", parts)
    except (ParserError, ParserLimitReached, UnicodeEncodeError) as e:
        raise ClientException(f"not a readable multipart/form-data body ({e})") from None
    for segment, body in parts:
        if segment.filename is not None and segment.name == "file" and not file_seen:
            file_seen = True
            form.filename, form.data = segment.filename or None, bytes(body)
        elif segment.filename is None and segment.name not in form.fields:
            form.fields[segment.name] = _text(segment.name, body)
    if not file_seen:
        raise field_error("file", "a multipart upload needs a 'file' part")
    return form


def _feed(
    parser: PushMultipartParser, chunk: bytes, parts: list[tuple[MultipartSegment, bytearray]]
) -> None:
    for event in parser.parse(chunk):
        if isinstance(event, MultipartSegment):
            parts.append((event, bytearray()))
        elif event:
            segment, body = parts[-1]
            body += event
            if segment.filename is None and len(body) > MAX_TEXT_PART_BYTES:
                raise field_error(segment.name, f"more than {MAX_TEXT_PART_BYTES} bytes")


def _text(name: str, body: bytearray) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise field_error(name, f"is not valid UTF-8 (byte offset {e.start})") from None
