"""The optional reranking stage after fusion: a seam, one backend, fail-open with a time limit.

A reranker is any object with ``model_id`` and ``score(question, texts)`` returning one score per
text (higher: more relevant). The Engine gives it the question and the top ``RAG_RERANK_TOP``
fused candidates' texts and re-orders those by score; the rest keep their fused order after
them. It changes the order only: which candidates the relevance filter admits does not depend on
it. A reranker that raises or takes longer than ``RAG_RERANK_TIMEOUT`` leaves the fused order and
adds ``{"component": "rerank", ...}`` to ``degraded``; the question is answered all the same.

Because the order decides which sources reach the answer, a reranked pipeline is calibrated as a
model setting of its own: its profile is keyed by :func:`pipeline_id` (rag.search.profiles).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from rag.errors import ConfigError
from rag.settings import Settings

# Scoring runs here so that a slow model can be given up on; a hung call keeps its thread, so
# two threads bound what hung calls can hold.
_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rag-rerank")


class Reranker(Protocol):
    model_id: str

    def score(self, question: str, texts: Sequence[str]) -> Sequence[float]: ...


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder (a model name or a local path)."""

    def __init__(self, model: str, *, max_length: int = 512) -> None:
        if not model:
            raise ConfigError("RAG_RERANK=cross-encoder needs RAG_RERANK_MODEL (a name or a path)")
        self.model_id = f"cross-encoder:{model}"
        self.model_name = model
        self.max_length = max_length
        self._model: Any = None

    def score(self, question: str, texts: Sequence[str]) -> Sequence[float]:
        if self._model is None:
            # Imported here: sentence-transformers pulls torch, which only rerankers need.
            from sentence_transformers import CrossEncoder

            self._model = CrossEncoder(self.model_name, max_length=self.max_length)
        scores = self._model.predict([(question, t) for t in texts], show_progress_bar=False)
        return [float(s) for s in scores]


def make_reranker(settings: Settings) -> Reranker | None:
    """The reranker ``settings.rerank`` names, or None (``none``, the default)."""
    if settings.rerank == "none":
        return None
    if settings.rerank == "cross-encoder":
        return CrossEncoderReranker(settings.rerank_model)
    raise ConfigError(f"Unsupported rerank: {settings.rerank} (choose from none, cross-encoder)")


def pipeline_id(model_id: str, reranker: Reranker | None) -> str:
    """The calibration key of an embedding model with an optional reranker after it."""
    return model_id if reranker is None else f"{model_id}+rerank={reranker.model_id}"


def rerank_order(
    reranker: Reranker, question: str, texts: Sequence[str], timeout: float
) -> tuple[list[int] | None, list[float], dict[str, str] | None, float]:
    """The new order of ``texts`` (indices, best first), their scores, why it failed, seconds.

    On failure or timeout the order is None and the reason is a ``degraded`` entry.
    """
    started = time.perf_counter()
    future = _pool.submit(reranker.score, question, list(texts))
    try:
        scores = [float(s) for s in future.result(timeout=timeout)]
        if len(scores) != len(texts):
            raise ValueError(f"{len(scores)} scores for {len(texts)} texts")
        if any(s != s for s in scores):  # NaN
            raise ValueError("a score is NaN")
    except FutureTimeout:
        future.cancel()
        why = {
            "component": "rerank",
            "reason": "timeout",
            "message": f"reranker took longer than {timeout:g} s",
        }
        return None, [], why, time.perf_counter() - started
    except Exception as e:  # noqa: BLE001 - fail open: the fused order still answers
        why = {"component": "rerank", "reason": "error", "message": " ".join(str(e).split())}
        return None, [], why, time.perf_counter() - started
    order = sorted(range(len(texts)), key=lambda i: (-scores[i], i))
    return order, scores, None, time.perf_counter() - started
