-- 004: the best chunks of each word key by BM25 term impact, so that full-text search reads a
-- bounded number of postings per question key instead of scoring every chunk that matches.
--
-- key_top holds, per (owner, key), up to 256 postings (chunk id + impact) with the highest impact
-- and, once postings have been left out, `cut`: an upper bound on the impact of every posting of
-- the key that the list does not hold (NULL: the list holds all of the key's chunks). The order of
-- the arrays means nothing; a reader takes them whole. Search sums the stored impacts of the
-- question's selective keys into a candidate list, bounds what the missing postings could add by
-- `cut`, and re-scores the best candidates with exact BM25 from the owner's statistics.
--
-- The impact is the term-frequency part of BM25 with fixed k1 = 1.2, b = 0.75 and a reference
-- chunk length of 150 tokens. It depends on the chunk only, never on the corpus: idf (which
-- changes as the owner's corpus grows) is applied at query time, so no stored impact goes stale.
-- The fixed constants only order postings within one key; the final scores use the settings.
--
-- Statement triggers keep the lists exact in the same transaction as the chunks, as word_stats is
-- kept: a new posting enters if it beats the cut; a list over 256 is cut back to its best 256; a
-- deleted chunk leaves its lists, and a list that was cut and fell below 128 postings is rebuilt
-- from the chunks through the GIN index (a cost in proportion to that key's chunks, paid only
-- after half of its best chunks went).

CREATE FUNCTION rag_key_impact(tf float8, token_count integer) RETURNS real
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * token_count / 150.0)))::real;

CREATE TABLE key_top (
    -- no foreign key, as in word_stats: a per-row check would cost more than the insert; the
    -- delete trigger below empties an owner's lists when its chunks go
    owner_id   bigint NOT NULL,
    key        text COLLATE "C" NOT NULL,
    chunk_ids  bigint[] NOT NULL,
    impacts    real[] NOT NULL,
    cut        real,
    PRIMARY KEY (owner_id, key),
    -- at most 256 between statements; the insert trigger appends first and cuts back after
    CHECK (cardinality(chunk_ids) = cardinality(impacts))
);
-- The arrays are read whole on every search; kept inline (uncompressed when they fit a page)
-- they cost no detoasting. 256 postings take ~3 kB.
ALTER TABLE key_top ALTER COLUMN chunk_ids SET STORAGE main, ALTER COLUMN impacts SET STORAGE main;

-- Merge new postings into a list: those at or below the cut cannot be among the best and are
-- dropped; a list over 256 keeps its best 256 (ties: lower chunk id) and raises the cut to the
-- best posting it dropped.
CREATE FUNCTION rag_key_top_add(
    ids bigint[], imps real[], lo real, new_ids bigint[], new_imps real[], new_lo real,
    OUT chunk_ids bigint[], OUT impacts real[], OUT cut real
) LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    cut := greatest(lo, new_lo);
    IF cut IS NOT NULL THEN
        SELECT coalesce(array_agg(c), '{}'), coalesce(array_agg(i), '{}') INTO new_ids, new_imps
        FROM unnest(new_ids, new_imps) AS u(c, i) WHERE i > cut;
    END IF;
    chunk_ids := coalesce(ids, '{}') || coalesce(new_ids, '{}');
    impacts := coalesce(imps, '{}') || coalesce(new_imps, '{}');
    IF cardinality(chunk_ids) > 256 THEN
        SELECT array_agg(r.c) FILTER (WHERE r.n <= 256), array_agg(r.i) FILTER (WHERE r.n <= 256),
               greatest(cut, max(r.i) FILTER (WHERE r.n > 256))
        INTO chunk_ids, impacts, cut
        FROM (SELECT u.c, u.i, row_number() OVER (ORDER BY u.i DESC, u.c) AS n
              FROM unnest(chunk_ids, impacts) AS u(c, i)) r;
    END IF;
END $$;

