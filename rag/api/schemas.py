"""Request bodies of the HTTP API as msgspec Structs: validated on decode, shown in OpenAPI; and
the answer's shape, shown in OpenAPI.

``filter`` (search, ask, chat) narrows retrieval to documents by metadata:
``{"source_prefix", "metadata", "date_from", "date_to", "lang"}``, checked by
:meth:`rag.search.filters.SearchFilter.from_mapping`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, Struct

from rag.answer.source import Source

Question = Annotated[str, Meta(min_length=1, description="Not blank; see RAG_MAX_QUESTION_CHARS")]


class Turn(Struct):
    """One earlier turn of a conversation."""

    role: Literal["user", "assistant"]
    content: str


class SearchIn(Struct):
    """``POST /v1/search``."""

    question: Question
    mode: Literal["hybrid", "fts", "vector"] = "hybrid"
    limit: Annotated[int, Meta(ge=1, le=200)] = 10
    filter: dict[str, Any] | None = None


class AskIn(Struct):
    """``POST /v1/ask``: ``history`` makes follow-up questions work; ``stream`` answers as SSE."""

    question: Question
    history: list[Turn] = []
    stream: bool = False
    filter: dict[str, Any] | None = None


class DocumentIn(Struct):
    """``POST /v1/documents`` as JSON. The same ``source_id`` again replaces the document."""

    source_id: Annotated[str, Meta(min_length=1, max_length=2000)]
    text: Annotated[str, Meta(min_length=1)]
    title: str | None = None
    lang: Annotated[str, Meta(min_length=2, max_length=8)] | None = None
    metadata: dict[str, Any] = {}


class ChatMessage(Struct):
    """An OpenAI chat message; ``content``: a string or a list of ``{"type": "text"}`` parts."""

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None


class ChatIn(Struct):
    """``POST /v1/chat/completions`` (OpenAI-compatible); sampling parameters are ignored."""

    messages: Annotated[list[ChatMessage], Meta(min_length=1)]
    model: str = "rag"
    stream: bool = False
    # not OpenAI's: clients that do not know it never send it
    filter: dict[str, Any] | None = None


# What an answer is (rag.answer.engine.Answer): an answer from sources that passed the judgement;
# no direct answer, with the nearest sources listed as possibly related (rag.answer.related); or
# not in the knowledge base.
AnswerStatus = Literal["answered", "related", "not_found"]


class AnswerOut(Struct):
    """The answer of ``POST /v1/ask`` (``rag ask --json`` and the searched question), also the
    ``answer`` event of a stream and the ``rag`` field of a chat completion.

    ``related``: no direct answer; ``answer`` says so and lists the sources (``asserted``
    false), or is the chat model's answer from them alone (``asserted`` true), to be shown as
    uncertain.
    """

    status: AnswerStatus
    not_found_by: Literal["filter", "llm"] | None
    answer: str
    lang: str
    extractive: bool
    # the text states what the sources say; false for not_found and a related list
    asserted: bool
    citations: list[int]
    # with its evidence: what admitted it (``"related": true`` when it is only near the question)
    sources: list[Source]
    llm_called: bool
    degraded: list[dict[str, str]]
    question: str
