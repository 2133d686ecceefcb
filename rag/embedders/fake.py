"""The ``fake`` backend: deterministic feature hashing, no model; for tests and benchmarks."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from unidecode import unidecode

from rag.embedders.base import (
    Kind,
    clean_texts,
    unit_rows,
)
from rag.settings import Settings

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
        items = clean_texts(texts, kind)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(np.stack([self._vector(t) for t in items]), "fake")


# A plain dict until outsiders write plugins.
