"""What the per-request extras cost: the standing lookup of a question, the request-id/metrics layer.

    python bench/bench_request_extras.py ../shared/eval/ctkfacts --questions 300

1. **Standing lookup.** Ingests the corpus folder's documents (docs.jsonl, read by path) into an
   owner of their own, marks every tenth document stale and lets every twentieth supersede
   another, then answers the same questions two ways, interleaved: the pipeline without the
   lookup (retrieve + judge, what Engine.search did before) and Engine.search (retrieve, the
   lookup, judge, the stale-after-fresh order). Prints median and p95 milliseconds and the ratio.
2. **ASGI layer.** Calls ``GET /healthz`` of one app in-process, with and without
   :class:`rag.api.observability.RequestObservation` around it (request id, access log record,
   two metric updates), and prints microseconds per request and the ratio.

Uses the embedder of ``RAG_EMBEDDER`` (default here: fake, so that the figures are SQL and Python,
not the model) and ``DATABASE_URL`` or the embedded PostgreSQL in ``RAG_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.answer.engine import Engine
from rag.api.app import create_app
from rag.db import Database
from rag.embedders import make_embedder
from rag.ingest.embed_queue import drain
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.search.relevance import judge
from rag.search.retrieve import retrieve
from rag.settings import Settings
from rag.store import ensure_owner

OWNER = "bench-extras"


def documents(folder: Path) -> list[LoadedDocument]:
    out = []
    with (folder / "docs.jsonl").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            d = json.loads(line)
            meta: dict[str, Any] = {}
            if i % 10 == 3:
                meta["status"] = "stale"
            if i % 20 == 7 and i > 0:
                meta["supersedes"] = f"{d['id'][:-5]}{i - 1:05d}"  # the previous document
            out.append(
                LoadedDocument(d["id"], d.get("title"), d["text"], d.get("lang"), meta, d["id"])
            )
    return out


def questions(folder: Path, n: int) -> list[str]:
    with (folder / "questions_dev.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line)["question"] for line in f][:n]


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def bench_standing(settings: Settings, folder: Path, n: int) -> None:
    embedder = make_embedder(settings)
    with Database(settings) as db:
        with db.connection() as conn:
            owner_id = ensure_owner(conn, OWNER)
            conn.commit()
        summary = Ingestor(db, settings, embedder, OWNER).add_all(documents(folder))
        print(f"corpus: {summary.added} added, {summary.unchanged} unchanged", file=sys.stderr)
        if embedder is not None:  # ingestion queues the vectors; the comparison needs them
            drain(db, embedder, owner_id, batch=settings.embed_batch)
        engine = Engine(db, settings, embedder)
        qs = questions(folder, n)
        for q in qs[:10]:  # warm the caches and the pool
            engine.search(owner_id, q)
        base: list[float] = []
        full: list[float] = []
        hidden = stale = 0
        for i, q in enumerate(qs):
            # alternate which runs first, so that neither always finds the other's warm caches
            for which in ("base", "full") if i % 2 == 0 else ("full", "base"):
                t0 = time.perf_counter()
                if which == "base":
                    judge(
                        retrieve(db, settings, embedder, owner_id, engine.validate(q)),
                        engine.params,
                    )
                    base.append((time.perf_counter() - t0) * 1000)
                    continue
                result = engine.search(owner_id, q)
                full.append((time.perf_counter() - t0) * 1000)
                hidden += len(result.hidden)
                stale += sum(1 for h in result.hits if h.standing is not None and h.standing.stale)
    mb, mf = statistics.median(base), statistics.median(full)
    print(f"\nstanding lookup, {len(qs)} questions, {summary.added + summary.unchanged} documents")
    print(f"  hidden candidates {hidden}, stale hits {stale}")
    print(f"  {'pipeline':<34} {'median ms':>10} {'p95 ms':>10}")
    print(f"  {'retrieve + judge (baseline)':<34} {mb:>10.2f} {percentile(base, 0.95):>10.2f}")
    print(f"  {'Engine.search (+ standing)':<34} {mf:>10.2f} {percentile(full, 0.95):>10.2f}")
    print(f"  ratio of medians: {mf / mb:.3f}")


async def _call(app: Any, n: int) -> float:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/healthz",
        "raw_path": b"/healthz",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"bench")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    started = time.perf_counter()
    for _ in range(n):
        await app(dict(scope), receive, send)
    return (time.perf_counter() - started) / n * 1e6


def bench_asgi(settings: Settings, n: int) -> None:
    app = create_app(settings, embedder=None, llm=None)
    wrapped = app.asgi_handler
    inner = wrapped.app  # type: ignore[attr-defined]
    timings: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(5):  # interleaved rounds against drift on a shared machine
        app.asgi_handler = inner
        timings["without"].append(asyncio.run(_call(app, n)))
        app.asgi_handler = wrapped
        timings["with"].append(asyncio.run(_call(app, n)))
    without, with_ = statistics.median(timings["without"]), statistics.median(timings["with"])
    print(f"\nGET /healthz in-process, 5 rounds of {n}")
    print(f"  without the request-id/metrics layer: {without:8.1f} us per request")
    print(f"  with it:                              {with_:8.1f} us per request")
    print(f"  ratio: {with_ / without:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "corpus", type=Path, help="a folder with docs.jsonl and questions_dev.jsonl"
    )
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    os.environ.setdefault("RAG_EMBEDDER", "fake")
    settings = Settings.from_env()
    bench_standing(settings, args.corpus, args.questions)
    bench_asgi(settings, args.requests)


if __name__ == "__main__":
    main()
