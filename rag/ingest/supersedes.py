"""Refusing ``metadata.supersedes`` cycles: a ring of documents each hiding the next hides them all.

Each document supersedes at most one source id, so following ``supersedes`` from a document
either ends or comes back round. The writer asks, under the owner's write lock and in the
transaction that writes the batch, which of the batch's documents the chain would bring back to
themselves, the batch's new metadata taking the place of what is stored: those are refused, and
the rest written. Every write of an owner's documents takes that lock, so two writers cannot
close a ring together (each one's check sees the other's committed edge or waits for it). A
document that names itself is not a ring: it hides nothing (rag.store's standing join).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import psycopg

STORED_SUPERSEDES = """
SELECT source_id, metadata->>'supersedes' FROM documents
WHERE owner_id = %(owner_id)s AND source_id = ANY(%(source_ids)s) AND metadata ? 'supersedes'
"""


def supersedes_of(metadata: Mapping[str, object]) -> str | None:
    """The source id a document's metadata says it supersedes, as the standing join reads it."""
    value = metadata.get("supersedes")
    if value is None:
        return None
    # the join compares jsonb's ->> with source ids: the JSON text of anything but a string
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def supersede_rings(
    conn: psycopg.Connection, owner_id: int, batch: Mapping[str, str | None]
) -> dict[str, list[str]]:
    """The documents of ``batch`` that a ``supersedes`` chain would lead back to, with the ring.

    Args:
        conn: inside the writing transaction, holding the owner's write lock.
        owner_id: whose documents.
        batch: source_id -> the source id it supersedes (None: none), as about to be written.

    Returns:
        For each such document, the ring from it ("a", "b", ... each superseding the next,
        the last superseding "a").
    """
    known: dict[str, str | None] = dict(batch)
    wanted = {t for t in batch.values() if t is not None}
    # One query per link of the longest chain: chains are short, and each round asks only for
    # documents not seen yet.
    while wanted := {s for s in wanted if s not in known}:
        rows = conn.execute(
            STORED_SUPERSEDES, {"owner_id": owner_id, "source_ids": sorted(wanted)}
        ).fetchall()
        found = {str(sid): target for sid, target in rows}
        known.update({s: found.get(s) for s in wanted})
        wanted = {t for t in found.values() if t is not None}

    def next_of(source_id: str) -> str | None:
        target = known.get(source_id)
        return None if target == source_id else target

    rings: dict[str, list[str]] = {}
    for start in batch:
        path, seen = [start], {start}
        current = next_of(start)
        while current is not None and current not in seen:
            path.append(current)
            seen.add(current)
            current = next_of(current)
        if current == start:
            rings[start] = path
    return rings
