-- 005: the embedding queue's order and its workers' state.
--
-- The queue is the set of chunks whose embedding IS NULL; nothing else records what is waiting.
-- Workers take the oldest first across all owners (a chunk_id is its arrival order), so they need
-- that order without sorting the whole queue on every batch: chunks_unembedded serves one owner's
-- queue (owner_id, chunk_id), this index the global one.
CREATE INDEX chunks_embed_queue ON chunks (chunk_id) WHERE embedding IS NULL;

-- One row per embedding worker, upserted after every batch and every failure, so that `rag stats`
-- in another process and /v1/stats see the rate, the time since the worker was last alive and its
-- last error. Workers serve every owner and a row names none, so this is state of the service, not
-- an owner's data (under Citus a reference table).
CREATE TABLE embed_workers (
    worker      text PRIMARY KEY CHECK (length(worker) BETWEEN 1 AND 200),
    model       text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    seen_at     timestamptz NOT NULL DEFAULT now(),
    embedded    bigint NOT NULL DEFAULT 0,
    -- chunks per second over the worker's recent batches; NULL until its first batch
    rate        double precision,
    -- the last failure, cleared by the next batch that succeeds
    error       text,
    error_at    timestamptz
);

GRANT SELECT ON embed_workers TO rag_service;

-- Bulk loads write without the full-text GIN indexes of chunks and build them afterwards
-- (rag.bulk_load). The definition of every index a load dropped waits here, written in the same
-- transaction as the DROP, until the index is built again, so an interrupted load is repaired by
-- the next ingestion or service start instead of leaving searches without their index.
CREATE TABLE dropped_indexes (
    name        text PRIMARY KEY,
    definition  text NOT NULL,
    dropped_at  timestamptz NOT NULL DEFAULT now()
);
