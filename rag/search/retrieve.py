"""Full-text (BM25 over word keys) and vector candidates, fused by RRF in one SQL statement.

Full text: candidates are the best postings (by BM25 term impact) of the question's selective
lemma, stem and prefix keys (``key_top``), so the work is bounded by the question, not the corpus;
the best ``fts_rescore`` of them are scored with exact BM25 from the owner's own statistics
(``word_stats.df``, ``owners.chunk_count`` and ``token_total``), the keys weighted by kind. With a
metadata filter, or ``fts_rescore`` 0, an OR tsquery finds every matching chunk through the GIN
index on ``chunks.word_keys`` and all of them are scored. Vector: cosine distance through the
model's partial HNSW index (iterative scan, so the owner or a filter cannot starve the list) or an
exact scan for small owners and small filtered sets. A filter applies inside both retrievers,
before fusion; the word statistics stay the owner's. Fusion: Reciprocal Rank Fusion,
sum of weight / (k + rank), ties broken by the better single rank and then by chunk id.

Fail open: a missing, failing or slow embedder leaves the full-text list alone; a failing
full-text query leaves the vector list alone; the result lists what was degraded and why.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import psycopg
from psycopg import sql
from psycopg_pool import PoolTimeout

from rag.db import Database
from rag.embedders import Embedder
from rag.errors import DatabaseUnavailable, RetrievalError, one_line
from rag.ingest.freshness import Standing
from rag.language.courtesy import core_question
from rag.language.diacritics import may_restore, restorable_forms, restore
from rag.language.keys import (
    accent_prefix,
    form_map_prefix,
    lemma_from_form_map_key,
    spelling_from_accent_key,
)
from rag.language.question_keys import QueryKeys, query_keys
from rag.language.register import spoken_keys
from rag.search.answerability import ANALYSIS_VERSION, Sentence, stored_sentences
from rag.search.filters import SearchFilter
from rag.search.pull import PullProbe
from rag.search.relations import set_for
from rag.search.sql import (
    ANALYSES,
    EMPTY_FTS,
    EMPTY_VEC,
    FILTERED_COUNT,
    FORM_MAP,
    FTS,
    FTS_TOP,
    FUSE,
    KEY_STATS,
    OWNER_INFO,
    Q_SQL,
    VEC,
    filter_clause,
)
from rag.settings import Settings

log = logging.getLogger(__name__)

Mode = Literal["hybrid", "fts", "vector"]
_SAFE_KEY = re.compile(r"^[lsp]:[a-z0-9][a-z0-9._/+-]*$")
# A key in more than this share of the owner's chunks does not select candidates (it still scores).
COMMON_KEY_SHARE = 0.1
# ... unless the owner is this small: then every posting is read (a list's worth of chunks), and
# the selection does not depend on how deep a list is asked for
SMALL_OWNER_CHUNKS = 50

_embed_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rag-embed")
# Runs a hybrid search's vector statement on a second connection while the first runs full text.
_vector_pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="rag-vector")


@dataclass
class Candidate:
    chunk_id: int
    document_id: int
    source_id: str
    title: str | None
    text: str
    lang: str
    fts_rank: int | None
    bm25: float | None
    vector_rank: int | None
    distance: float | None
    rrf_score: float
    matched_keys: list[str]
    # its document's standing when stale or superseded (None: fresh)
    standing: Standing | None = None
    # the chunk's stored sentence analysis (JSON), when it is this code's (ANALYSIS_VERSION),
    # once ``reader`` has read it
    analysis: str | None = field(default=None, repr=False)
    # where the stored analysis is read from when judging first asks for it (None: nowhere)
    reader: AnalysisReader | None = field(default=None, repr=False, compare=False)
    _sentences: tuple[Sentence, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def sentences(self) -> tuple[Sentence, ...]:
        """The chunk's sentences for judging: the stored analysis decoded, or computed now when
        there is none of this code's version (a chunk the background worker has not reached)."""
        if self._sentences is None:
            if self.reader is not None:
                self.reader.read([self])
            self._sentences = stored_sentences(self.text, self.lang, self.analysis)
        return self._sentences


