-- 010: key_top (004) kept at a lower cost per write, and rebuilt in one pass after a bulk load.
--
-- Measured on 4,000-chunk writes (bench/bench_key_top.py), 004's triggers cut the database write
-- rate to under half: a plpgsql merge per key and statement, and a foreign-key check per new list
-- row, cost more than the rows themselves. Here:
--
-- * no foreign key to owners (word_stats has none either): the delete trigger empties an owner's
--   lists when its chunks go, including through the cascade from a deleted owner;
-- * the insert trigger appends a statement's postings to each key's list in plain SQL and skips a
--   cut list unless one of them beats its cut; only lists that went over 256 are cut back after,
--   so a list may hold more than 256 postings inside a statement (the check is relaxed to match);
-- * rag_key_top_rebuild(owner_id) rebuilds an owner's lists from its chunks in slices of chunk
--   ids, for loads that run with the two key_top triggers disabled.

ALTER TABLE key_top DROP CONSTRAINT key_top_owner_id_fkey;
ALTER TABLE key_top DROP CONSTRAINT key_top_check;
ALTER TABLE key_top ADD CONSTRAINT key_top_same_length
    CHECK (cardinality(chunk_ids) = cardinality(impacts));

CREATE OR REPLACE FUNCTION rag_key_top_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over_owners bigint[];
    over_keys text[];
BEGIN
    WITH added AS (
        INSERT INTO key_top AS t (owner_id, key, chunk_ids, impacts, cut)
        SELECT n.owner_id, u.lexeme, array_agg(n.chunk_id),
               array_agg(rag_key_impact(coalesce(array_length(u.positions, 1), 1), n.token_count)),
               NULL
        FROM new_chunks n, unnest(n.word_keys) u
        -- lemma, stem and prefix keys; form-map entries (m:) are never searched by chunk
        WHERE left(u.lexeme, 2) IN ('l:', 's:', 'p:')
        GROUP BY n.owner_id, u.lexeme
        ORDER BY n.owner_id, u.lexeme
        ON CONFLICT (owner_id, key) DO UPDATE
            SET chunk_ids = t.chunk_ids || EXCLUDED.chunk_ids,
                impacts = t.impacts || EXCLUDED.impacts
            WHERE t.cut IS NULL OR (SELECT max(i) FROM unnest(EXCLUDED.impacts) i) > t.cut
        RETURNING t.owner_id, t.key, cardinality(t.chunk_ids) AS n
    )
    SELECT array_agg(owner_id), array_agg(key) INTO over_owners, over_keys
    FROM added WHERE n > 256;

    IF over_keys IS NOT NULL THEN
        UPDATE key_top t SET (chunk_ids, impacts, cut) = (
            SELECT a.chunk_ids, a.impacts, a.cut
            FROM rag_key_top_add(t.chunk_ids, t.impacts, t.cut, NULL, NULL, NULL) a
        )
        FROM unnest(over_owners, over_keys) AS h(owner_id, key)
        WHERE t.owner_id = h.owner_id AND t.key = h.key;
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION rag_key_top_rebuild(p_owner bigint, p_slice integer DEFAULT 20000)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    lo bigint;
    hi bigint;
    n bigint := 0;
BEGIN
    DELETE FROM key_top WHERE owner_id = p_owner;
    SELECT min(chunk_id), max(chunk_id) INTO lo, hi FROM chunks WHERE owner_id = p_owner;
    WHILE lo <= hi LOOP
        INSERT INTO key_top AS t (owner_id, key, chunk_ids, impacts, cut)
        SELECT b.owner_id, b.key, m.chunk_ids, m.impacts, m.cut
        FROM (
            SELECT c.owner_id, u.lexeme AS key, array_agg(c.chunk_id) AS ids,
                   array_agg(rag_key_impact(coalesce(array_length(u.positions, 1), 1), c.token_count)) AS imps
            FROM chunks c, unnest(c.word_keys) u
            WHERE c.owner_id = p_owner AND c.chunk_id >= lo AND c.chunk_id < lo + p_slice
              AND left(u.lexeme, 2) IN ('l:', 's:', 'p:')
            GROUP BY c.owner_id, u.lexeme
        ) b
        CROSS JOIN LATERAL rag_key_top_add(NULL, NULL, NULL, b.ids, b.imps, NULL) m
        ORDER BY b.owner_id, b.key
        ON CONFLICT (owner_id, key) DO UPDATE SET (chunk_ids, impacts, cut) = (
            SELECT a.chunk_ids, a.impacts, a.cut
            FROM rag_key_top_add(t.chunk_ids, t.impacts, t.cut,
                                 EXCLUDED.chunk_ids, EXCLUDED.impacts, EXCLUDED.cut) a
        );
        lo := lo + p_slice;
    END LOOP;
    SELECT count(*) INTO n FROM key_top WHERE owner_id = p_owner;
    RETURN n;
END $$;
