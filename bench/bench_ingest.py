"""Ingestion throughput: parse + chunk + keys + COPY, and embedding, on synthetic Czech documents.

    python bench/bench_ingest.py                      # N = 10,000 and 100,000 chunks
    python bench/bench_ingest.py --sizes 2000 --embed-sample 64

Prints chunks per second for everything except embedding (`rag ingest` commits text, keys and
statistics and leaves the vectors queued), each load into an empty database of its own: as an
ordinary load and in bulk mode (the GIN indexes dropped after the first fifth of the load, or
RAG_BULK_LOAD_CHUNKS, and built at the end; ``*`` marks a load that did not switch), beside the
CPU part alone in one process and a row-by-row INSERT baseline, all in the same run. Also the time
until the first question can be answered (the load plus one search by words), and, separately,
passage embedding throughput of the configured embedder measured on a sample. Uses DATABASE_URL's
server, or an embedded PostgreSQL in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg
from psycopg import sql

from rag.answer.engine import Engine
from rag.db import Database, database_url
from rag.embedders import make_embedder
from rag.ingest.loaders import load_path
from rag.ingest.prepare import PreparedDocument, prepare
from rag.ingest.writer import Ingestor
from rag.settings import Settings

SAMPLE = Path(__file__).resolve().parent.parent / "rag" / "sample"
FIRST_QUESTION = "Kdo vydává parkovací karty?"


def vocabulary() -> list[str]:
    words: list[str] = []
    for path in sorted(SAMPLE.rglob("*")):
        if path.suffix in (".md", ".txt", ".jsonl"):
            words.extend(
                w.strip(".,;:!?()\"'„“#*-") for w in path.read_text(encoding="utf-8").split()
            )
    return [w for w in words if w and not w.startswith("{")]


def synthetic_documents(n_chunks: int, chunk_chars: int, seed: int = 7) -> list[dict[str, str]]:
    """Documents of four paragraphs each; words drawn with their corpus frequency (Zipf-like)."""
    rng = random.Random(seed)
    vocab = vocabulary()
    docs = []
    per_doc = 4
    for d in range(max(1, n_chunks // per_doc)):
        paragraphs = []
        for _ in range(per_doc):
            sentences, size = [], 0
            while size < chunk_chars * 0.85:
                s = " ".join(rng.choice(vocab) for _ in range(rng.randint(6, 16)))
                s = s[0].upper() + s[1:] + "."
                sentences.append(s)
                size += len(s) + 1
            paragraphs.append(" ".join(sentences))
        docs.append(
            {
                "id": f"syn-{d}",
                "title": f"Dokument {d}",
                "lang": "cs",
                "text": "\n\n".join(paragraphs),
            }
        )
    return docs


def fresh_database(settings: Settings, label: str) -> Settings:
    """Settings pointing at a new, migrated database on the same server: bulk mode depends on
    how much the table already holds, so every measured load starts from an empty one."""
    url = database_url(settings)
    name = f"bench_{label}_{time.time_ns()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return settings.replace(database_url=psycopg.conninfo.make_conninfo(**info))


def drop_database(settings: Settings) -> None:
    name = psycopg.conninfo.conninfo_to_dict(settings.database_url or "")["dbname"]
    info = psycopg.conninfo.conninfo_to_dict(settings.database_url or "")
    info["dbname"] = "postgres"
    with psycopg.connect(psycopg.conninfo.make_conninfo(**info), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def load(settings: Settings, path: Path, bulk_after: int) -> dict[str, float]:
    """One ``rag ingest`` of ``path`` into an empty database, then the first question by words."""
    settings = fresh_database(settings, "bulk" if bulk_after else "plain")
    try:
        with Database(settings) as db:
            t0 = time.perf_counter()
            ing = Ingestor(db, settings, None, "bench", bulk_after=bulk_after)
            summary = ing.add_all(
                load_path(path, max_bytes=settings.max_upload_bytes),
                workers=settings.prepare_workers,
            )
            total = time.perf_counter() - t0
            t1 = time.perf_counter()
            hits = Engine(db, settings, None).search(ing.owner_id, FIRST_QUESTION, mode="fts").hits
            first = time.perf_counter() - t1
            if not hits:
                print(f"note: the first question found nothing in {path.name}", file=sys.stderr)
        return {
            "chunks": summary.chunks,
            "seconds": total,
            "chunks_per_s": summary.chunks / total,
            "bulk": float(ing.bulk_used),
            "first_question_s": total + first,
        }
    finally:
        drop_database(settings)


def row_inserts(settings: Settings, prepared: list[PreparedDocument]) -> float:
    """Chunks/s of one INSERT per document and per chunk, on the first 1,000 chunks."""
    rows = [(p, c) for p in prepared for c in p.chunks][:1000]
    prepared = prepared[: len({p.doc.source_id for p, _ in rows})]
    settings = fresh_database(settings, "rows")
    try:
        with Database(settings) as db, db.connection() as conn:
            oid = conn.execute(
                "INSERT INTO owners (name) VALUES (%s) RETURNING owner_id", ("rows",)
            ).fetchone()[0]
            conn.commit()
            t2 = time.perf_counter()
            with conn.transaction():
                doc_ids = {}
                for p in prepared:
                    doc_ids[p.doc.source_id] = conn.execute(
                        "INSERT INTO documents (owner_id, source_id, title, lang, content_hash,"
                        " char_count) VALUES (%s, %s, %s, %s, %s, %s) RETURNING document_id",
                        (
                            oid,
                            p.doc.source_id,
                            p.doc.title,
                            p.lang,
                            p.content_hash,
                            len(p.doc.text),
                        ),
                    ).fetchone()[0]
                for p, c in rows:
                    conn.execute(
                        "INSERT INTO chunks (owner_id, document_id, ordinal, text, char_count,"
                        " token_count, word_keys) VALUES (%s, %s, %s, %s, %s, %s, %s::tsvector)",
                        (
                            oid,
                            doc_ids[p.doc.source_id],
                            c.ordinal,
                            c.text,
                            len(c.text),
                            c.token_count,
                            c.word_keys,
                        ),
                    )
            return len(rows) / (time.perf_counter() - t2)
    finally:
        drop_database(settings)


def run(settings: Settings, n: int, workdir: Path, baseline: bool) -> dict[str, float]:
    path = workdir / f"syn-{n}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for doc in synthetic_documents(n, settings.chunk_size):
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    plain = load(settings, path, bulk_after=0)
    bulk = load(settings, path, bulk_after=max(1, min(settings.bulk_load_chunks, n // 5)))
    result = {
        **plain,
        "bulk_chunks_per_s": bulk["chunks_per_s"],
        "bulk_used": bulk["bulk"],
        "bulk_first_question_s": bulk["first_question_s"],
    }
    # the CPU part alone, in one process, to see where the time goes
    t1 = time.perf_counter()
    prepared = [
        prepare(d, settings)  # type: ignore[arg-type]
        for d in load_path(path, max_bytes=settings.max_upload_bytes)
    ]
    result["prepare_per_s"] = sum(len(p.chunks) for p in prepared) / (time.perf_counter() - t1)
    if baseline:
        result["rows_insert_per_s"] = row_inserts(settings, prepared)
    return result


def embed_rate(settings: Settings, n: int) -> tuple[str, float]:
    embedder = make_embedder(settings)
    if embedder is None:
        return "none", 0.0
    texts = [
        doc["text"].split("\n\n")[0] for doc in synthetic_documents(n * 4, settings.chunk_size)
    ][:n]
    embedder.embed(texts[:2], kind="passage")  # load the model outside the timing
    t = time.perf_counter()
    embedder.embed(texts, kind="passage")
    return embedder.model_id, len(texts) / (time.perf_counter() - t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--embed-sample", type=int, default=128, help="passages to embed for the embedding figure"
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the row-by-row INSERT baseline (measured on 1,000 chunks)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = (
            Settings.from_env(data_dir=Path(tmp) / "data")
            if "DATABASE_URL" not in __import__("os").environ
            else Settings.from_env()
        )
        print(
            f"{'N':>8} {'chunks':>8} {'s':>7} {'chunks/s':>9} {'bulk chunks/s':>14} "
            f"{'prepare/s 1 proc':>17} {'row INSERT/s':>13} {'1st question s':>15} "
            f"{'bulk 1st q s':>13}"
        )
        results = []
        for n in args.sizes:
            r = run(settings, n, Path(tmp), baseline=not args.no_baseline)
            results.append(r)
            rows = f"{r['rows_insert_per_s']:>13,.0f}" if "rows_insert_per_s" in r else f"{'-':>13}"
            print(
                f"{n:>8,} {r['chunks']:>8,.0f} {r['seconds']:>7.1f} {r['chunks_per_s']:>9,.0f} "
                f"{r['bulk_chunks_per_s']:>13,.0f}{'' if r['bulk_used'] else '*'} "
                f"{r['prepare_per_s']:>17,.0f} {rows} {r['first_question_s']:>15.1f} "
                f"{r['bulk_first_question_s']:>13.1f}",
                flush=True,
            )
        model, rate = embed_rate(settings, args.embed_sample)
        print(
            f"embedding ({model}): {rate:,.1f} passages/s on {args.embed_sample} passages of "
            f"~{settings.chunk_size} characters"
        )
        if rate:
            for n, r in zip(args.sizes, results, strict=True):
                print(
                    f"N = {n:,}: the first question is answerable (by words) after "
                    f"{r['first_question_s']:.1f} s; embedding inline, as before, it would "
                    f"wait ~{r['seconds'] + r['chunks'] / rate:,.0f} s; the vectors follow "
                    f"in the background in ~{r['chunks'] / rate:,.0f} s"
                )


if __name__ == "__main__":
    main()
