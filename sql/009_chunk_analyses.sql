-- 009: each chunk's sentence analysis (what the answerability stage judges: its sentences'
-- offsets, keys, forms and token classes, rag.search.answerability.sentences), stored so that a
-- search reads it with the candidates instead of computing it in Python for every chunk the
-- process has not seen.
--
-- A table of its own, not columns of chunks: writing an analysis later (the background worker,
-- a change of the rules) then updates a narrow row with two indexes, where an UPDATE of chunks
-- would rewrite the row with its text, recompute its text_tsv and add entries to both GIN
-- indexes and the HNSW index.
--
-- ``version`` is the ANALYSIS_VERSION of the code that wrote ``analysis`` (0: none yet) and
-- ``lang`` the language it analysed the text in; a search uses a row only when both are its
-- own, and computes the analysis itself otherwise. Every chunk gets a row when it is inserted
-- (the trigger below, whatever wrote the chunk), so the rows below the current version are the
-- queue of the analysis worker (rag.ingest.analysis_queue), oldest chunk first.
CREATE TABLE chunk_analyses (
    owner_id  bigint NOT NULL,
    chunk_id  bigint NOT NULL,
    version   integer NOT NULL DEFAULT 0,
    lang      text,
    -- JSON as written (json, not jsonb): a search reads it back as text and decodes it only
    -- for the candidates it judges by their windows
    analysis  json,
    PRIMARY KEY (owner_id, chunk_id),
    FOREIGN KEY (owner_id, chunk_id) REFERENCES chunks ON DELETE CASCADE
);
CREATE INDEX chunk_analyses_queue ON chunk_analyses (version, owner_id, chunk_id);

INSERT INTO chunk_analyses (owner_id, chunk_id)
SELECT owner_id, chunk_id FROM chunks ORDER BY owner_id, chunk_id;

CREATE FUNCTION rag_chunks_queue_analysis() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chunk_analyses (owner_id, chunk_id)
    SELECT owner_id, chunk_id FROM new_chunks ORDER BY owner_id, chunk_id;
    RETURN NULL;
END $$;

CREATE TRIGGER chunks_analysis_queued AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT
    EXECUTE FUNCTION rag_chunks_queue_analysis();

GRANT SELECT, INSERT, UPDATE, DELETE ON chunk_analyses TO rag_service;
ALTER TABLE chunk_analyses ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_rows ON chunk_analyses TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
