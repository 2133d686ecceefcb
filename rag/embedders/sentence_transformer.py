"""The ``sentence-transformers`` backend: any model name or local path in ``settings.embed_model``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag.embedders.base import (
    E5_PREFIXES,
    Kind,
    clean_texts,
    is_e5,
    unit_rows,
)
from rag.errors import ConfigError, EmbedderError, short_reason
from rag.settings import Settings


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
        self.prefixes = E5_PREFIXES if is_e5(name) else {}
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
        items = [prefix + text for text in clean_texts(texts, kind)]
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
        return unit_rows(matrix, "sentence-transformers")
