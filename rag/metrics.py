"""Prometheus metrics: every metric object of rag in one registry, recorded by core and HTTP code.

The objects live here, free of any web framework, so that the Engine can time retrieval and the
HTTP middleware (rag.api.observability) can count requests; ``GET /metrics`` renders
:data:`REGISTRY`. Labels are small closed sets (route templates, statuses, rule names), never
question text, source ids or owners, so the number of series stays bounded.

Metrics are process-wide, as Prometheus expects: several apps in one process (tests) share them,
so a test compares a counter before and after its own requests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)

# Requests take from a millisecond (health) to the LLM timeout (30 s by default).
_REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_STAGE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

HTTP_REQUESTS = Counter(
    "rag_http_requests",
    "HTTP requests by method, route template and status code.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
HTTP_LATENCY = Histogram(
    "rag_http_request_duration_seconds",
    "Time from the request's arrival to the end of its response (a whole stream when streamed).",
    ["method", "route", "status"],
    buckets=_REQUEST_BUCKETS,
    registry=REGISTRY,
)
ANSWERS = Counter(
    "rag_answers",
    "Answers by status (answered, related, not_found), who decided not_found (filter or llm) "
    "and the rule that admitted the first source.",
    ["status", "not_found_by", "rule"],
    registry=REGISTRY,
)
RETRIEVAL_STAGE = Histogram(
    "rag_retrieval_stage_seconds",
    "Time of one retrieval stage: embed (the question's vector), sql (both retrievers and "
    "fusion), rerank.",
    ["stage"],
    buckets=_STAGE_BUCKETS,
    registry=REGISTRY,
)
DEGRADED = Counter(
    "rag_degraded",
    "Components that failed open during a request (vector, llm, followup, rerank), by reason.",
    ["component", "reason"],
    registry=REGISTRY,
)


def record_retrieval(timings_ms: Mapping[str, float]) -> None:
    """One question's stage timings, as :class:`rag.search.retrieve.Retrieval` measures them (ms)."""
    for stage, ms in timings_ms.items():
        RETRIEVAL_STAGE.labels(stage).observe(ms / 1000)


def record_degraded(degraded: Iterable[Mapping[str, str]]) -> None:
    for d in degraded:
        DEGRADED.labels(d.get("component", "unknown"), d.get("reason", "unknown")).inc()


def record_answer(answer: Any) -> None:
    """One final answer (a :class:`rag.answer.engine.Answer`) and what it degraded."""
    rule = "none"
    if answer.status in ("answered", "related") and answer.sources:
        rule = str(answer.sources[0].evidence.get("rule") or "none")
    ANSWERS.labels(answer.status, answer.not_found_by or "", rule).inc()
    record_degraded(answer.degraded)


_pools: dict[int, Callable[[], Mapping[str, int] | None]] = {}
_queues: dict[int, Callable[[], int | None]] = {}


def watch_pool(key: int, stats: Callable[[], Mapping[str, int] | None]) -> None:
    """Report a pool (``stats``: its ``get_stats()``) under key ``key`` until :func:`unwatch_pool`."""
    _pools[key] = stats


def unwatch_pool(key: int) -> None:
    _pools.pop(key, None)
    _queues.pop(key, None)


def watch_queue(key: int, depth: Callable[[], int | None]) -> None:
    """Report the embedding queue's depth (``depth()``; None: unknown now) until unwatch_pool."""
    _queues[key] = depth


class PoolCollector(Collector):
    """The connection pools' gauges and counters, read from psycopg_pool at scrape time.

    A process normally serves one pool; with several (tests) the figures are their sums.
    """

    def collect(self) -> Iterable[Metric]:
        totals: dict[str, int] = {}
        for stats in list(_pools.values()):
            for k, v in (stats() or {}).items():
                totals[k] = totals.get(k, 0) + int(v)
        s = totals
        gauges = {
            "pool_max": ("rag_db_pool_max", "Most connections the pool opens."),
            "pool_size": ("rag_db_pool_size", "Connections open now (in use or idle)."),
            "pool_available": ("rag_db_pool_idle", "Idle connections ready to be handed out."),
            "requests_waiting": ("rag_db_pool_waiting", "Requests waiting for a connection now."),
        }
        for key, (name, doc) in gauges.items():
            yield GaugeMetricFamily(name, doc, value=s.get(key, 0))
        counters = {
            "requests_num": ("rag_db_pool_requests", "Connections asked of the pool."),
            "requests_queued": (
                "rag_db_pool_queued",
                "Requests that had to wait because no connection was idle.",
            ),
            "requests_errors": (
                "rag_db_pool_timeouts",
                "Requests that got no connection in time (a 503).",
            ),
        }
        for key, (name, doc) in counters.items():
            yield CounterMetricFamily(name, doc, value=s.get(key, 0))
        depths = [d for d in (depth() for depth in list(_queues.values())) if d is not None]
        if depths:
            yield GaugeMetricFamily(
                "rag_embed_queue_chunks",
                "Chunks waiting for a vector (the embedding queue), in all owners, counted up to "
                "a million.",
                value=max(depths),  # every service of a process sees the same database
            )
        yield CounterMetricFamily(
            "rag_db_pool_wait_seconds",
            "Total time requests spent waiting for a connection.",
            value=s.get("requests_wait_ms", 0) / 1000,
        )


REGISTRY.register(PoolCollector())
