"""The SQL of hybrid retrieval: the owner's statistics, the form map, and one statement whose CTEs
(``q`` the question's keys, ``fts`` BM25 over word keys, ``vec`` cosine distance) are fused by RRF.

:mod:`rag.search.retrieve` assembles the statement from these parts (an empty ``fts`` or ``vec`` when that
retriever is off, a metadata filter's clauses in ``{filter}``) and passes every value as a
parameter.
"""

from __future__ import annotations

from psycopg import sql
from psycopg.types.json import Jsonb

from rag.search.filters import SearchFilter
from rag.store import STANDING_JOIN

OWNER_INFO = """
SELECT chunk_count, token_total,
       (SELECT coalesce(array_agg(lang ORDER BY documents DESC, lang), '{}')
          FROM owner_langs WHERE owner_id = %(owner_id)s),
       (SELECT coalesce(array_agg(documents ORDER BY documents DESC, lang), '{}')
          FROM owner_langs WHERE owner_id = %(owner_id)s)
FROM owners WHERE owner_id = %(owner_id)s
"""
# The form map's entries of each prefix: one primary-key range scan per form ("m:brne:" <= key <
# "m:brne:~"; keys are ASCII below "~"), numbered by prefix (n) and, within it, by df (r).
_FORM_MAP_ROWS = """
FROM unnest(%(prefixes)s::text[]) WITH ORDINALITY AS p(prefix, n)
CROSS JOIN LATERAL (
    SELECT key, df, row_number() OVER (ORDER BY df DESC, key) AS r FROM word_stats
    WHERE owner_id = %(owner_id)s AND key >= p.prefix AND key < p.prefix || '~'
    ORDER BY df DESC, key LIMIT 20
) w
"""
FORM_MAP = "SELECT w.key, w.df" + _FORM_MAP_ROWS
# What a search needs of word_stats before its statement, in one round trip: the form map's entries
# of the question's unaccented words, in FORM_MAP's order, and the document frequency of the
# question's keys (%(keys)s) and of the lemma keys those entries point to ("m:brne:brno" ->
# "l:brno"). Entries come first with a null df; the frequencies follow unordered.
KEY_STATS = (
    "WITH m AS (SELECT w.key, substr(w.key, length(p.prefix) + 1) AS lemma, p.n, w.r"
    + _FORM_MAP_ROWS
    + """)
SELECT key, NULL::integer AS df, n, r FROM m
UNION ALL
SELECT key, df, NULL, NULL FROM word_stats
WHERE owner_id = %(owner_id)s
  AND key = ANY(%(keys)s::text[] || ARRAY(SELECT 'l:' || lemma FROM m WHERE lemma <> ''))
ORDER BY 3, 4
"""
)

