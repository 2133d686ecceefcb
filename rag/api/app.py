"""The HTTP service: ``create_app()`` builds the Litestar application that ``rag serve`` runs.

Routes (OpenAPI at ``/schema/openapi.json``, docs pages under ``/schema``):

- ``GET /healthz`` (process up), ``GET /readyz`` (database, migrations, embedder);
- ``GET /metrics``: Prometheus metrics, unless ``RAG_METRICS`` is off (rag.api.observability);
- ``POST /v1/search``, ``POST /v1/ask``, ``POST /v1/chat/completions``, ``GET /v1/models``;
- ``POST|GET /v1/documents``, ``GET|DELETE /v1/documents/{id or source_id}``, ``GET /v1/stats``;
- ``GET /``: the chat page when ``rag/static/index.html`` exists; its assets under ``/static``.

Every ``/v1`` request is authenticated by :class:`ApiKeyMiddleware` (rag.api.auth): a Bearer key maps
to its owner; without keys in the database the service is single-owner. Each handler then works
through the caller's :class:`~rag.api.auth.OwnerDatabase`, so row-level security backs up the
``owner_id`` in every query. Blocking work (the pool, embedding, the LLM) runs in worker threads:
sync handlers with ``sync_to_thread=True``, and streamed answers are iterated piece by piece in
threads too. Errors are problem details (rag.api.problems).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from litestar import Litestar, Request, Response, Router, get, post
from litestar.concurrency import sync_to_thread
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.middleware.base import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.params import JSONBody
from litestar.response import File
from litestar.static_files import create_static_files_router

from rag import metrics
from rag.answer.engine import AnswerWriter
from rag.answer.llm import make_llm
from rag.api import chat as api_chat
from rag.api import documents as api_documents
from rag.api.auth import Caller, bearer_token
from rag.api.chat import parse_filter, question_field
from rag.api.observability import RequestObservation
from rag.api.observability import metrics as metrics_route
from rag.api.problems import (
    EXCEPTION_HANDLERS,
    QUESTION_ERRORS,
    V1_ERRORS,
    problem,
    problem_responses,
)
from rag.api.schemas import SearchIn
from rag.api.services import Services
from rag.db import Database
from rag.embedders import Embedder, make_embedder
from rag.ingest.embed_queue import embedding_status
from rag.search.rerank import Reranker, make_reranker
from rag.settings import Settings
from rag.store import owner_stats

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
# Room for the multipart framing around a file of max_upload_bytes.
MULTIPART_SLACK = 64 * 1024
_UNSET: Any = object()


class ApiKeyMiddleware(AbstractAuthenticationMiddleware):
    """Sets ``request.user`` to the :class:`~rag.api.auth.Caller`; raises Unauthorized (401)."""

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        services: NamedDependency[Services] = connection.app.state.rag
        token = bearer_token(connection.headers.get("authorization"))
        caller = await sync_to_thread(services.authenticate, token)  # a database lookup
        return AuthenticationResult(user=caller, auth=caller.key_id)


def question_body_limit(settings: Settings) -> int:
    """The largest body a question route reads: a question and its history, all \\u-escaped,
    and never more than an upload may be."""
    chars = settings.max_question_chars + settings.max_history_chars
    needed = max(1024 * 1024, 12 * chars) + MULTIPART_SLACK
    return min(needed, settings.max_upload_bytes + MULTIPART_SLACK)


def _services(state: State) -> Services:
    return state.rag  # type: ignore[no-any-return]


@get("/healthz", sync_to_thread=False, tags=["health"], responses=problem_responses(503))
def healthz(request: Request[Any, Any, Any], services: NamedDependency[Services]) -> Any:
    """The process is up (it does not touch the database).

    503 only when the embedded PostgreSQL has stayed down although the service kept restarting
    it: then restarting the service is what is left to try.
    """
    monitor = services.monitor
    if monitor is not None and monitor.gave_up:
        detail = f"the database stayed down despite restarts: {monitor.database_check()}"
        return problem("not-ready", detail, instance=request.url.path)
    return {"status": "ok"}


@get("/readyz", sync_to_thread=False, tags=["health"], responses=problem_responses(503))
def readyz(request: Request[Any, Any, Any], services: NamedDependency[Services]) -> Response[Any]:
    """Ready to answer: database reachable, migrations applied, embedder loaded.

    Answers at once from the last background probe of the database (rag.db_health).
    """
    checks = services.readiness()
    if all(v == "ok" for v in checks.values()):
        return Response({"status": "ready", "checks": checks})
    failed = ", ".join(f"{k}: {v}" for k, v in checks.items() if v != "ok")
    return problem("not-ready", failed, instance=request.url.path, checks=checks)


@get("/", sync_to_thread=False, include_in_schema=False)
def index() -> Any:
    """The chat page, if it is installed; otherwise where to find the API docs."""
    page = STATIC_DIR / "index.html"
    if page.is_file():
        return File(page, content_disposition_type="inline", media_type="text/html")
    return {"name": "rag", "docs": "/schema", "openapi": "/schema/openapi.json"}


@post(
    "/search", status_code=200, sync_to_thread=True, responses=problem_responses(*QUESTION_ERRORS)
)
def search(
    data: JSONBody[SearchIn],
    request: Request[Caller, Any, Any],
    services: NamedDependency[Services],
) -> dict[str, Any]:
    """The fused candidates with their evidence (the shape of ``rag search --json``)."""
    caller: Caller = request.user
    filters = parse_filter(data.filter)
    engine = services.engine(caller)
    with question_field():
        result = engine.search(
            caller.owner_id, data.question, mode=data.mode, limit=data.limit, filters=filters
        )
    metrics.record_degraded(result.degraded)
    return result.as_dict()


@get("/stats", sync_to_thread=True, responses=problem_responses(*V1_ERRORS))
def stats(
    request: Request[Caller, Any, Any], services: NamedDependency[Services]
) -> dict[str, Any]:
    """Documents, chunks, unembedded chunks and embedding models of the caller's owner.

    ``embedding`` says how many chunks have a vector of the configured model and, while some
    wait, how fast the embedding workers go and when they should be done.
    """
    caller: Caller = request.user
    embedder = services.embedder
    model = embedder.model_id if embedder is not None else None
    with services.scoped(caller).connection() as conn:
        s = owner_stats(conn, caller.owner_id)
        progress = embedding_status(conn, model, s.chunks, s.models, caller.owner_id)
    return {
        "owner": caller.owner,
        **asdict(s),
        "embedder": model,
        "llm": services.llm.model if services.llm is not None else None,
        "embedding": asdict(progress),
    }


def create_app(
    settings: Settings,
    *,
    db: Database | None = None,
    embedder: Embedder | None = _UNSET,
    llm: AnswerWriter | None = _UNSET,
    reranker: Reranker | None = _UNSET,
) -> Litestar:
    """The service as an ASGI application.

    Args:
        settings: all knobs; nothing is read from the environment here.
        db: a database to use (its pool is not closed on shutdown); default: one opened, and
            migrated, on startup from ``settings``, and closed on shutdown.
        embedder: default: the one ``settings.embedder`` names; ``None``: full text only.
        llm: the chat model; default: the one ``settings.llm_url`` points at, if any.
        reranker: default: the one ``settings.rerank`` names (none unless set).

    Raises:
        ConfigError: the settings name an unknown embedder or are incomplete.
    """
    services = Services(
        settings=settings,
        embedder=make_embedder(settings) if embedder is _UNSET else embedder,
        llm=make_llm(settings) if llm is _UNSET else llm,
        reranker=make_reranker(settings) if reranker is _UNSET else reranker,
    )

    async def startup(app: Litestar) -> None:
        # Sync handlers wait on the pool, the embedder and the chat model; asyncio's default
        # executor has only min(32, CPUs + 4) threads, so a few slow answers would stall the rest.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=64, thread_name_prefix="rag-worker")
        )
        await sync_to_thread(services.open, db)

    async def shutdown(app: Litestar) -> None:
        await sync_to_thread(services.close)

    v1 = Router(
        path="/v1",
        route_handlers=[stats, *api_documents.ROUTES],
        middleware=[DefineMiddleware(ApiKeyMiddleware)],
        security=[{"bearer": []}],
    )
    # Questions need no upload-sized bodies: a larger one is refused from its Content-Length.
    v1_questions = Router(
        path="/v1",
        route_handlers=[search, *api_chat.ROUTES],
        middleware=[DefineMiddleware(ApiKeyMiddleware)],
        security=[{"bearer": []}],
        request_max_body_size=question_body_limit(settings),
    )
    app = Litestar(
        route_handlers=[
            healthz,
            readyz,
            *([metrics_route] if settings.metrics else []),
            index,
            v1,
            v1_questions,
            # the chat page's script and style sheet
            create_static_files_router(path="/static", directories=[STATIC_DIR]),
        ],
        dependencies={"services": Provide(_services, sync_to_thread=False)},
        state=State({"rag": services}),
        on_startup=[startup],
        on_shutdown=[shutdown],
        exception_handlers=EXCEPTION_HANDLERS,
        request_max_body_size=settings.max_upload_bytes + MULTIPART_SLACK,
        openapi_config=OpenAPIConfig(
            title="rag",
            version="1",
            description=(
                "Question answering over your own documents that knows when it does not know."
            ),
            path="/schema",
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(), JsonRenderPlugin()],
            components=Components(
                security_schemes={
                    "bearer": SecurityScheme(
                        type="http",
                        scheme="bearer",
                        description="An API key from `rag apikeys create`.",
                    ),
                }
            ),
        ),
        debug=False,
        # logging is rag's (rag.logs: format, request ids); Litestar's default would replace it
        logging_config=None,
    )
    # Around the router and its exception handling, so that routing errors (404, 405) get a
    # request id and are counted too; Litestar's own middleware runs only for matched routes.
    app.asgi_handler = RequestObservation(app.asgi_handler, metrics=settings.metrics)
    return app
