"""Superseded and stale documents: what a document's metadata says about its standing.

* ``metadata.supersedes: "<source_id>"``: this document replaces the owner's document with that
  source id; the superseded one is hidden from answers and from search hits (it stays stored,
  listed and searchable again once the superseding document is deleted or drops the key).
* ``metadata.status: "stale"``: the document still counts as a source, but ranks after every fresh
  one, and its evidence says why.

The standing of a question's candidates is read with them, by the retrieval statement's join to
their documents (``rag.search.sql.FUSE``, with :data:`rag.store.STANDING_JOIN`), and applied after
fusion: the retrievers' lists are untouched, and the word statistics stay the owner's. Migration
007 indexes ``metadata->>'supersedes'`` so that the lookup of "who supersedes this one" stays an
index probe in an owner with many documents.
"""

from __future__ import annotations

from dataclasses import dataclass


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
