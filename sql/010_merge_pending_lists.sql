-- After a large ingest the writer merges the GIN indexes' pending lists at once, so the first
-- searches do not scan them (rag.ingest.writer). gin_clean_pending_list takes the index's owner,
-- and a service request writes as rag_service: this function runs as the schema's owner and does
-- that one thing, on these two indexes only.
CREATE FUNCTION rag_merge_pending_lists() RETURNS bigint
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, public
    RETURN gin_clean_pending_list('public.chunks_word_keys'::regclass)
         + gin_clean_pending_list('public.chunks_text_tsv'::regclass);

REVOKE ALL ON FUNCTION rag_merge_pending_lists() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_merge_pending_lists() TO rag_service;
