"""Errors raised by rag's core; mapped to messages only at the edges (CLI, HTTP).

    RagError
    ├── ConfigError          a setting is missing or malformed
    ├── DatabaseError        PostgreSQL unreachable, extension missing, migration failed
    │   └── DatabaseUnavailable   the server is down or the pool is exhausted (retry later)
    ├── InputError           the caller's input is unusable (HTTP 422)
    │   ├── QuestionError         an empty or overlong question (HTTP names its field)
    │   ├── UnsupportedFormat     a file type ingestion cannot read
    │   ├── EmptyInput            an empty, blank or binary document
    │   ├── TooLarge              over a size limit (HTTP 413)
    │   └── CorruptInput          a file its library cannot parse (bad PDF, invalid UTF-8, bad JSONL)
    ├── NotFound             a document, owner or key that does not exist (HTTP 404)
    ├── Unauthorized         no valid API key where one is required (HTTP 401)
    ├── EmbedderError        the embedding backend failed or timed out
    ├── NotReady             an owner's chunks still wait for vectors (evaluation refuses)
    ├── RetrievalError       both retrievers failed for one question
    └── LLMError             the chat model failed; callers fall back to the extractive answer

"Not in the knowledge base" is an ordinary answer, never an error.

Messages of caught exceptions are quoted with :func:`one_line` (the whole message, for logs,
``degraded`` entries and problem details) or :func:`short_reason` (a third-party library's
message inside one of rag's own, never empty and bounded).
"""

from __future__ import annotations


class RagError(Exception):
    """Base class of every error rag raises on purpose."""

    kind = "rag-error"


class ConfigError(RagError):
    kind = "config"


class DatabaseError(RagError):
    kind = "database"


class DatabaseUnavailable(DatabaseError):
    kind = "database-unavailable"


class InputError(RagError):
    kind = "invalid-input"


class QuestionError(InputError):
    pass


class UnsupportedFormat(InputError):
    kind = "unsupported-format"


class EmptyInput(InputError):
    kind = "empty-input"


class TooLarge(InputError):
    kind = "too-large"


class CorruptInput(InputError):
    kind = "corrupt-input"


class NotFound(RagError):
    kind = "not-found"


class Unauthorized(RagError):
    kind = "unauthorized"


class EmbedderError(RagError):
    kind = "embedder"


class NotReady(RagError):
    kind = "embedding-pending"


class RetrievalError(RagError):
    kind = "retrieval"


class LLMError(RagError):
    kind = "llm"


def one_line(e: BaseException) -> str:
    """The exception's message with every run of whitespace (newlines too) made one space."""
    return " ".join(str(e).split())


def short_reason(e: BaseException, limit: int = 300) -> str:
    """The message on one line and at most ``limit`` characters; the type's name if it is empty."""
    return (one_line(e) or type(e).__name__)[:limit]