# BM25 of the question's keys in each chunk of a candidate set (@CANDIDATES@), best first: both
# full-text statements below score this way and differ only in where their candidates come from.
_BM25_RANKED = """
fts AS (
    SELECT s.chunk_id, s.score, row_number() OVER (ORDER BY s.score DESC, s.chunk_id) AS rank,
           s.matched
    FROM (
        SELECT c.chunk_id,
               sum(q.w * q.idf * (t.tf * (%(k1)s + 1))
                   / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * c.token_count / %(avgdl)s))
                   -- summed in one order whatever the plan: a float sum depends on its order
                   ORDER BY t.lexeme) AS score,
               -- the chunk's question keys, so that fusion need not look for them again
               array_agg(t.lexeme) AS matched
        FROM @CANDIDATES@
        CROSS JOIN LATERAL (
            -- setweight marks the question's keys (stored keys carry weight D), ts_filter keeps
            -- only them: two C passes instead of unnesting every key of the chunk
            SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
            FROM unnest(ts_filter(setweight(c.word_keys, 'A', %(keys)s), '{{a}}')) u
        ) t
        JOIN q ON q.key = t.lexeme
        @WHERE@
        GROUP BY c.chunk_id
        ORDER BY score DESC, c.chunk_id
        LIMIT %(n)s
    ) s
)"""
# Every chunk of the owner that holds a selective key (the GIN index finds them).
FTS = _BM25_RANKED.replace("@CANDIDATES@", "chunks c").replace(
    "@WHERE@", "WHERE c.owner_id = %(owner_id)s AND c.word_keys @@ %(tsq)s::tsquery {filter}"
)
# The same BM25 over a bounded candidate set: the best postings of each selective key (key_top,
# migration 004), ranked by what they add over the cut of their list, and the top %(rescore)s of
# those re-scored exactly. Work grows with the question's keys, not with the owner's corpus.
FTS_TOP = _BM25_RANKED.replace(
    "@CANDIDATES@",
    """(
            -- a chunk missing from a cut list may still hold the key with an impact up to the
            -- cut, so a posting counts for what it adds over the cut (WAND's upper bound)
            SELECT p.chunk_id
            FROM q
            JOIN key_top kt ON kt.owner_id = %(owner_id)s AND kt.key = q.key
            CROSS JOIN LATERAL unnest(kt.chunk_ids, kt.impacts) AS p(chunk_id, impact)
            WHERE q.key = ANY(%(sel)s::text[])
            GROUP BY p.chunk_id
            ORDER BY sum(q.w * q.idf * (p.impact - coalesce(kt.cut, 0))) DESC, p.chunk_id
            LIMIT %(rescore)s
        ) cand
        JOIN chunks c ON c.owner_id = %(owner_id)s AND c.chunk_id = cand.chunk_id""",
).replace("@WHERE@", "")

# How many of an owner's chunks a filter admits, counted up to %(cap)s.
FILTERED_COUNT = """
SELECT count(*) FROM (
    SELECT 1 FROM chunks c WHERE c.owner_id = %(owner_id)s AND c.embed_model = %(model)s {filter}
    LIMIT %(cap)s
) x
"""
Q_SQL = """
q AS (
    SELECT k.key, k.w, ln(1 + (%(n_chunks)s - k.df + 0.5) / (k.df + 0.5)) AS idf
    FROM unnest(%(keys)s::text[], %(weights)s::float8[], %(dfs)s::float8[]) AS k(key, w, df)
)"""
VEC = """
vec AS (
    SELECT v.chunk_id, v.distance, row_number() OVER (ORDER BY v.distance, v.chunk_id) AS rank
    FROM (
        SELECT c.chunk_id, c.embedding::vector({dim}) <=> %(vec)s::vector({dim}) AS distance
        FROM chunks c
        WHERE c.owner_id = %(owner_id)s AND c.embed_model = {model} {filter}
        ORDER BY c.embedding::vector({dim}) <=> %(vec)s::vector({dim})
        LIMIT %(n)s
    ) v
)"""
EMPTY_FTS = "fts AS (SELECT NULL::bigint AS chunk_id, NULL::float8 AS score, NULL::bigint AS rank, NULL::text[] AS matched WHERE false)"
EMPTY_VEC = "vec AS (SELECT NULL::bigint AS chunk_id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"
FUSE = (
    """
SELECT f.chunk_id, c.document_id, d.source_id, d.title, c.text, d.lang,
       f.fts_rank, f.score, f.vector_rank,
       coalesce(f.distance, {late_distance}) AS distance, f.rrf,
       -- the question's keys in the chunk: fts found them for its candidates; for the vector
       -- list's others, the same setweight/ts_filter passes (comparing each of the chunk's keys
       -- with the question's cost ~5 ms per search); coalesce runs the second only when needed
       coalesce((SELECT array_agg(m ORDER BY m) FROM unnest(f.matched) m),
                (SELECT coalesce(array_agg(u.lexeme ORDER BY u.lexeme), '{{}}')
                   FROM unnest(ts_filter(setweight(c.word_keys, 'A', %(keys)s), '{{a}}')) u))
           AS matched,
       -- the document's standing (rag.ingest.freshness), read here rather than by a statement
       -- of its own after fusion: the search then hides the superseded and ranks the stale last
       lower(d.metadata->>'status') = 'stale' AS stale, sup.source_id AS superseded_by
FROM (
    SELECT coalesce(fts.chunk_id, vec.chunk_id) AS chunk_id,
           fts.rank AS fts_rank, fts.score, vec.rank AS vector_rank, vec.distance, fts.matched,
           coalesce(%(w_fts)s / (%(k)s + fts.rank), 0) + coalesce(%(w_vec)s / (%(k)s + vec.rank), 0) AS rrf
    FROM fts FULL OUTER JOIN vec ON fts.chunk_id = vec.chunk_id
) f
JOIN chunks c ON c.owner_id = %(owner_id)s AND c.chunk_id = f.chunk_id
JOIN documents d ON d.owner_id = c.owner_id AND d.document_id = c.document_id"""
    + STANDING_JOIN
    + """
ORDER BY f.rrf DESC, least(coalesce(f.fts_rank, 1e9), coalesce(f.vector_rank, 1e9)), f.chunk_id
"""
)

