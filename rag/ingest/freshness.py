"""Superseded and stale documents: what a document's metadata says about its standing.

* ``metadata.supersedes: "<source_id>"``: this document replaces the owner's document with that
  source id; the superseded one is hidden from answers and from search hits (it stays stored,
  listed and searchable again once the superseding document is deleted or drops the key).
* ``metadata.status: "stale"``: the document still counts as a source, but ranks after every fresh
  one, and its evidence says why.

The standing of a question's candidates is read in one small query by document id (the candidates
are at most twice ``RAG_CANDIDATES``), after fusion: the retrievers are untouched, and the word
statistics stay the owner's. Migration 007 indexes ``metadata->>'supersedes'`` so that the lookup
of "who supersedes this one" stays an index probe in an owner with many documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from rag.store import STANDING_JOIN

STANDING = f"""
SELECT d.document_id, lower(d.metadata->>'status') = 'stale' AS stale,
       sup.source_id AS superseded_by
FROM documents d{STANDING_JOIN}
WHERE d.owner_id = %(owner_id)s AND d.document_id = ANY(%(ids)s)
"""


@dataclass(frozen=True, slots=True)
class Standing:
    stale: bool = False
    superseded_by: str | None = None

    def evidence(self) -> dict[str, str]:
        """What a source's evidence says about its document (nothing for a fresh one)."""
        if self.superseded_by:
            return {"standing": "superseded", "reason": f"superseded by {self.superseded_by}"}
        if self.stale:
            return {"standing": "stale", "reason": "metadata.status is stale; ranked after fresh"}
        return {}


def standing(
    conn: psycopg.Connection, owner_id: int, document_ids: Sequence[int]
) -> dict[int, Standing]:
    """The documents among ``document_ids`` that are stale or superseded, by document id."""
    if not document_ids:
        return {}
    rows = conn.execute(STANDING, {"owner_id": owner_id, "ids": sorted(set(document_ids))})
    return {
        int(doc): Standing(bool(stale), superseded_by)
        for doc, stale, superseded_by in rows
        if stale or superseded_by
    }