-- All postings of one key in an owner's chunks, as a fresh list (the rebuild after deletions).
CREATE FUNCTION rag_key_top_build(p_owner bigint, p_key text,
    OUT chunk_ids bigint[], OUT impacts real[], OUT cut real
) LANGUAGE sql STABLE AS $$
    SELECT m.chunk_ids, m.impacts, m.cut
    FROM (
        SELECT array_agg(c.chunk_id) AS ids,
               array_agg(rag_key_impact(coalesce(array_length(u.positions, 1), 1), c.token_count)) AS imps
        FROM chunks c
        CROSS JOIN LATERAL unnest(ts_filter(setweight(c.word_keys, 'A', ARRAY[p_key]), '{a}')) u
        WHERE c.owner_id = p_owner AND c.word_keys @@ quote_literal(p_key)::tsquery
    ) p
    CROSS JOIN LATERAL rag_key_top_add(NULL, NULL, NULL, p.ids, p.imps, NULL) m
$$;

CREATE FUNCTION rag_key_top_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over_owners bigint[];
    over_keys text[];
BEGIN
    -- Append the statement's postings to each key's list in plain SQL (most keys are short
    -- lists that simply grow); a cut list only takes them if one beats its cut. Lists that went
    -- over 256 are cut back to their best 256 afterwards.
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

CREATE FUNCTION rag_key_top_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    thin_owners bigint[];
    thin_keys text[];
BEGIN
    WITH gone AS (
        SELECT o.owner_id, u.lexeme AS key, array_agg(o.chunk_id) AS ids
        FROM old_chunks o, unnest(o.word_keys) u
        WHERE left(u.lexeme, 2) IN ('l:', 's:', 'p:')
        GROUP BY o.owner_id, u.lexeme
    ), kept AS (
        SELECT t.owner_id, t.key, t.cut, k.ids, k.imps
        FROM gone g
        JOIN key_top t ON t.owner_id = g.owner_id AND t.key = g.key
        CROSS JOIN LATERAL (
            SELECT coalesce(array_agg(u.c), '{}') AS ids, coalesce(array_agg(u.i), '{}') AS imps
            FROM unnest(t.chunk_ids, t.impacts) AS u(c, i) WHERE u.c <> ALL (g.ids)
        ) k
        WHERE t.chunk_ids && g.ids
    ), upd AS (
        UPDATE key_top t SET chunk_ids = kept.ids, impacts = kept.imps
        FROM kept
        WHERE t.owner_id = kept.owner_id AND t.key = kept.key
          AND (cardinality(kept.ids) > 0 OR kept.cut IS NOT NULL)
        RETURNING t.owner_id, t.key, t.cut, cardinality(t.chunk_ids) AS n
    ), del AS (
        DELETE FROM key_top t USING kept
        WHERE t.owner_id = kept.owner_id AND t.key = kept.key
          AND cardinality(kept.ids) = 0 AND kept.cut IS NULL
    )
    SELECT array_agg(owner_id), array_agg(key) INTO thin_owners, thin_keys
    FROM upd WHERE cut IS NOT NULL AND n < 128;

    IF thin_keys IS NULL THEN
        RETURN NULL;
    END IF;
    -- lists that lost half of their best postings are rebuilt from the chunks that remain
    UPDATE key_top t SET (chunk_ids, impacts, cut) = (
        SELECT coalesce(b.chunk_ids, '{}'), coalesce(b.impacts, '{}'), b.cut
        FROM rag_key_top_build(t.owner_id, t.key) b
    )
    FROM unnest(thin_owners, thin_keys) AS h(owner_id, key)
    WHERE t.owner_id = h.owner_id AND t.key = h.key;
    DELETE FROM key_top t USING unnest(thin_owners, thin_keys) AS h(owner_id, key)
    WHERE t.owner_id = h.owner_id AND t.key = h.key AND cardinality(t.chunk_ids) = 0;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_top_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION rag_key_top_added();
CREATE TRIGGER chunks_top_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION rag_key_top_removed();

-- All of an owner's lists from its chunks, in slices of chunk ids (far fewer rewrites of each
-- list than one per ingestion batch). For bulk loads that run with the two key_top triggers
-- disabled: `ALTER TABLE chunks DISABLE TRIGGER chunks_top_added, ...`, load, then
-- `SELECT rag_key_top_rebuild(owner_id)` before searching (until then the lists are stale).
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

-- The chunks already stored.
SELECT rag_key_top_rebuild(owner_id) FROM owners;

-- Metadata filters (rag.filters) test documents by jsonb containment.
CREATE INDEX documents_metadata ON documents USING gin (metadata jsonb_path_ops);

GRANT SELECT, INSERT, UPDATE, DELETE ON key_top TO rag_service;
ALTER TABLE key_top ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_rows ON key_top TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