class AnalysisReader:
    """Reads the stored sentence analyses (migration 009) of one retrieval's candidates, each
    once, when judging asks for them: a live search looks for the evidence windows of about a
    quarter of its candidates (23 of 86 at 100,000 chunks), and an analysis is about eight
    times its chunk's text, so reading every candidate's with the lists cost more than the
    extra statement does. :func:`read_analyses` reads many in one statement.

    A failed read leaves the candidates without one: judging then analyses them itself, with
    the same rules, as it does a chunk the background worker has not reached.
    """

    def __init__(self, db: Database, owner_id: int) -> None:
        self.db = db
        self.owner_id = owner_id
        # chunk id -> its analysis as read (None: none stored of this version and language);
        # judging again (another threshold set, distances moved) reads nothing twice
        self._read: dict[int, str | None] = {}

    def read(self, candidates: Sequence[Candidate]) -> None:
        """Give each of ``candidates`` (its own) its stored analysis."""
        own = [c for c in candidates if c.reader is self and c.analysis is None]
        todo = [c for c in own if c.chunk_id not in self._read]
        if todo:
            params = {
                "owner_id": self.owner_id,
                "ids": [c.chunk_id for c in todo],
                "langs": [c.lang for c in todo],
                "analysis_version": ANALYSIS_VERSION,
            }
            found: dict[int, str] = {}
            try:
                with self.db.connection() as conn:
                    found = dict(conn.execute(ANALYSES, params).fetchall())
                    conn.commit()
            except (psycopg.Error, DatabaseUnavailable) as e:
                log.warning("stored analyses not read, analysing live: %s", one_line(e))
            self._read.update((c.chunk_id, found.get(c.chunk_id)) for c in todo)
        for c in own:
            c.analysis = self._read[c.chunk_id]


def read_analyses(candidates: Sequence[Candidate]) -> None:
    """Read the stored analyses of ``candidates`` (whose sentences judging is about to ask
    for), one statement per retrieval they come from."""
    readers = {id(c.reader): c.reader for c in candidates if c.reader is not None}
    for reader in readers.values():
        reader.read(candidates)