# The chunks' sentences as ingestion analysed them (migration 009), if by this code's rules
# (%(analysis_version)s) and in the language of the chunk's document (%(langs)s, in the order
# of %(ids)s): judging decodes them instead of analysing. Read apart from the candidates, for
# those judging asks for (rag.search.retrieve.AnalysisReader).
ANALYSES = """
SELECT a.chunk_id, a.analysis::text
FROM unnest(%(ids)s::bigint[], %(langs)s::text[]) AS w(chunk_id, lang)
JOIN chunk_analyses a ON a.owner_id = %(owner_id)s AND a.chunk_id = w.chunk_id
     AND a.version = %(analysis_version)s AND a.lang = w.lang
"""


def filter_clause(
    f: SearchFilter | None, *, per_row: bool = False
) -> tuple[sql.Composable, dict[str, object]]:
    """``AND ...`` conditions on chunk ``c`` for a filter, and their parameters (values only).

    Args:
        per_row: test each chunk's document in a subquery the planner cannot turn into a join,
            so the scan stays the HNSW index's (a join could start from the documents the
            filter admits and compute exact distances for all of their chunks).
    """
    if f is None or f.empty:
        return sql.SQL(""), {}
    conds: list[str] = []
    params: dict[str, object] = {}
    if f.source_prefix:
        conds.append("starts_with(fd.source_id, %(f_prefix)s)")
        params["f_prefix"] = f.source_prefix
    if f.metadata:
        conds.append("fd.metadata @> %(f_meta)s")
        params["f_meta"] = Jsonb(dict(f.metadata))
    if f.lang:
        conds.append("fd.lang = %(f_lang)s")
        params["f_lang"] = f.lang
    if f.date_from or f.date_to:
        # ISO dates compare as text; a metadata.date that is not one falls back to ingestion day
        day = (
            "coalesce(CASE WHEN fd.metadata->>'date' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}'"
            " THEN left(fd.metadata->>'date', 10) END,"
            " to_char(fd.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'))"
        )
        if f.date_from:
            conds.append(f"{day} >= %(f_from)s")
            params["f_from"] = f.date_from.isoformat()
        if f.date_to:
            conds.append(f"{day} <= %(f_to)s")
            params["f_to"] = f.date_to.isoformat()
    clause = ""
    if conds and per_row:
        clause = (
            " AND coalesce((SELECT " + " AND ".join(conds) + " FROM documents fd"
            " WHERE fd.owner_id = c.owner_id AND fd.document_id = c.document_id), false)"
        )
    elif conds:
        clause = (
            " AND EXISTS (SELECT 1 FROM documents fd WHERE fd.owner_id = c.owner_id"
            " AND fd.document_id = c.document_id AND " + " AND ".join(conds) + ")"
        )
    if f.exclude_document_ids:
        clause += " AND c.document_id <> ALL(%(f_exclude)s::bigint[])"
        params["f_exclude"] = list(f.exclude_document_ids)
    return sql.SQL(clause), params
