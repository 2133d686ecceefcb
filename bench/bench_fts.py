"""Full-text retrieval quality: word-key BM25 against what PostgreSQL stacks usually do.

    python bench/bench_fts.py ../shared/eval/ctkfacts --split dev

Reads a corpus folder (docs.jsonl + questions_<split>.jsonl, the format of ../shared/eval) by
path, ingests the documents once into an owner of their own (word keys only, no vectors), and
prints hit@1, hit@5, hit@10 and MRR@10 of:

- word-key BM25: rag's full-text retriever (lemma + stem + half-weight prefix keys, OR, BM25);
- the same keys with lemma keys only (BM25 over plain lemmas);
- the same keys ranked by ts_rank instead of BM25;
- the `simple` tsvector with plainto_tsquery (AND semantics), ranked by ts_rank;
- 4-character prefixes (prefix:* terms, OR) over the `simple` tsvector, ranked by ts_rank.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.db import Database
from rag.ingest.loaders import load_path
from rag.ingest.writer import Ingestor
from rag.language.keys import unaccent
from rag.language.question_keys import query_keys
from rag.search.retrieve import retrieve
from rag.settings import Settings
from rag.store import ensure_owner

TS_RANK_KEYS = """
SELECT d.source_id FROM chunks c JOIN documents d USING (owner_id, document_id)
WHERE c.owner_id = %(o)s AND c.word_keys @@ %(q)s::tsquery
ORDER BY ts_rank(c.word_keys, %(q)s::tsquery) DESC, c.chunk_id LIMIT 50
"""
SIMPLE_AND = """
SELECT d.source_id FROM chunks c JOIN documents d USING (owner_id, document_id)
WHERE c.owner_id = %(o)s AND c.text_tsv @@ plainto_tsquery('simple', rag_unaccent(%(text)s))
ORDER BY ts_rank(c.text_tsv, plainto_tsquery('simple', rag_unaccent(%(text)s))) DESC, c.chunk_id
LIMIT 50
"""
PREFIX_OR = """
SELECT d.source_id FROM chunks c JOIN documents d USING (owner_id, document_id)
WHERE c.owner_id = %(o)s AND c.text_tsv @@ %(q)s::tsquery
ORDER BY ts_rank(c.text_tsv, %(q)s::tsquery) DESC, c.chunk_id LIMIT 50
"""


def metrics(ranked: list[list[str]], gold: list[set[str]]) -> dict[str, float]:
    n = len(gold)
    out = {"hit@1": 0.0, "hit@5": 0.0, "hit@10": 0.0, "mrr@10": 0.0}
    for docs, relevant in zip(ranked, gold, strict=True):
        unique = list(dict.fromkeys(docs))
        for k in (1, 5, 10):
            out[f"hit@{k}"] += any(d in relevant for d in unique[:k]) / n
        for i, d in enumerate(unique[:10], 1):
            if d in relevant:
                out["mrr@10"] += 1 / (i * n)
                break
    return out


def prefix_query(question: str) -> str:
    terms = []
    for word in query_keys(question, "cs").words:
        body = unaccent(word.surface)
        if len(body) >= 4 and body.isalnum():
            terms.append(f"'{body[:4]}':*")
    return " | ".join(dict.fromkeys(terms)) or "'zzzz'"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="folder with docs.jsonl and questions_*.jsonl")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    args = parser.parse_args()
    questions_file = args.corpus / f"questions_{args.split}.jsonl"
    if not questions_file.exists():
        questions_file = args.corpus / "questions.jsonl"
    questions = [json.loads(line) for line in questions_file.open(encoding="utf-8")]
    questions = [q for q in questions if q["relevant"]][: args.limit or None]
    settings = Settings.from_env(embedder="none")
    owner = f"bench-fts:{args.corpus.resolve().name}"
    with Database(settings) as db:
        summary = Ingestor(db, settings, None, owner).add_all(
            load_path(args.corpus / "docs.jsonl", max_bytes=settings.max_upload_bytes),
            workers=settings.prepare_workers,
        )
        print(
            f"corpus: {summary.added + summary.replaced} ingested, {summary.unchanged} reused;"
            f" {len(questions)} questions ({questions_file.name})",
            file=sys.stderr,
        )
        with db.connection() as conn:
            oid = ensure_owner(conn, owner)
            conn.commit()
        lemma_only = settings.replace(weight_stem=0.0, weight_prefix=0.0)

        def rag_bm25(s: Settings) -> Callable[[str], list[str]]:
            return lambda q: [
                c.source_id for c in retrieve(db, s, None, oid, q, mode="fts").candidates
            ]

        def sql_ranked(
            query: str, make: Callable[[str], dict[str, object]]
        ) -> Callable[[str], list[str]]:
            def run(q: str) -> list[str]:
                with db.connection() as conn:
                    rows = conn.execute(query, {"o": oid, **make(q)}).fetchall()
                    conn.commit()
                return [r[0] for r in rows]

            return run

        def keys_or(q: str) -> dict[str, object]:
            keys = sorted({k for w in query_keys(q, "cs").words for k in w.keys})
            return {"q": " | ".join(f"'{k}'" for k in keys) or "'l:0'"}

        systems: dict[str, Callable[[str], list[str]]] = {
            "word-key BM25 (rag)": rag_bm25(settings),
            "lemma keys only, BM25": rag_bm25(lemma_only),
            "word keys, ts_rank": sql_ranked(TS_RANK_KEYS, keys_or),
            "simple tsvector, AND, ts_rank": sql_ranked(SIMPLE_AND, lambda q: {"text": q}),
            "4-char prefixes, OR, ts_rank": sql_ranked(PREFIX_OR, lambda q: {"q": prefix_query(q)}),
        }
        gold = [set(q["relevant"]) for q in questions]
        print(
            f"{'system':<32} {'hit@1':>6} {'hit@5':>6} {'hit@10':>7} {'MRR@10':>7} {'found':>6} {'ms/q':>6}"
        )
        for name, system in systems.items():
            t = time.perf_counter()
            ranked = [system(q["question"]) for q in questions]
            ms = (time.perf_counter() - t) * 1000 / len(questions)
            m = metrics(ranked, gold)
            found = sum(1 for r in ranked if r) / len(ranked)
            print(
                f"{name:<32} {m['hit@1']:>6.3f} {m['hit@5']:>6.3f} {m['hit@10']:>7.3f}"
                f" {m['mrr@10']:>7.3f} {found:>6.2f} {ms:>6.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
