-- After a large ingest the writer merges the GIN indexes' pending lists at once, so the first
-- searches do not scan them (rag.ingest.writer). gin_clean_pending_list takes the index's owner,
-- and a service request writes as rag_service: this function runs as the schema's owner and does
-- that one thing, on these two indexes only. PL/pgSQL resolves the index names when it runs, so
-- the function does not hold the indexes (a bulk load drops and rebuilds them, rag.ingest.bulk_load).
CREATE FUNCTION rag_merge_pending_lists() RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, public
AS $$
BEGIN
    RETURN gin_clean_pending_list('public.chunks_word_keys'::regclass)
         + gin_clean_pending_list('public.chunks_text_tsv'::regclass);
END $$;

REVOKE ALL ON FUNCTION rag_merge_pending_lists() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rag_merge_pending_lists() TO rag_service;
