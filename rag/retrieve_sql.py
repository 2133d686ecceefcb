"""The SQL of hybrid retrieval: the owner's statistics, the form map, and one statement whose CTEs
(``q`` the question's keys, ``fts`` BM25 over word keys, ``vec`` cosine distance) are fused by RRF.

:mod:`rag.retrieve` assembles the statement from these parts (an empty ``fts`` or ``vec`` when that
retriever is off) and passes every value as a parameter.
"""

OWNER_INFO = """
SELECT chunk_count, token_total,
       (SELECT coalesce(array_agg(lang ORDER BY documents DESC, lang), '{}')
          FROM owner_langs WHERE owner_id = %(owner_id)s),
       (SELECT coalesce(array_agg(documents ORDER BY documents DESC, lang), '{}')
          FROM owner_langs WHERE owner_id = %(owner_id)s)
FROM owners WHERE owner_id = %(owner_id)s
"""
# One primary-key range scan per form ("m:brne:" <= key < "m:brne:~"; keys are ASCII below "~").
FORM_MAP = """
SELECT w.key FROM unnest(%(prefixes)s::text[]) AS p(prefix)
CROSS JOIN LATERAL (
    SELECT key FROM word_stats
    WHERE owner_id = %(owner_id)s AND key >= p.prefix AND key < p.prefix || '~'
    ORDER BY df DESC LIMIT 20
) w
"""
KEY_DF = "SELECT key, df FROM word_stats WHERE owner_id = %(owner_id)s AND key = ANY(%(keys)s)"

FTS = """
fts AS (
    SELECT s.chunk_id, s.score, row_number() OVER (ORDER BY s.score DESC, s.chunk_id) AS rank
    FROM (
        SELECT c.chunk_id,
               sum(q.w * q.idf * (t.tf * (%(k1)s + 1))
                   / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * c.token_count / %(avgdl)s))) AS score
        FROM chunks c
        CROSS JOIN LATERAL (
            -- setweight marks the question's keys (stored keys carry weight D), ts_filter keeps
            -- only them: two C passes instead of unnesting every key of the chunk
            SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
            FROM unnest(ts_filter(setweight(c.word_keys, 'A', %(keys)s), '{a}')) u
        ) t
        JOIN q ON q.key = t.lexeme
        WHERE c.owner_id = %(owner_id)s AND c.word_keys @@ %(tsq)s::tsquery
        GROUP BY c.chunk_id
        ORDER BY score DESC, c.chunk_id
        LIMIT %(n)s
    ) s
)"""
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
        WHERE c.owner_id = %(owner_id)s AND c.embed_model = {model}
        ORDER BY c.embedding::vector({dim}) <=> %(vec)s::vector({dim})
        LIMIT %(n)s
    ) v
)"""
EMPTY_FTS = "fts AS (SELECT NULL::bigint AS chunk_id, NULL::float8 AS score, NULL::bigint AS rank WHERE false)"
EMPTY_VEC = "vec AS (SELECT NULL::bigint AS chunk_id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false)"
FUSE = """
SELECT f.chunk_id, c.document_id, d.source_id, d.title, c.text, d.lang,
       f.fts_rank, f.score, f.vector_rank,
       coalesce(f.distance, {late_distance}) AS distance, f.rrf,
       -- the question's keys in the chunk, by the same setweight/ts_filter passes as in fts
       -- (comparing each of the chunk's keys with the question's cost ~5 ms per search)
       (SELECT coalesce(array_agg(u.lexeme ORDER BY u.lexeme), '{{}}')
          FROM unnest(ts_filter(setweight(c.word_keys, 'A', %(keys)s), '{{a}}')) u) AS matched
FROM (
    SELECT coalesce(fts.chunk_id, vec.chunk_id) AS chunk_id,
           fts.rank AS fts_rank, fts.score, vec.rank AS vector_rank, vec.distance,
           coalesce(%(w_fts)s / (%(k)s + fts.rank), 0) + coalesce(%(w_vec)s / (%(k)s + vec.rank), 0) AS rrf
    FROM fts FULL OUTER JOIN vec ON fts.chunk_id = vec.chunk_id
) f
JOIN chunks c ON c.owner_id = %(owner_id)s AND c.chunk_id = f.chunk_id
JOIN documents d ON d.owner_id = c.owner_id AND d.document_id = c.document_id
ORDER BY f.rrf DESC, least(coalesce(f.fts_rank, 1e9), coalesce(f.vector_rank, 1e9)), f.chunk_id
"""
