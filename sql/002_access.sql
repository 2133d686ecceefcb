-- 002: API keys, and row-level security as the second line behind `owner_id = ...` in every query.
--
-- The service connects as whatever user DATABASE_URL names (often the tables' owner or a
-- superuser, both of which bypass row-level security). For each request it switches its pooled
-- connection to the NOLOGIN role rag_service and records the caller's owner in the setting
-- rag.owner_id (rag.auth.OwnerDatabase); the policies below then hide and refuse every row of any
-- other owner, whatever a query's WHERE clause says. Both are session settings, reset before the
-- connection goes back to the pool, because the pipeline commits more than once per request.

CREATE TABLE api_keys (
    owner_id    bigint NOT NULL REFERENCES owners ON DELETE CASCADE,
    key_id      bigint GENERATED ALWAYS AS IDENTITY,
    -- sha256 of the token; the token itself is shown once, when the key is created
    token_hash  bytea NOT NULL CHECK (length(token_hash) = 32),
    label       text CHECK (length(label) <= 200),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    PRIMARY KEY (owner_id, key_id)
);
-- A request names no owner: its key is found by hash, and revoked by id. Both indexes leave out
-- owner_id, so under Citus this small table is a reference table rather than a distributed one.
CREATE UNIQUE INDEX api_keys_token_hash ON api_keys (token_hash);
CREATE UNIQUE INDEX api_keys_key_id ON api_keys (key_id);

-- Roles belong to the cluster, not the database: another database on the same server (tests make
-- many) may have created it already, possibly at the same moment.
DO $$
BEGIN
    CREATE ROLE rag_service NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END $$;

-- The migrating user must be able to SET ROLE rag_service (a superuser always can).
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'rag_service', 'MEMBER') THEN
        EXECUTE format('GRANT rag_service TO %I', current_user);
    END IF;
END $$;

-- The caller's owner; NULL when unset. After a RESET, current_setting(..., true) returns '' rather
-- than NULL, hence nullif.
CREATE FUNCTION rag_owner_id() RETURNS bigint
    LANGUAGE sql STABLE PARALLEL SAFE
    RETURN nullif(current_setting('rag.owner_id', true), '')::bigint;

GRANT USAGE ON SCHEMA public TO rag_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON documents, chunks, word_stats TO rag_service;
-- The chunk triggers of 001 run as the role that changed the chunks, so it keeps the statistics.
GRANT SELECT, UPDATE (chunk_count, token_total) ON owners TO rag_service;
GRANT SELECT ON api_keys TO rag_service;

ALTER TABLE owners ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE chunks ENABLE ROW LEVEL SECURITY;
ALTER TABLE word_stats ENABLE ROW LEVEL SECURITY;
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;

-- Owners are created by administrators (and by the service before it takes the role): the role
-- may read and update only its own owner's row, whose statistics the chunk triggers keep.
CREATE POLICY owner_read ON owners FOR SELECT TO rag_service
    USING (owner_id = rag_owner_id());
CREATE POLICY owner_update ON owners FOR UPDATE TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
CREATE POLICY owner_rows ON documents TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
CREATE POLICY owner_rows ON chunks TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
CREATE POLICY owner_rows ON word_stats TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
CREATE POLICY owner_rows ON api_keys TO rag_service
    USING (owner_id = rag_owner_id());

-- Under row-level security the planner uses an index for a condition only if the condition's
-- function is LEAKPROOF, and the full-text match `@@` (ts_match_vq) is not marked so: the GIN index
-- on chunks.word_keys would be skipped for a scan of all the owner's chunks (measured on 39k
-- chunks: 5 ms with the index, 940 ms without). ts_match_vq only returns a boolean and raises no
-- error that depends on the row. Only a superuser may mark a function; without one the service
-- works, slower, and a dump and restore drops the mark (run this statement again after one).
DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
    ELSE
        RAISE NOTICE 'not a superuser: full-text matching under row-level security cannot use the GIN index';
    END IF;
END $$;
