-- 001: owners, documents, chunks, per-owner word statistics.
--
-- Every table that holds an owner's data carries owner_id, and its primary and unique keys start
-- with it, so the tables can be distributed by owner_id (Citus) without a schema rewrite.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- unaccent() is STABLE (it reads a dictionary chosen by search_path); a generated column needs an
-- IMMUTABLE function, so pin the dictionary and declare the wrapper immutable.
CREATE FUNCTION rag_unaccent(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN unaccent('unaccent'::regdictionary, $1);

CREATE TABLE owners (
    owner_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    -- BM25 corpus statistics, kept exact by the chunk triggers below.
    chunk_count  bigint NOT NULL DEFAULT 0,
    token_total  bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE documents (
    owner_id     bigint NOT NULL REFERENCES owners ON DELETE CASCADE,
    document_id  bigint GENERATED ALWAYS AS IDENTITY,
    source_id    text NOT NULL CHECK (length(source_id) BETWEEN 1 AND 2000),
    title        text,
    lang         text NOT NULL,
    content_hash bytea NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
    char_count   integer NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner_id, document_id),
    UNIQUE (owner_id, source_id)
);

CREATE TABLE chunks (
    owner_id     bigint NOT NULL,
    chunk_id     bigint GENERATED ALWAYS AS IDENTITY,
    document_id  bigint NOT NULL,
    ordinal      integer NOT NULL,
    text         text NOT NULL,
    char_count   integer NOT NULL,
    -- number of word tokens: the BM25 document length
    token_count  integer NOT NULL,
    -- every word form, unaccented, as PostgreSQL's simple configuration sees it
    text_tsv     tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, rag_unaccent(text))) STORED,
    -- lemma (l:), stem (s:), prefix (p:) keys and form-map entries (m:) computed in Python (rag.text)
    word_keys    tsvector NOT NULL,
    -- untyped so vectors of several models can coexist; each model gets a partial HNSW index
    embedding    vector,
    embed_model  text,
    PRIMARY KEY (owner_id, chunk_id),
    UNIQUE (owner_id, document_id, ordinal),
    FOREIGN KEY (owner_id, document_id) REFERENCES documents ON DELETE CASCADE,
    CHECK ((embedding IS NULL) = (embed_model IS NULL))
);

CREATE INDEX chunks_text_tsv ON chunks USING gin (text_tsv);
CREATE INDEX chunks_word_keys ON chunks USING gin (word_keys);
CREATE INDEX chunks_unembedded ON chunks (owner_id, chunk_id) WHERE embedding IS NULL;
CREATE INDEX chunks_model ON chunks (owner_id, embed_model);

-- How many of an owner's chunks contain each key. COLLATE "C" lets the primary key answer the
-- form-map lookup `key LIKE 'm:brne:%'` as a range scan.
CREATE TABLE word_stats (
    owner_id  bigint NOT NULL,
    key       text COLLATE "C" NOT NULL,
    df        integer NOT NULL CHECK (df > 0),
    PRIMARY KEY (owner_id, key)
);

-- The statistics are maintained by statement-level triggers over transition tables, so they stay
-- exact whatever path adds or removes chunks: ingestion, replacement, a cascade from a deleted
-- document or owner, or SQL typed by hand.
CREATE FUNCTION rag_chunks_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO word_stats AS w (owner_id, key, df)
    SELECT n.owner_id, k, count(*)
    FROM new_chunks n, unnest(tsvector_to_array(n.word_keys)) AS k
    GROUP BY n.owner_id, k
    ORDER BY n.owner_id, k
    ON CONFLICT (owner_id, key) DO UPDATE SET df = w.df + EXCLUDED.df;

    UPDATE owners o
    SET chunk_count = o.chunk_count + a.n, token_total = o.token_total + a.t
    FROM (SELECT owner_id, count(*) AS n, sum(token_count) AS t FROM new_chunks GROUP BY owner_id) a
    WHERE o.owner_id = a.owner_id;
    RETURN NULL;
END $$;

CREATE FUNCTION rag_chunks_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH gone AS (
        SELECT o.owner_id, k AS key, count(*) AS n
        FROM old_chunks o, unnest(tsvector_to_array(o.word_keys)) AS k
        GROUP BY o.owner_id, k
        ORDER BY o.owner_id, k
    ), dec AS (
        UPDATE word_stats w SET df = w.df - gone.n
        FROM gone
        WHERE w.owner_id = gone.owner_id AND w.key = gone.key AND w.df > gone.n
        RETURNING w.owner_id, w.key
    )
    DELETE FROM word_stats w
    USING gone
    WHERE w.owner_id = gone.owner_id AND w.key = gone.key AND w.df <= gone.n;

    UPDATE owners o
    SET chunk_count = o.chunk_count - a.n, token_total = o.token_total - a.t
    FROM (SELECT owner_id, count(*) AS n, sum(token_count) AS t FROM old_chunks GROUP BY owner_id) a
    WHERE o.owner_id = a.owner_id;
    RETURN NULL;
END $$;

-- A chunk's words never change in place: replacing a document deletes and inserts its chunks,
-- which keeps the statement triggers above the only writers of the statistics.
CREATE FUNCTION rag_chunks_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'chunk text and keys are immutable; replace the document instead';
END $$;

CREATE TRIGGER chunks_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION rag_chunks_added();
CREATE TRIGGER chunks_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_chunks FOR EACH STATEMENT EXECUTE FUNCTION rag_chunks_removed();
CREATE TRIGGER chunks_frozen BEFORE UPDATE OF owner_id, document_id, text, word_keys, token_count ON chunks
    FOR EACH ROW EXECUTE FUNCTION rag_chunks_frozen();
