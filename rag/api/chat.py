"""Asking: ``POST /v1/ask`` (JSON or server-sent events) and the OpenAI-compatible chat endpoint.

Both hand the question to the engine (:meth:`rag.answer.engine.Engine.ask`, or ``Engine.ask_stream``,
whose events are the sources first, then the answer in pieces, streamed from the chat model when
one is configured, then the complete :class:`~rag.answer.engine.Answer`); this module only puts them into
the HTTP shapes.

``/v1/ask`` with ``stream: true`` sends these SSE events:

- ``sources``: ``{"status", "lang", "question", "sources"}``, before any answer text (``status``
  is ``answered``, ``related`` or ``not_found``, as in the final answer);
- ``delta``: ``{"text"}``, pieces of the answer as a person would read it;
- ``answer``: the complete answer (the ``rag ask --json`` shape). It is authoritative: if the chat
  model fails mid-answer, the deltas end with the extractive fallback and ``answer`` holds only it;
- ``error``: a problem-details body, if something failed after the stream began.

``/v1/chat/completions`` answers in the OpenAI format (``chat.completion`` or a stream of
``chat.completion.chunk`` ending with ``[DONE]``). The content is the answer followed by a list of
the cited sources; the non-standard field ``rag`` carries the sources with their evidence (on the
first and the last chunk when streaming). A ``related`` answer's content is the sentence that there
is no direct answer and the list of the nearest sources, after the chat model's answer from them
when there is one; ``rag.status`` is ``related``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from litestar import Request, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.params import JSONBody
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from rag import metrics
from rag.answer.engine import Answer, AnswerEvent
from rag.answer.followup import useful_history
from rag.answer.related import related_text
from rag.api.auth import Caller
from rag.api.problems import (
    ANSWER_ERRORS,
    V1_ERRORS,
    field_error,
    problem_responses,
    problem_type,
)
from rag.api.schemas import AnswerOut, AskIn, ChatIn, ChatMessage
from rag.api.services import Services
from rag.errors import InputError, QuestionError, one_line
from rag.language.phrases import SOURCES_LABEL
from rag.logs import request_id
from rag.search.filters import SearchFilter
from rag.settings import Settings

log = logging.getLogger(__name__)

MODEL_ID = "rag"


class EventStream(ServerSentEvent):
    """Server-sent events from a handler that may also answer JSON.

    Litestar would label the stream with the handler's media type (JSON); the stream keeps its own.
    """

    def to_asgi_response(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["media_type"] = None
        return super().to_asgi_response(*args, **kwargs)


@dataclass
class StreamingOperation(Operation):
    """OpenAPI for a route whose 200 is JSON, or server-sent events with ``stream: true``."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse):
            ok.content = {
                **(ok.content or {}),
                "text/event-stream": OpenAPIMediaType(
                    schema=Schema(
                        type=OpenAPIType.OBJECT,
                        description="one event, with `stream: true`",
                        properties={
                            "event": Schema(type=OpenAPIType.STRING),
                            "data": Schema(type=OpenAPIType.STRING, description="JSON"),
                        },
                    )
                ),
            }


@contextmanager
def question_field(field: str = "question") -> Iterator[None]:
    """An unusable question (``Engine.validate`` said so) as a 422 naming ``field``."""
    try:
        yield
    except QuestionError as e:
        raise field_error(field, str(e)) from None


def parse_filter(raw: dict[str, Any] | None) -> SearchFilter | None:
    """The request's ``filter`` as a SearchFilter (None when absent or empty); 422 when invalid."""
    if raw is None:
        return None
    try:
        parsed = SearchFilter.from_mapping(raw)
    except InputError as e:
        raise field_error("filter", str(e)) from None
    return None if parsed.empty else parsed


def check_history(
    history: list[dict[str, str]], settings: Settings, field: str = "history"
) -> list[dict[str, str]]:
    """422 naming ``field`` for too many turns or characters; else the turns the answer needs.

    Each turn is cut to what the follow-up rewrite and the answer can use (rag.answer.followup), so a
    long conversation costs no more than a short one once it is accepted.
    """
    if len(history) > settings.max_history:
        raise field_error(
            field, f"{len(history)} earlier turns; the limit is {settings.max_history}"
        )
    chars = sum(len(t["content"]) for t in history)
    if chars > settings.max_history_chars:
        raise field_error(
            field,
            f"the earlier turns hold {chars} characters; the limit is {settings.max_history_chars}",
        )
    return useful_history(history, settings.max_question_chars)


def _sources_view(answer: Answer) -> dict[str, Any]:
    return {
        "status": answer.status,
        "lang": answer.lang,
        "question": answer.question,
        "sources": [s.as_dict() for s in answer.sources],
    }


def answer_view(answer: Answer) -> dict[str, Any]:
    """The complete answer as /v1/ask returns it: ``rag ask --json`` and the searched question."""
    return {**answer.as_dict(), "question": answer.question}


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def _stream_error(e: Exception) -> dict[str, Any]:
    log.error("answer stream failed: %s", one_line(e), exc_info=e)
    return {
        "type": problem_type("internal"),
        "title": "Internal server error",
        "status": 500,
        "detail": "the answer stream failed; see the server log",
        "kind": "internal",
        "request_id": request_id.get(),
    }


