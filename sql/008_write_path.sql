-- 008: key_top deferred for an owner's bulk load, and chunks whose embedding keeps failing set
-- aside instead of retried forever.
--
-- A bulk load (rag.bulk_load) records its owner here for the time of the load: both key_top
-- triggers leave that owner's chunks alone, and the load ends with rag_key_top_rebuild(owner),
-- one pass over its chunks instead of a rewrite of every touched list per batch. The row is
-- written in the same transaction as the rest of the bulk mode's bookkeeping and deleted in the
-- one that rebuilds the lists, so a killed load is repaired by the next ingestion or service
-- start, as its dropped indexes are. Other owners' writes keep their lists exact meanwhile.
CREATE TABLE key_top_deferred (
    owner_id    bigint PRIMARY KEY REFERENCES owners ON DELETE CASCADE,
    deferred_at timestamptz NOT NULL DEFAULT now()
);

CREATE OR REPLACE FUNCTION rag_key_top_added() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    over_owners bigint[];
    over_keys text[];
BEGIN
    -- An owner under a bulk load is left to the rebuild at its end. The statement below is
    -- sql/004's, unchanged (a mixed statement also feeds the deferred owner's lists, which the
    -- rebuild replaces), so ordinary loads keep its plan and its lists exactly.
    IF NOT EXISTS (SELECT 1 FROM new_chunks n
                   WHERE NOT EXISTS (SELECT 1 FROM key_top_deferred d WHERE d.owner_id = n.owner_id))
    THEN
        RETURN NULL;
    END IF;
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

CREATE OR REPLACE FUNCTION rag_key_top_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    thin_owners bigint[];
    thin_keys text[];
BEGIN
    -- As above: sql/004's statement, skipped when every chunk is a deferred owner's.
    IF NOT EXISTS (SELECT 1 FROM old_chunks o
                   WHERE NOT EXISTS (SELECT 1 FROM key_top_deferred d WHERE d.owner_id = o.owner_id))
    THEN
        RETURN NULL;
    END IF;
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

GRANT SELECT ON key_top_deferred TO rag_service;

-- A chunk whose embedding failed while the embedder itself worked (rag.embed_queue): how often,
-- why, and when it may be tried again. The worker skips it until retry_at, waiting longer after
-- each attempt; after the last allowed attempt retry_at is NULL and the chunk is set aside, still
-- queued (embedding IS NULL) but no longer claimed, until `rag embed --retry-failed` forgets it.
-- One bad chunk therefore costs a bounded number of attempts, never the queue behind it.
CREATE TABLE embed_failures (
    owner_id   bigint NOT NULL,
    chunk_id   bigint NOT NULL,
    model      text NOT NULL,
    attempts   integer NOT NULL CHECK (attempts > 0),
    error      text NOT NULL,
    failed_at  timestamptz NOT NULL DEFAULT now(),
    -- NULL: set aside
    retry_at   timestamptz,
    PRIMARY KEY (owner_id, chunk_id),
    FOREIGN KEY (owner_id, chunk_id) REFERENCES chunks ON DELETE CASCADE
);

GRANT SELECT ON embed_failures TO rag_service;
ALTER TABLE embed_failures ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_rows ON embed_failures TO rag_service USING (owner_id = rag_owner_id());
