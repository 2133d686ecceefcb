"""Ingestion throughput: parse + chunk + keys + COPY, and embedding, on synthetic Czech documents.

    python bench/bench_ingest.py                      # N = 10,000 and 100,000 chunks
    python bench/bench_ingest.py --sizes 2000 --embed-sample 64

Prints chunks per second for everything except embedding (the target is 5,000 chunks/s on two
cores), the same with a row-by-row INSERT baseline in the same run, and, separately, passage
embedding throughput of the configured embedder measured on a sample. Uses DATABASE_URL, or an
embedded PostgreSQL in a temporary directory.
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

from rag.db import Database
from rag.embedders import make_embedder
from rag.ingest import Ingestor
from rag.loaders import load_path
from rag.prepare import prepare
from rag.settings import Settings

SAMPLE = Path(__file__).resolve().parent.parent / "rag" / "sample"


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


def run(settings: Settings, n: int, workdir: Path, baseline: bool) -> dict[str, float]:
    path = workdir / f"syn-{n}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for doc in synthetic_documents(n, settings.chunk_size):
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    owner = f"bench-{n}-{time.time_ns()}"
    with Database(settings) as db:
        t0 = time.perf_counter()
        ing = Ingestor(db, settings, None, owner)
        summary = ing.add_all(
            load_path(path, max_bytes=settings.max_upload_bytes), workers=settings.ingest_workers
        )
        total = time.perf_counter() - t0
        result = {
            "chunks": summary.chunks,
            "seconds": total,
            "chunks_per_s": summary.chunks / total,
        }
        # the CPU part alone, to see where the time goes
        t1 = time.perf_counter()
        prepared = [
            prepare(d, settings) for d in load_path(path, max_bytes=settings.max_upload_bytes)
        ]  # type: ignore[arg-type]
        result["prepare_per_s"] = sum(len(p.chunks) for p in prepared) / (time.perf_counter() - t1)
        if baseline:
            # row by row is slow enough that a 1,000-chunk sample gives a stable rate
            rows = [(p, c) for p in prepared for c in p.chunks][:1000]
            prepared = prepared[: len({p.doc.source_id for p, _ in rows})]
            with db.connection() as conn:
                oid = conn.execute(
                    "INSERT INTO owners (name) VALUES (%s) RETURNING owner_id", (owner + "-rows",)
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
                result["rows_insert_per_s"] = len(rows) / (time.perf_counter() - t2)
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
            f"{'N':>8} {'chunks':>8} {'s':>7} {'ingest chunks/s':>16} {'prepare chunks/s':>17} "
            f"{'row INSERT chunks/s':>20}"
        )
        for n in args.sizes:
            r = run(settings, n, Path(tmp), baseline=not args.no_baseline)
            rows = f"{r['rows_insert_per_s']:>20,.0f}" if "rows_insert_per_s" in r else f"{'-':>20}"
            print(
                f"{n:>8,} {r['chunks']:>8,.0f} {r['seconds']:>7.1f} {r['chunks_per_s']:>16,.0f} "
                f"{r['prepare_per_s']:>17,.0f} {rows}",
                flush=True,
            )
        model, rate = embed_rate(settings, args.embed_sample)
        print(
            f"embedding ({model}): {rate:,.1f} passages/s on {args.embed_sample} passages of "
            f"~{settings.chunk_size} characters"
        )


if __name__ == "__main__":
    main()
