-- Each owner's documents per language. Every question reads them (the corpus's languages steer
-- the question's language detection), so they are kept by statement triggers, as word_stats is,
-- instead of being counted from all of the owner's documents on every question.

CREATE TABLE owner_langs (
    owner_id  bigint NOT NULL REFERENCES owners ON DELETE CASCADE,
    lang      text NOT NULL,
    documents bigint NOT NULL CHECK (documents > 0),
    PRIMARY KEY (owner_id, lang)
);

INSERT INTO owner_langs (owner_id, lang, documents)
SELECT owner_id, lang, count(*) FROM documents GROUP BY owner_id, lang;

-- One function for the three triggers; each reads only the transition tables its event has.
CREATE FUNCTION rag_documents_langs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        WITH gone AS (
            SELECT owner_id, lang, count(*) AS n FROM old_documents
            GROUP BY owner_id, lang ORDER BY owner_id, lang
        ), dec AS (
            UPDATE owner_langs l SET documents = l.documents - gone.n
            FROM gone
            WHERE l.owner_id = gone.owner_id AND l.lang = gone.lang AND l.documents > gone.n
            RETURNING l.owner_id
        )
        DELETE FROM owner_langs l
        USING gone
        WHERE l.owner_id = gone.owner_id AND l.lang = gone.lang AND l.documents <= gone.n;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO owner_langs AS l (owner_id, lang, documents)
        SELECT owner_id, lang, count(*) FROM new_documents
        GROUP BY owner_id, lang ORDER BY owner_id, lang
        ON CONFLICT (owner_id, lang) DO UPDATE SET documents = l.documents + EXCLUDED.documents;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER documents_langs_added AFTER INSERT ON documents
    REFERENCING NEW TABLE AS new_documents
    FOR EACH STATEMENT EXECUTE FUNCTION rag_documents_langs();
CREATE TRIGGER documents_langs_removed AFTER DELETE ON documents
    REFERENCING OLD TABLE AS old_documents
    FOR EACH STATEMENT EXECUTE FUNCTION rag_documents_langs();
-- Transition tables cannot go with a column list (UPDATE OF lang), so every update of a document
-- passes here; an unchanged language nets out.
CREATE TRIGGER documents_langs_changed AFTER UPDATE ON documents
    REFERENCING OLD TABLE AS old_documents NEW TABLE AS new_documents
    FOR EACH STATEMENT EXECUTE FUNCTION rag_documents_langs();

GRANT SELECT, INSERT, UPDATE, DELETE ON owner_langs TO rag_service;
ALTER TABLE owner_langs ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_rows ON owner_langs TO rag_service
    USING (owner_id = rag_owner_id()) WITH CHECK (owner_id = rag_owner_id());
