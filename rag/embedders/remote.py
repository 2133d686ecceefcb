"""The ``http`` backend: an OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rag.embedders.base import (
    E5_PREFIXES,
    PASSAGE_TIMEOUT,
    Kind,
    clean_texts,
    is_e5,
    unit_rows,
)
from rag.errors import ConfigError, EmbedderError, short_reason
from rag.settings import Settings


class HttpEmbedder:
    """An OpenAI-compatible embeddings endpoint (``POST {embed_url}/v1/embeddings``)."""

    def __init__(self, settings: Settings) -> None:
        # httpx is already a core dependency, but the client is only needed by this backend.
        import httpx

        base = settings.embed_url.strip().rstrip("/")
        if not base:
            raise ConfigError("RAG_EMBED_URL must be set for the http embedder")
        if not settings.embed_model.strip():
            raise ConfigError("RAG_EMBED_MODEL must name the model of the http embedder")
        self.url = base + ("/embeddings" if base.endswith("/v1") else "/v1/embeddings")
        self.model = settings.embed_model.strip()
        self.model_id = "http/" + self.model
        # Servers such as TEI or vLLM pass text through; E5 models need their prefixes.
        self.prefixes = E5_PREFIXES if is_e5(self.model) else {}
        self.batch = max(1, settings.embed_batch)
        self.timeouts = {"query": settings.embed_timeout, "passage": PASSAGE_TIMEOUT}
        self._dim: int | None = settings.embed_dim or None
        headers = {"Content-Type": "application/json"}
        if settings.embed_api_key:
            headers["Authorization"] = f"Bearer {settings.embed_api_key}"
        self._httpx = httpx
        self._client = httpx.Client(headers=headers)  # thread-safe; reuses connections

    @property
    def dim(self) -> int:
        """``settings.embed_dim``, or learned from the endpoint with one request."""
        if self._dim is None:
            self.embed(["dimension"], kind="query")
        assert self._dim is not None
        return self._dim

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Embed ``texts`` in batches of ``settings.embed_batch`` requests.

        Raises:
            EmbedderError: the endpoint failed, timed out or answered something malformed.
        """
        prefix = self.prefixes.get(kind, "")
        items = [prefix + text for text in clean_texts(texts, kind)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(items[start : start + self.batch], self.timeouts[kind])
            for start in range(0, len(items), self.batch)
        ]
        return unit_rows(np.vstack(parts), "http")

    def _request(self, batch: list[str], timeout: float) -> np.ndarray:
        httpx = self._httpx
        try:
            response = self._client.post(
                self.url, json={"model": self.model, "input": batch}, timeout=timeout
            )
        except httpx.TimeoutException as exc:
            raise EmbedderError(
                f"Embedding request to {self.url} timed out after {timeout}s"
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbedderError(
                f"Embedding request to {self.url} failed: {short_reason(exc)}"
            ) from exc
        if response.status_code >= 400:
            raise EmbedderError(
                f"Embedding endpoint {self.url} answered HTTP {response.status_code}: "
                f"{' '.join(response.text.split())[:200]}"
            )
        try:
            body = response.json()
        except ValueError as exc:
            raise EmbedderError(f"Embedding endpoint {self.url} returned invalid JSON") from exc
        return self._parse(body, len(batch))

    def _parse(self, body: Any, count: int) -> np.ndarray:
        """The rows of an embeddings response, ordered by their ``index``."""
        where = f"Embedding endpoint {self.url}"
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbedderError(f"{where} returned no 'data' list")
        if len(data) != count:
            raise EmbedderError(f"{where} returned {len(data)} embeddings for {count} texts")
        rows: dict[int, list[float]] = {}
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            vector = item.get("embedding") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < count or index in rows:
                raise EmbedderError(f"{where} returned a missing, duplicate or bad index")
            # type() rather than isinstance(): bools and numeric strings are not embeddings.
            numeric = isinstance(vector, list) and all(type(x) in (int, float) for x in vector)
            if not numeric or not vector:
                raise EmbedderError(f"{where} returned a non-numeric embedding at index {index}")
            if self._dim is not None and len(vector) != self._dim:
                raise EmbedderError(
                    f"{where} returned dimension {len(vector)}, expected {self._dim}"
                )
            if self._dim is None:
                self._dim = len(vector)
            rows[index] = vector
        return np.array([rows[i] for i in range(count)], dtype=np.float32)