def ask_events(events: Iterator[AnswerEvent]) -> Iterator[ServerSentEventMessage]:
    """The SSE events of a streamed ``/v1/ask``; runs in a worker thread, piece by piece."""
    try:
        for kind, value in events:
            if kind == "sources":
                data: Any = _sources_view(value)
            elif kind == "delta":
                data = {"text": value}
            else:
                metrics.record_answer(value)
                data = answer_view(value)
            yield ServerSentEventMessage(data=_json(data), event=kind)
    # Everything is caught: the stream has begun, so the status line cannot change any more,
    # and the thread wrapper would take an escaping ValueError for the end of the stream.
    except Exception as e:  # noqa: BLE001
        yield ServerSentEventMessage(data=_json(_stream_error(e)), event="error")


@post(
    "/ask",
    status_code=200,
    sync_to_thread=True,
    responses={
        200: ResponseSpec(
            data_container=AnswerOut,
            description="The answer (`status`: answered, related or not_found)",
            generate_examples=False,
        ),
        **problem_responses(*ANSWER_ERRORS),
    },
    operation_class=StreamingOperation,
)
def ask(
    data: JSONBody[AskIn], request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> Any:
    """Answer a question from the caller's documents, or say that it is not there.

    ``history`` (earlier turns) lets a follow-up question lean on the previous one. With
    ``stream: true`` the answer comes as server-sent events: ``sources``, ``delta``..., ``answer``.
    """
    caller: Caller = request.user
    history = check_history(
        [{"role": t.role, "content": t.content} for t in data.history], services.settings
    )
    filters = parse_filter(data.filter)
    engine = services.engine(caller)
    with question_field():
        if data.stream:
            events = engine.ask_stream(
                caller.owner_id, data.question, history=history, filters=filters
            )
            return EventStream(ask_events(events))
        answer = engine.ask(caller.owner_id, data.question, history=history, filters=filters)
    metrics.record_answer(answer)
    return answer_view(answer)


# --- OpenAI-compatible ---------------------------------------------------------------------------


def message_text(message: ChatMessage) -> str:
    """A message's text; the text parts of a multi-part content, joined."""
    content = message.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


def split_messages(
    messages: Sequence[ChatMessage], settings: Settings
) -> tuple[str, list[dict[str, str]]]:
    """The question (the last message, from the user) and the earlier user/assistant turns.

    System messages are dropped: the rules of rag's own system prompt are not the client's
    to change.
    """
    last = messages[-1]
    if last.role != "user":
        raise field_error("messages", "the last message must be the user's question")
    question = message_text(last)
    history = [
        {"role": m.role, "content": message_text(m)}
        for m in messages[:-1]
        if m.role in ("user", "assistant")
    ]
    return question, check_history(history, settings, field="messages")


def content_with_sources(answer: Answer) -> str:
    """The answer, followed by its cited sources for chat clients that only show the content."""
    return answer.answer + sources_footer(answer)


def sources_footer(answer: Answer) -> str:
    """The cited sources under their heading. A chat model's related answer is followed by the
    related answer's own text (no direct answer, the sources listed), so that a client showing
    only the content sees that it is uncertain; without the model's text, that text is the
    answer and nothing follows it."""
    if answer.status == "related":
        return "\n\n" + related_text(answer.lang, answer.sources) if answer.asserted else ""
    if answer.status != "answered" or not answer.sources:
        return ""
    numbers = answer.citations or list(range(1, len(answer.sources) + 1))
    lines = []
    for i in numbers:
        s = answer.sources[i - 1]
        lines.append(f"[{i}] {s.source_id}" + (f" — {s.title}" if s.title else ""))
    return f"\n\n{SOURCES_LABEL.get(answer.lang, 'Sources')}:\n" + "\n".join(lines)


def completion(answer: Answer, model: str) -> dict[str, Any]:
    """A non-streamed ``chat.completion``."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content_with_sources(answer)},
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "rag": answer_view(answer),
    }


def completion_chunks(events: Iterator[AnswerEvent], model: str) -> Iterator[str]:
    """The ``data:`` payloads of a streamed ``chat.completion``, ending with ``[DONE]``."""
    head = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, str], finish: str | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _json({**head, "choices": [choice], **extra})

    try:
        for kind, value in events:
            if kind == "sources":
                yield chunk({"role": "assistant", "content": ""}, rag=_sources_view(value))
            elif kind == "delta":
                yield chunk({"content": value})
            else:
                metrics.record_answer(value)
                if footer := sources_footer(value):
                    yield chunk({"content": footer})
                yield chunk({}, "stop", rag=answer_view(value))
    except Exception as e:  # noqa: BLE001 - see ask_events
        problem = _stream_error(e)
        yield _json({"error": {"message": problem["detail"], "type": problem["kind"]}})
    yield "[DONE]"


@post(
    "/chat/completions",
    status_code=200,
    sync_to_thread=True,
    responses=problem_responses(*ANSWER_ERRORS),
    operation_class=StreamingOperation,
)
def chat_completions(
    data: JSONBody[ChatIn], request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> Any:
    """OpenAI-compatible chat: the last user message is the question, earlier turns the context."""
    caller: Caller = request.user
    question, history = split_messages(data.messages, services.settings)
    filters = parse_filter(data.filter)
    engine = services.engine(caller)
    model = data.model or MODEL_ID
    with question_field("messages"):
        if data.stream:
            events = engine.ask_stream(caller.owner_id, question, history=history, filters=filters)
            return EventStream(completion_chunks(events, model))
        answer = engine.ask(caller.owner_id, question, history=history, filters=filters)
    metrics.record_answer(answer)
    return completion(answer, model)


@get("/models", sync_to_thread=False, responses=problem_responses(*V1_ERRORS))
def models() -> dict[str, Any]:
    """The one model this service offers (chat clients list models before they chat)."""
    return {
        "object": "list",
        "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "rag"}],
    }


ROUTES = [ask, chat_completions, models]
