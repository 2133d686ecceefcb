"""API keys that map a caller to an owner, and connections that row-level security confines to one.

A key's token is ``rag_`` followed by 32 random bytes (URL-safe base64); only its sha256 is stored
(``api_keys.token_hash``), so the token is shown once, when the key is created, and a copy of the
database reveals no usable key. While no active key exists, the service is single-owner: every
request acts for the owner ``default``. Once a key exists, every request needs a valid one.

Row-level security (sql/002_access.sql) is the second line behind the ``owner_id = ...`` that every
query of rag already carries: :class:`OwnerDatabase` hands out pooled connections switched to the
role ``rag_service`` with ``rag.owner_id`` set to the caller's owner, and the policies hide every
other owner's rows from that role, even from a query that forgets its WHERE clause.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from rag.db import Database
from rag.errors import InputError, NotFound, Unauthorized
from rag.store import DEFAULT_OWNER, ensure_owner

TOKEN_PREFIX = "rag_"
MAX_LABEL = 200

# Session settings, not SET LOCAL: the pipeline commits more than once per request (retrieval,
# each ingestion batch), and a LOCAL setting would lapse at the first commit.
SCOPE = (
    "SELECT set_config('role', 'rag_service', false),"
    " set_config('rag.owner_id', %(owner_id)s, false)"
)
UNSCOPE = "SELECT set_config('role', 'none', false), set_config('rag.owner_id', '', false)"

INSERT_KEY = """
INSERT INTO api_keys (owner_id, token_hash, label) VALUES (%(owner_id)s, %(hash)s, %(label)s)
RETURNING key_id, created_at
"""
FIND_KEY = """
SELECT k.key_id, k.owner_id, o.name AS owner, k.revoked_at
FROM api_keys k JOIN owners o ON o.owner_id = k.owner_id
WHERE k.token_hash = %(hash)s
"""
ANY_ACTIVE_KEY = "SELECT EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL)"
LIST_KEYS = """
SELECT k.key_id, o.name AS owner, k.label, k.created_at, k.revoked_at
FROM api_keys k JOIN owners o ON o.owner_id = k.owner_id
WHERE %(owner)s::text IS NULL OR o.name = %(owner)s
ORDER BY k.key_id
"""
REVOKE_KEY = """
UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE key_id = %(key_id)s
RETURNING key_id, owner_id, label, revoked_at
"""


@dataclass(frozen=True, slots=True)
class Caller:
    """Whom a request acts for."""

    owner_id: int
    owner: str
    key_id: int | None  # None: single-owner mode, no key


@dataclass(frozen=True, slots=True)
class NewKey:
    """A freshly created key; ``token`` exists nowhere else."""

    key_id: int
    owner: str
    label: str | None
    token: str


def new_token() -> str:
    """A new random API token."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> bytes:
    """What the database stores and looks up for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def create_key(conn: psycopg.Connection, owner: str, label: str | None = None) -> NewKey:
    """Create a key for ``owner`` (creating the owner on first use); commits.

    Raises:
        InputError: the owner name or the label is unusable.
    """
    if label is not None and len(label) > MAX_LABEL:
        raise InputError(f"label is {len(label)} characters; the limit is {MAX_LABEL}")
    token = new_token()
    with conn.transaction():
        owner_id = ensure_owner(conn, owner)
        row = conn.execute(
            INSERT_KEY, {"owner_id": owner_id, "hash": hash_token(token), "label": label}
        ).fetchone()
    assert row is not None
    return NewKey(int(row[0]), owner, label, token)


def list_keys(conn: psycopg.Connection, owner: str | None = None) -> list[dict[str, Any]]:
    """Every key (of ``owner``, if given), oldest first; never a token."""
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(LIST_KEYS, {"owner": owner}).fetchall()


def revoke_key(conn: psycopg.Connection, key_id: int) -> dict[str, Any]:
    """Revoke a key; revoking a revoked key keeps its first revocation time. Commits.

    Raises:
        NotFound: no key has this id.
    """
    with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(REVOKE_KEY, {"key_id": key_id}).fetchone()
    if row is None:
        raise NotFound(f"no API key {key_id}")
    return row


def keys_required(conn: psycopg.Connection) -> bool:
    """Whether any active key exists, which ends single-owner mode."""
    row = conn.execute(ANY_ACTIVE_KEY).fetchone()
    return bool(row and row[0])


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None when there is none.

    Raises:
        Unauthorized: the header is present but is not a bearer token.
    """
    if authorization is None or not authorization.strip():
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("the Authorization header must be 'Bearer <API key>'")
    return token


def authenticate(db: Database, token: str | None, default_owner: Callable[[], int]) -> Caller:
    """The caller a request acts for.

    While no active key exists the service is single-owner and any token is ignored: chat clients
    insist on sending one.

    Args:
        db: the service's database (the lookup runs as the connecting user: no owner is known yet).
        token: the bearer token, if the request sent one.
        default_owner: the id of the owner ``default``, called only in single-owner mode (so a
            service with keys never creates that owner).

    Raises:
        Unauthorized: keys exist and the token is missing, unknown or revoked.
    """
    row = None
    with db.connection() as conn:
        if token is not None:
            with conn.cursor(row_factory=dict_row) as cur:
                row = cur.execute(FIND_KEY, {"hash": hash_token(token)}).fetchone()
            if row is not None and row["revoked_at"] is None:
                return Caller(int(row["owner_id"]), row["owner"], int(row["key_id"]))
        required = keys_required(conn)
    if not required:
        return Caller(default_owner(), DEFAULT_OWNER, None)
    if token is None:
        raise Unauthorized("this service requires an API key (Authorization: Bearer ...)")
    if row is None:
        raise Unauthorized("unknown API key")
    raise Unauthorized("this API key has been revoked")


class OwnerDatabase(Database):
    """The service's database as seen by one owner: every connection is confined by RLS.

    It shares the pool of the database it wraps (it does not open one) and can be passed wherever
    a :class:`~rag.db.Database` is expected: the engine, retrieval, ingestion.
    """

    def __init__(self, db: Database, owner_id: int) -> None:
        # No Database.__init__: this view opens no pool of its own.
        self.settings = db.settings
        self.url = db.url
        self.pool = db.pool
        self._db = db
        self.owner_id = int(owner_id)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection acting as ``rag_service`` for this owner until it is returned."""
        with self._db.connection() as conn:
            conn.execute(SCOPE, {"owner_id": str(self.owner_id)})
            conn.commit()
            try:
                yield conn
                # Commit here, as the pool would on return, so that the reset below cannot be
                # rolled back with the caller's transaction.
                conn.commit()
            except BaseException:
                _rollback_quietly(conn)
                raise
            finally:
                _unscope(conn)

    def close(self) -> None:
        """Nothing to close: the pool belongs to the wrapped database."""


def _rollback_quietly(conn: psycopg.Connection) -> None:
    try:
        conn.rollback()
    except psycopg.Error:
        pass  # the connection is broken; _unscope closes it


def _unscope(conn: psycopg.Connection) -> None:
    """Give the connection its own role back; one that cannot be reset is closed, never reused."""
    try:
        conn.execute(UNSCOPE)
        conn.commit()
    except psycopg.Error:
        conn.close()  # the pool replaces a closed connection