@dataclass
class Retrieval:
    """Candidates in fused order, with what the relevance filter needs to judge them."""

    question: str
    query: QueryKeys
    candidates: list[Candidate]
    key_df: dict[str, int]  # df of every question key in the owner's chunks
    chunk_count: int  # the owner's chunks
    form_keys: dict[str, list[str]]  # question form -> lemma keys reached through the form map
    degraded: list[dict[str, str]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # the owner's documents per language, most first: the question's language relation
    owner_langs: tuple[tuple[str, int], ...] = ()
    # the relation whose own fusion knobs ordered the candidates; None: the default ones
    fusion_set: str | None = None
    # what was embedded and keyed, when it is not the question as typed: without the greeting
    # or thanks at its edges, and spelled as the corpus spells it when typed without diacritics
    searched_as: str | None = None
    # the pull of missing focus words toward candidates (rag.search.pull.PullProbe): chunk ids
    # and words -> pull per chunk id; None without a question vector
    pull: Callable[[Sequence[int], Sequence[str]], dict[int, float | None]] | None = field(
        default=None, repr=False, compare=False
    )


def key_weight(key: str, settings: Settings) -> float:
    """BM25 weight of a key by its kind: lemma, stem, or the half-weight prefix fallback."""
    kind = key[0]
    if kind == "l":
        return settings.weight_lemma
    if kind == "s":
        return settings.weight_stem
    return settings.weight_prefix


def embed_question(
    embedder: Embedder | None, question: str, timeout: float
) -> tuple[np.ndarray | None, dict[str, str] | None]:
    """The question's vector, or None and why (no embedder, error, timeout)."""
    if embedder is None:
        return None, {
            "component": "vector",
            "reason": "no_embedder",
            "message": "no embedder configured",
        }
    future = _embed_pool.submit(embedder.embed, [question], kind="query")
    try:
        vectors = future.result(timeout=timeout)
        return np.asarray(vectors[0], dtype=np.float32), None
    except FutureTimeout:
        future.cancel()
        return None, {
            "component": "vector",
            "reason": "timeout",
            "message": f"embedder took longer than {timeout:g} s",
        }
    except Exception as e:  # noqa: BLE001 -- fail open: full text still answers
        return None, {"component": "vector", "reason": "error", "message": " ".join(str(e).split())}


def retrieve(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    owner_id: int | None,
    question: str,
    *,
    mode: Mode = "hybrid",
    lang: str | None = None,
    vector: np.ndarray | None = None,
    filters: SearchFilter | None = None,
    explain: list[str] | None = None,
    fusion: Mapping[str, Mapping[str, Any]] | None = None,
) -> Retrieval:
    """Run full-text and vector retrieval for ``question`` and fuse them.

    Args:
        vector: a precomputed query vector (evaluation embeds questions in batches).
        filters: only chunks of documents that pass it take part, in both retrievers.
        explain: when given, the statement's EXPLAIN (ANALYZE, BUFFERS) lines are appended to it
            (the statement then runs twice).
        fusion: RRF knobs (``rrf_k``, ``rrf_weight_fts``, ``rrf_weight_vector``, ``candidates``)
            per language relation (``same``, ``other`` or a pair, :mod:`rag.search.relations`): the set
            the question's relation to the owner selects replaces the settings' knobs.

    Raises:
        RetrievalError: both retrievers failed.
    """
    timings: dict[str, float] = {}
    degraded: list[dict[str, str]] = []
    t0 = time.perf_counter()
    qvec: np.ndarray | None = None
    # what the question asks, without a greeting or thanks at its edges (rag.language.courtesy),
    # and the text embedded and keyed: that, spelled as the corpus spells it when typed in ASCII
    core = core_question(question)
    searched: str | None = None
    if mode != "fts":
        if vector is not None:
            qvec = vector
        else:
            searched = core
            if owner_id is not None and may_restore(core):
                searched = _restored_apart(db, owner_id, core, lang) or core
            qvec, why = embed_question(embedder, searched, settings.embed_timeout)
            if why:
                degraded.append(why)
        timings["embed"] = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    with db.connection() as conn:
        info = conn.execute(OWNER_INFO, {"owner_id": owner_id}).fetchone() if owner_id else None
        n_chunks = int(info[0]) if info else 0
        token_total = int(info[1]) if info else 0
        corpus_langs = list(info[2]) if info and info[2] else None
        owner_langs = tuple(zip(info[2], map(int, info[3]), strict=True)) if info else ()
        qk = query_keys(core, lang, corpus_langs)
        fusion_set = None
        if fusion:
            fusion_set = set_for(fusion, qk.lang, owner_langs)
            if fusion_set is not None:
                settings = settings.replace(**fusion[fusion_set])
        if owner_id is None or n_chunks == 0:
            conn.commit()
            return Retrieval(
                question, qk, [], {}, 0, {}, degraded, timings, owner_langs, fusion_set
            )
        if searched is None:
            searched = core
            if may_restore(core):
                searched = restore(core, qk.lang, _spellings(conn, owner_id, core))
        if searched != core:
            qk = query_keys(searched, qk.lang, corpus_langs)
        # the written words of its spoken ones (rag.language.register): how common they are is
        # how common the spoken word is in what the documents say; full text does not look for them
        spoken = spoken_keys([w.surface for w in qk.words], qk.lang)
        form_keys, dfs = _key_stats(conn, owner_id, qk, spoken)
        keys, weights = _weighted_keys(qk, form_keys, settings)
        searched_for = set(keys)
        said = [k for k in spoken if k not in searched_for]
        looked_up = keys + said
        dfs = {k: dfs[k] for k in looked_up if k in dfs}
        use_fts = mode != "vector" and any(dfs.get(k, 0) for k in keys)
        use_vec = mode != "fts" and qvec is not None and embedder is not None
        if mode == "vector" and not use_vec:
            raise RetrievalError(
                "vector retrieval unavailable: " + "; ".join(d["message"] for d in degraded)
            )
        # the prefix of a word the corpus does not hold ("automobil" ~ "automat") selects nothing
        absent = {
            k
            for w in qk.words
            if not any(dfs.get(x, 0) for x in (*w.keys, *form_keys.get(w.form, [])) if x[0] in "ls")
            for k in w.keys
            if k[0] == "p"
        }
        params = _params(
            settings, owner_id, n_chunks, token_total, keys, weights, dfs, qvec, use_vec, absent
        )
        plan = _plan(conn, settings, embedder, owner_id, n_chunks, filters, use_vec, params)
        if use_fts and use_vec and explain is None and _spare_connection(db):
            rows = _run_apart(db, conn, plan, params, degraded)
        elif use_fts and use_vec:
            rows = _run_both(conn, plan, params, degraded, explain)
        else:
            try:
                rows = _run(conn, plan, use_fts, use_vec, params, explain)
            except psycopg.Error as e:
                conn.rollback()
                raise RetrievalError(f"retrieval failed: {one_line(e)}") from e
        conn.commit()
    timings["sql"] = (time.perf_counter() - t1) * 1000
    reader = AnalysisReader(db, owner_id)
    candidates = [
        Candidate(
            chunk_id=int(r[0]),
            document_id=int(r[1]),
            source_id=r[2],
            title=r[3],
            text=r[4],
            lang=r[5],
            fts_rank=_int(r[6]),
            bm25=_float(r[7]),
            vector_rank=_int(r[8]),
            distance=_float(r[9]),
            rrf_score=float(r[10]),
            matched_keys=list(r[11]),
            standing=Standing(bool(r[12]), r[13]) if r[12] or r[13] else None,
            reader=reader,
        )
        for r in rows
    ]
    key_df = {k: int(dfs.get(k, 0)) for k in (*keys, *said)}
    probe = None
    if use_vec and qvec is not None and embedder is not None:
        timeout = settings.embed_timeout

        def bounded(text: str) -> tuple[np.ndarray | None, dict[str, str] | None]:
            return embed_question(embedder, text, timeout)

        ids = [c.chunk_id for c in candidates]
        probe = PullProbe(db, embedder, owner_id, searched, qvec, bounded, ids)
    return Retrieval(
        question,
        qk,
        candidates,
        key_df,
        n_chunks,
        form_keys,
        degraded,
        timings,
        owner_langs,
        fusion_set,
        None if searched == question else searched,
        pull=probe,
    )


def _fail_open(
    conn: psycopg.Connection,
    plan: _Plan,
    params: dict[str, Any],
    degraded: list[dict[str, str]],
    error: Exception,
) -> list[Any]:
    """The combined query failed: try each retriever alone and keep whichever works."""
    for use_fts, use_vec, lost in ((True, False, "vector"), (False, True, "fts")):
        try:
            rows = _run(conn, plan, use_fts, use_vec, params)
            degraded.append(
                {"component": lost, "reason": "error", "message": " ".join(str(error).split())}
            )
            return rows
        except psycopg.Error:
            conn.rollback()
    raise RetrievalError(f"both retrievers failed: {' '.join(str(error).split())}") from error


def _spare_connection(db: Database) -> bool:
    """Whether the pool has an idle connection for a second statement: under load every
    connection already serves a search of its own, and the one statement does both lists."""
    try:
        return int(db.pool.get_stats().get("pool_available", 0)) > 0
    except Exception:  # noqa: BLE001 - no figure: the one statement
        return False


# How long a search waits for the idle connection the pool reported (another may have taken it).
SPARE_WAIT = 0.005


def _run_apart(
    db: Database,
    conn: psycopg.Connection,
    plan: _Plan,
    params: dict[str, Any],
    degraded: list[dict[str, str]],
) -> list[Any]:
    """Full text on ``conn`` and the vector list on a second connection at the same time, fused
    here as the one statement fuses them (the same rows in the same order), so a hybrid search
    takes about as long as the slower list, not both one after the other.

    Each list carries what fusion needs: full text its late distances, the vector list the
    question's keys in its chunks. A list that fails is left out and named in ``degraded``;
    without a second connection after all, the one statement runs on ``conn``.
    """
    try:
        other = db.pool.getconn(timeout=SPARE_WAIT)
    except PoolTimeout:
        return _run_both(conn, plan, params, degraded)
    fts: list[Any] = []
    vec: list[Any] = []
    fts_error: psycopg.Error | None = None
    vec_error: psycopg.Error | None = None
    try:
        future = _vector_pool.submit(_run, other, plan, False, True, params)
        try:
            fts = _run(conn, plan, True, False, params, distances=True)
        except psycopg.Error as e:
            fts_error = e
        finally:
            # `other` goes back to the pool only once its statement is over
            try:
                vec = future.result()
            except psycopg.Error as e:
                vec_error = e
    finally:
        db.pool.putconn(other)
    if fts_error is not None:
        conn.rollback()
        if vec_error is not None:
            raise RetrievalError(f"both retrievers failed: {one_line(fts_error)}") from vec_error
        degraded.append({"component": "fts", "reason": "error", "message": one_line(fts_error)})
        return vec
    if vec_error is not None:
        degraded.append({"component": "vector", "reason": "error", "message": one_line(vec_error)})
        return fts
    return fuse_rows(fts, vec, params["k"], params["w_fts"], params["w_vec"])


def _run_both(
    conn: psycopg.Connection,
    plan: _Plan,
    params: dict[str, Any],
    degraded: list[dict[str, str]],
    explain: list[str] | None = None,
) -> list[Any]:
    """The one statement of both lists; when it fails, each list alone (:func:`_fail_open`)."""
    try:
        return _run(conn, plan, True, True, params, explain)
    except psycopg.Error as e:
        conn.rollback()
        return _fail_open(conn, plan, params, degraded, e)


def fuse_rows(fts: list[Any], vec: list[Any], k: float, w_fts: float, w_vec: float) -> list[Any]:
    """The FUSE statement's rows from its two lists' rows (each fused alone): one row per chunk,
    its full-text rank, score and keys from ``fts``, its vector rank and distance from ``vec``,
    RRF computed as SQL computes it, in the statement's order."""
    by_id: dict[int, list[Any]] = {}
    for r in fts:
        by_id[r[0]] = list(r)
    for r in vec:
        row = by_id.get(r[0])
        if row is None:
            by_id[r[0]] = list(r)
        else:
            row[8], row[9] = r[8], r[9]
    out = []
    for row in by_id.values():
        a = w_fts / (k + row[6]) if row[6] is not None else 0.0
        b = w_vec / (k + row[8]) if row[8] is not None else 0.0
        row[10] = a + b
        out.append(tuple(row))
    big = 1e9
    out.sort(
        key=lambda r: (
            -r[10],
            min(big if r[6] is None else r[6], big if r[8] is None else r[8]),
            r[0],
        )
    )
    return out


@dataclass(frozen=True)
class _Plan:
    """How one search runs: the statement's parts and the vector scan's settings."""

    dim: sql.Composable
    model: sql.Composable
    filter: sql.Composable
    vec_filter: sql.Composable
    fts_exact: bool  # score every matching chunk (a filter, or fts_rescore 0)
    vec_exact: bool  # exact distances instead of the HNSW index
    filtered: bool  # a metadata filter narrows both lists
    ef_search: int
    max_scan_tuples: int


def _plan(
    conn: psycopg.Connection,
    settings: Settings,
    embedder: Embedder | None,
    owner_id: int,
    n_chunks: int,
    filters: SearchFilter | None,
    use_vec: bool,
    params: dict[str, Any],
) -> _Plan:
    clause, fparams = filter_clause(filters)
    params.update(fparams)
    filtered = bool(fparams)
    model_id = embedder.model_id if embedder else ""
    vec_exact = n_chunks < settings.exact_scan_below
    max_scan = 20000  # pgvector's default
    if use_vec and filtered and not vec_exact:
        # a small filtered set inside a large owner: the HNSW scan would walk most of the
        # owner to find it, an exact scan over the set is cheap; a large one keeps the index,
        # with room to walk past the chunks the filter rejects
        cap = max(int(settings.exact_scan_below), 1)
        counted = conn.execute(
            sql.SQL(FILTERED_COUNT).format(filter=clause),
            {**params, "model": model_id, "cap": cap},
        ).fetchone()
        admitted = int(counted[0]) if counted else 0
        vec_exact = admitted < cap
        max_scan = max(max_scan, 4 * int(settings.candidates) * n_chunks // cap)
    return _Plan(
        dim=sql.Literal(embedder.dim) if embedder else sql.Literal(1),
        model=sql.Literal(model_id),
        filter=clause,
        vec_filter=clause if vec_exact else filter_clause(filters, per_row=True)[0],
        fts_exact=filtered or settings.fts_rescore <= 0,
        vec_exact=vec_exact,
        filtered=filtered,
        ef_search=int(settings.ef_search),
        max_scan_tuples=max_scan,
    )


def _run(
    conn: psycopg.Connection,
    plan: _Plan,
    use_fts: bool,
    use_vec: bool,
    params: dict[str, Any],
    explain: list[str] | None = None,
    *,
    distances: bool | None = None,
) -> list[Any]:
    """The statement of the lists asked for, fused; ``distances``: the question's distance for
    candidates without a vector rank too (the default when the vector list runs)."""
    if not use_fts and not use_vec:
        return []
    late_distances = use_vec if distances is None else distances
    dim, model = plan.dim, plan.model
    ctes: list[sql.Composable] = [sql.SQL(Q_SQL)]
    if not use_fts:
        ctes.append(sql.SQL(EMPTY_FTS))
    elif plan.fts_exact:
        ctes.append(sql.SQL(FTS).format(filter=plan.filter))
    else:
        ctes.append(sql.SQL(FTS_TOP).format())
    ctes.append(
        sql.SQL(VEC).format(dim=dim, model=model, filter=plan.vec_filter)
        if use_vec
        else sql.SQL(EMPTY_VEC)
    )
    late = (
        sql.SQL("c.embedding::vector({dim}) <=> %(vec)s::vector({dim})").format(dim=dim)
        if late_distances
        else sql.SQL("NULL::float8")
    )
    late = (
        sql.SQL("CASE WHEN c.embed_model = {model} THEN {d} END").format(model=model, d=late)
        if late_distances
        else late
    )
    query = sql.SQL("WITH ") + sql.SQL(",").join(ctes) + sql.SQL(FUSE).format(late_distance=late)
    if use_vec and plan.vec_exact:
        # A statement's plan is cached per text (psycopg prepares a repeated one), and a plan
        # made with the index off must never serve a search that uses it, nor the other way round.
        query = sql.SQL("/* exact */ ") + query
    with conn.transaction():
        with conn.pipeline():
            if use_vec:
                if plan.vec_exact:
                    # small owner or filtered set: an exact scan is fast and has perfect recall
                    conn.execute("SET LOCAL enable_indexscan = off")
                else:
                    if not use_fts and not plan.filtered:
                        # The vector list alone is planned once per connection: its custom plan
                        # is the same HNSW scan each time, but PostgreSQL's own choice made it
                        # anew for every search (the unknown LIMIT makes the generic one look
                        # dearer). The statement of both lists keeps its custom plans: its
                        # generic plan is ten times slower.
                        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
                    conn.execute(
                        sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(plan.ef_search))
                    )
                    conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
                    conn.execute(
                        sql.SQL("SET LOCAL hnsw.max_scan_tuples = {}").format(
                            sql.Literal(plan.max_scan_tuples)
                        )
                    )
            if explain is not None:
                plan_cur = conn.execute(sql.SQL("EXPLAIN (ANALYZE, BUFFERS) ") + query, params)
            cur = conn.execute(query, params)
        if explain is not None:
            explain.extend(str(r[0]) for r in plan_cur.fetchall())
        return cur.fetchall()


def _params(
    settings: Settings,
    owner_id: int,
    n_chunks: int,
    token_total: int,
    keys: list[str],
    weights: list[float],
    dfs: dict[str, int],
    qvec: np.ndarray | None,
    with_vectors: bool,
    unselective: set[str],
) -> dict[str, Any]:
    # Candidate selection skips keys in more than a tenth of the owner's chunks: they would pull
    # in much of the corpus while adding little to BM25 (they still score through q). When a
    # question has nothing but such words (a paraphrase in everyday words), its full-text list
    # would be noise that RRF ranks above the vector list's real match, so beside vectors it
    # stays empty.
    # An owner whose chunks all fit in one candidate list has no common key to skip: reading
    # every posting costs no more than the list, and the word "Novák" in 2 of 2 chunks is what
    # the question is about, not noise.
    limit_df = max(1, int(COMMON_KEY_SHARE * n_chunks))
    if n_chunks <= SMALL_OWNER_CHUNKS:
        limit_df = max(limit_df, n_chunks)
    selective = [k for k in keys if 0 < dfs.get(k, 0) <= limit_df and k not in unselective]
    if not selective and not with_vectors:
        # full text alone: common words are all there is to go by
        selective = [k for k in keys if dfs.get(k, 0)]
    tsq = " | ".join(f"'{k}'" for k in selective if _SAFE_KEY.match(k))
    return {
        "owner_id": owner_id,
        "keys": keys,
        "weights": weights,
        "dfs": [float(dfs.get(k, 0)) for k in keys],
        "n_chunks": float(n_chunks),
        "avgdl": max(token_total / n_chunks, 1.0) if n_chunks else 1.0,
        "k1": settings.bm25_k1,
        "b": settings.bm25_b,
        "tsq": tsq or "'l:0'",
        "sel": selective,
        "rescore": max(int(settings.fts_rescore), int(settings.candidates)),
        "n": settings.candidates,
        "k": float(settings.rrf_k),
        "w_fts": settings.rrf_weight_fts,
        "w_vec": settings.rrf_weight_vector,
        "vec": qvec,
    }


def searched_question(db: Database, owner_id: int, question: str, lang: str | None = None) -> str:
    """The text a search embeds and keys for ``question``: without the greeting or thanks at its
    edges (:mod:`rag.language.courtesy`), spelled as the owner's corpus spells it when typed
    without diacritics (:mod:`rag.language.diacritics`). Evaluation embeds its questions in
    batches with it."""
    core = core_question(question)
    if not may_restore(core):
        return core
    with db.connection() as conn:
        info = conn.execute(OWNER_INFO, {"owner_id": owner_id}).fetchone()
        corpus_langs = list(info[2]) if info and info[2] else None
        qlang = query_keys(core, lang, corpus_langs).lang
        text = restore(core, qlang, _spellings(conn, owner_id, core))
        conn.commit()
    return text


def _restored_apart(db: Database, owner_id: int, question: str, lang: str | None) -> str | None:
    """The restored question before it is embedded, or None when the lookup fails (the search
    then embeds the question as typed, and its own statements meet and report the failure)."""
    try:
        return searched_question(db, owner_id, question, lang)
    except (psycopg.Error, PoolTimeout) as e:
        log.warning("spelling lookup failed: %s", one_line(e))
        return None


def _spellings(conn: psycopg.Connection, owner_id: int, question: str) -> dict[str, str]:
    """Unaccented form -> the owner's accented spelling of it, for the question's words.

    A form gets the spelling the corpus uses most, if that is at least half of the chunks that
    hold the form in any spelling: the form map's entries of the form count the chunks that
    hold it spelled either way ("recepci" and "recepcí" share ``m:recepci:recepce``), so a
    corpus that mostly writes the form without accents keeps it as typed ("" here). A form
    the corpus does not show is left to the language's dictionary.
    """
    forms = restorable_forms(question)
    if not forms:
        return {}
    prefixes = [p for f in forms for p in (accent_prefix(f), form_map_prefix(f))]
    best: dict[str, tuple[int, str]] = {}
    spelled: dict[str, int] = {}
    holding: dict[str, int] = {}
    for key, df in conn.execute(FORM_MAP, {"owner_id": owner_id, "prefixes": prefixes}):
        form, df = key.split(":")[1], int(df)
        if key.startswith("m:"):
            holding[form] = max(holding.get(form, 0), df)
            continue
        spelling = spelling_from_accent_key(key)
        if spelling is None:
            continue
        spelled[form] = spelled.get(form, 0) + df
        if form not in best or df > best[form][0]:
            best[form] = (df, spelling)
    found = {
        form: spelling
        for form, (df, spelling) in best.items()
        if 2 * df >= max(spelled[form], holding.get(form, 0))
    }
    return {form: found.get(form, "") for form in (*best, *holding)}


def _key_stats(
    conn: psycopg.Connection, owner_id: int, qk: QueryKeys, spoken: Sequence[str]
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The lemma keys that unaccented question words reach through the owner's form map, and the
    document frequency of every key the search may look up (the question's keys, ``spoken``, and
    those lemma keys), in one statement (KEY_STATS)."""
    forms = sorted({w.form for w in qk.words if w.needs_form_map})
    asked = sorted({k for w in qk.words for k in w.keys} | set(spoken))
    if not forms and not asked:
        return {}, {}
    prefixes = [form_map_prefix(f) for f in forms]
    found: dict[str, list[str]] = {}
    dfs: dict[str, int] = {}
    params = {"owner_id": owner_id, "prefixes": prefixes, "keys": asked}
    for key, df, _, _ in conn.execute(KEY_STATS, params):
        if df is None:
            found.setdefault(key.split(":")[1], []).append(lemma_from_form_map_key(key))
        else:
            dfs[key] = int(df)
    return found, dfs


def _weighted_keys(
    qk: QueryKeys, form_keys: dict[str, list[str]], settings: Settings
) -> tuple[list[str], list[float]]:
    best: dict[str, float] = {}
    for w in qk.words:
        for key in (*w.keys, *form_keys.get(w.form, [])):
            if _SAFE_KEY.match(key):
                best[key] = max(best.get(key, 0.0), key_weight(key, settings))
    keys = sorted(best)
    return keys, [best[k] for k in keys]


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _float(v: Any) -> float | None:
    return None if v is None else float(v)
