"""Retrieval quality, the filter's shares, search latency and HNSW recall on an external corpus.

Usage:
    python bench/bench_retrieval.py ../shared/eval/ctkfacts [--split dev] [--ef 10,20,40,100,200]

The folder holds docs.jsonl, questions_<split>.jsonl and questions_noanswer_<split>.jsonl (the
last is optional). The corpus goes into its evaluation owner once (as ``rag eval`` does) and is
reused. Settings come from the environment (RAG_DATA_DIR, DATABASE_URL, RAG_EMBEDDER, ...); the
filter is the calibration profile that applies to the embedder.

Prints:
    quality     hit@1, hit@5, MRR@10 of fts, vector and hybrid over the answerable questions
    filter      answerable questions whose gold source the filter kept among the answer's sources,
                and no-answer questions it refused
    latency     p50 / p95 of one hybrid search without the question's embedding
                (Retrieval.timings_ms["sql"]: the database side, with the exact vector scan small
                owners get)
    answerability  p50 / p95 of the answerability stage per question: judge() with the profile
                minus judge() with the stage off, over the same retrievals; cold (every chunk's
                sentences analysed afresh) and warm (the per-chunk sentence cache filled), beside
                the search time and with the candidates per question; then, for a profile with
                the pull (rag.search.pull), the questions that needed it and their whole judge()
                time, the embedding of the question without its missing words included
    hnsw        recall@10 of the HNSW index against the exact scan (exact_scan_below=0) and its
                p50 / p95 latency, for each ef_search
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from rag.answer.engine import Engine
from rag.db import Database
from rag.embedders import make_embedder
from rag.eval.metrics import retrieval_metrics, score
from rag.eval.sets import corpus_owner, external_set
from rag.search.answerability import sentences
from rag.search.pull import PULL_OFF, PullProbe
from rag.search.relevance import FilterParams, judge
from rag.search.retrieve import Retrieval, retrieve
from rag.settings import Settings


def percentile(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


def stage_timings(retrievals: list[Retrieval], params: FilterParams, search_p50: float) -> None:
    """Print what the answerability stage adds to judging, cold and warm, beside the search."""
    off = replace(params, answer_window=0)
    with_pull = params if params.answer_window > 0 else replace(params, answer_window=2)
    # the stage's own checks first; the pull (an embedding per question that needs it) apart
    on = replace(with_pull, paraphrase_min_pull=PULL_OFF)
    base = []
    for r in retrievals:
        t = time.perf_counter()
        judge(r, off)
        base.append((time.perf_counter() - t) * 1000)
    runs: dict[str, list[float]] = {}
    for kind in ("cold", "warm"):
        if kind == "cold":
            sentences.cache_clear()
        runs[kind] = []
        for r, b in zip(retrievals, base, strict=True):
            t = time.perf_counter()
            judge(r, on)
            runs[kind].append((time.perf_counter() - t) * 1000 - b)
    pulls: list[float] = []
    asked = 0
    if with_pull.paraphrase_min_pull > PULL_OFF:
        for r in retrievals:
            if isinstance(r.pull, PullProbe):
                r.pull.forget()  # the filter's figures above already computed them
            t = time.perf_counter()
            judged = judge(r, with_pull)
            ms = (time.perf_counter() - t) * 1000
            if any(j.pull is not None for j in judged):
                asked += 1
                pulls.append(ms)
    n = [len(r.candidates) for r in retrievals]
    print(
        f"\nanswerability stage (window {on.answer_window}), {statistics.median(n):.0f} candidates "
        f"per question (p50), search p50 {search_p50:.1f} ms:"
    )
    print(f"  judge() without the stage  p50 {percentile(base, 50):.2f} ms")
    for kind, ms in runs.items():
        print(
            f"  stage, {kind:<4} cache        p50 {percentile(ms, 50):.2f} ms, "
            f"p95 {percentile(ms, 95):.2f} ms  ({percentile(ms, 50) / search_p50:.2f} x search)"
        )
    if with_pull.paraphrase_min_pull > PULL_OFF:
        print(
            f"  the pull (paraphrase_min_pull {with_pull.paraphrase_min_pull:g}): asked for "
            f"{asked}/{len(retrievals)} questions; judge() of those, embedding the question "
            f"without its missing words, p50 {percentile(pulls, 50):.2f} ms, "
            f"p95 {percentile(pulls, 95):.2f} ms"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--ef", default="10,20,40,100,200", help="ef_search values for HNSW recall")
    ap.add_argument("--batch", type=int, default=64, help="questions embedded per call")
    ap.add_argument("--skip-hnsw", action="store_true", help="leave out the HNSW recall table")
    args = ap.parse_args()

    folder: Path = args.folder
    noanswer = folder / f"questions_noanswer_{args.split}.jsonl"
    evalset = external_set(
        folder / "docs.jsonl",
        [folder / f"questions_{args.split}.jsonl"],
        [noanswer] if noanswer.exists() else [],
        f"{folder.name}",
    )
    settings = Settings.from_env()
    embedder = make_embedder(settings)
    if embedder is None:
        sys.exit("bench_retrieval needs an embedder (RAG_EMBEDDER)")
    db = Database(settings)
    owner, owner_id = corpus_owner(db, settings, embedder, evalset)
    engine = Engine(db, settings, embedder)
    cases = evalset.cases
    print(
        f"{evalset.name} {args.split}: {len(cases)} questions "
        f"({sum(c.answerable for c in cases)} answerable), owner {owner}, model {embedder.model_id}"
    )
    print(f"profile: {engine.profile_path or 'none (settings values)'}")

    started = time.perf_counter()
    questions = [engine.validate(c.question) for c in cases]
    vectors = np.vstack(
        [
            embedder.embed(questions[i : i + args.batch], kind="query")
            for i in range(0, len(questions), args.batch)
        ]
    )
    embed_s = time.perf_counter() - started
    print(
        f"query embedding: {embed_s / len(questions) * 1000:.1f} ms per question (batches of {args.batch})"
    )

    retrievals = [
        engine.search(owner_id, q, vector=v).retrieval
        for q, v in zip(questions, vectors, strict=True)
    ]
    report = score(engine, evalset.name, cases, retrievals, engine.params)

    print("\nquality (answerable)   hit@1  hit@5  MRR@10")
    for mode, m in retrieval_metrics(report.results).items():
        print(f"  {mode:<20} {m['hit@1']:.3f}  {m['hit@5']:.3f}  {m['mrr@10']:.3f}")
    f = report.figures
    print("\nfilter")
    print(f"  answerable kept     {f.answer_recall:.3f} ({f.recalled}/{f.answerable})")
    if f.no_answer:
        kept = f.no_answer - f.false_answers
        print(f"  no-answer refused   {kept / f.no_answer:.3f} ({kept}/{f.no_answer})")
    sql_ms = [r.timings_ms["sql"] for r in retrievals]
    print(
        f"\nlatency of hybrid search without embedding: p50 {percentile(sql_ms, 50):.1f} ms, "
        f"p95 {percentile(sql_ms, 95):.1f} ms ({len(sql_ms)} searches, exact vector scan "
        f"below {settings.exact_scan_below} chunks)"
    )

    stage_timings(retrievals, engine.params, percentile(sql_ms, 50))
    if args.skip_hnsw:
        db.close()
        return
    exact = [
        [
            c.chunk_id
            for c in sorted(
                (c for c in r.candidates if c.vector_rank is not None), key=lambda c: c.vector_rank
            )
        ][:10]
        for r in retrievals
    ]
    print("\nhnsw (exact_scan_below=0)  recall@10  p50 ms  p95 ms")
    for ef in [int(x) for x in args.ef.split(",") if x.strip()]:
        hnsw = settings.replace(exact_scan_below=0, ef_search=ef)
        recalls, ms = [], []
        for q, v, want in zip(questions, vectors, exact, strict=True):
            r = retrieve(db, hnsw, embedder, owner_id, q, mode="vector", vector=v)
            got = {
                c.chunk_id
                for c in r.candidates
                if c.vector_rank is not None and c.vector_rank <= 10
            }
            if want:
                recalls.append(len(got & set(want)) / len(want))
            ms.append(r.timings_ms["sql"])
        print(
            f"  ef_search {ef:<14} {statistics.fmean(recalls):.4f}     "
            f"{percentile(ms, 50):6.1f}  {percentile(ms, 95):6.1f}"
        )
    db.close()


if __name__ == "__main__":
    main()
