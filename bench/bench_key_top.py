"""What the key_top triggers (migration 004) cost the write path, and what a delete costs.

    python bench/bench_key_top.py [--chunks 4000] [--rounds 3]

Prepares documents of real sentences (../shared/eval, read by path) once, then writes the same
prepared chunks into fresh owners, alternating rounds with the key_top triggers enabled and
disabled (ALTER TABLE ... DISABLE TRIGGER, inside the benchmark's own database only), and prints
database-only chunks/s for both, their ratio, and the time to delete a tenth of the documents
with the triggers on (the lists lose postings and thinned lists are rebuilt).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_scale import documents, sentences
from rag.db import Database
from rag.ingest.prepare import prepare
from rag.ingest.writer import Ingestor
from rag.settings import Settings

TRIGGERS = ("chunks_top_added", "chunks_top_removed")


def write(db: Database, settings: Settings, owner: str, prepared: list) -> float:  # type: ignore[type-arg]
    ing = Ingestor(db, settings, None, owner)
    t = time.perf_counter()
    for p in prepared:
        ing._enqueue(p)
    ing.flush()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval"
    )
    args = ap.parse_args()
    settings = Settings.from_env(embedder="none")
    prepared = [prepare(d, settings) for d in documents(sentences(args.eval), args.chunks, seed=4)]
    n = sum(len(p.chunks) for p in prepared)
    rates: dict[bool, list[float]] = {True: [], False: []}
    with Database(settings) as db:
        stamp = time.time_ns()
        try:
            for r in range(args.rounds):
                for on in (True, False):
                    with db.connection() as conn:
                        verb = "ENABLE" if on else "DISABLE"
                        for t in TRIGGERS:
                            conn.execute(f"ALTER TABLE chunks {verb} TRIGGER {t}")
                        conn.commit()
                    took = write(db, settings, f"kt-{stamp}-{r}-{on}", prepared)
                    rates[on].append(n / took)
        finally:
            with db.connection() as conn:
                for t in TRIGGERS:
                    conn.execute(f"ALTER TABLE chunks ENABLE TRIGGER {t}")
                conn.commit()
        with db.connection() as conn:
            oid = conn.execute(
                "SELECT owner_id FROM owners WHERE name = %s", (f"kt-{stamp}-0-True",)
            ).fetchone()[0]
            t = time.perf_counter()
            conn.execute(
                "DELETE FROM documents WHERE owner_id = %s AND document_id %% 10 = 0", (oid,)
            )
            conn.commit()
            delete_s = time.perf_counter() - t
            for r in range(args.rounds):
                for on in (True, False):
                    conn.execute("DELETE FROM owners WHERE name = %s", (f"kt-{stamp}-{r}-{on}",))
            conn.commit()
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"{n} chunks written {args.rounds} times each way (database only, median)")
    print(f"  with key_top triggers     {on:8.0f} chunks/s")
    print(f"  without                   {off:8.0f} chunks/s")
    print(f"  ratio                     {on / off:8.2f}")
    print(f"  deleting a tenth of the documents with the triggers on: {delete_s * 1000:.0f} ms")


if __name__ == "__main__":
    main()
