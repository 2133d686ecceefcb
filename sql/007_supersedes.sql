-- Which document supersedes a given source_id (metadata.supersedes), found by an index probe:
-- every question looks it up for its candidates' documents (rag/freshness.py).
CREATE INDEX documents_supersedes ON documents (owner_id, (metadata->>'supersedes'))
    WHERE metadata ? 'supersedes';
