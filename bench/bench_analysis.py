"""A chunk's sentence analysis: computed by the answerability rules against decoded from storage.

    python bench/bench_analysis.py [--chunks 2000]

Chunks of the synthetic Czech documents of bench_ingest.py (its vocabulary: the shipped sample),
each analysed by :func:`rag.search.answerability.sentences` without its cache (what a search
does for a chunk its process has not seen, and what the analysis worker stores), then read back
from the stored JSON as a search reads it (:func:`stored_sentences`: parse and rebuild). Prints
both per chunk, their ratio and the stored size, in one run. No database.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_ingest import synthetic_documents
from rag.ingest.analysis_queue import analysis_json
from rag.ingest.chunking import chunk_text
from rag.search.answerability import sentences, stored_sentences
from rag.settings import Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=2000)
    args = ap.parse_args()
    settings = Settings()
    texts = [
        c.text
        for d in synthetic_documents(args.chunks, settings.chunk_size)
        for c in chunk_text(d["text"], size=settings.chunk_size, overlap=settings.chunk_overlap)
    ][: args.chunks]
    for t in texts[:50]:  # the lemma dictionary and the word cache, outside the timing
        sentences.__wrapped__(t, "cs")
    analyse, decode = [], []
    stored = []
    for t in texts:
        start = time.perf_counter()
        sentences.__wrapped__(t, "cs")
        analyse.append(time.perf_counter() - start)
        stored.append(analysis_json(t, "cs"))
    for t, s in zip(texts, stored, strict=True):
        start = time.perf_counter()
        stored_sentences(t, "cs", s)
        decode.append(time.perf_counter() - start)
    a, d = statistics.median(analyse) * 1e3, statistics.median(decode) * 1e3
    size = statistics.fmean(len(s.encode()) for s in stored)
    print(f"{len(texts)} chunks of {settings.chunk_size} characters, one run, median per chunk")
    print(f"  analysed by the rules      {a:8.3f} ms")
    print(f"  decoded from storage       {d:8.3f} ms  ({a / d:.1f}x cheaper)")
    print(f"  stored JSON                {size:8.0f} bytes per chunk")


if __name__ == "__main__":
    main()
