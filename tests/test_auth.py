"""API keys (hashed, revocable, mapped to owners) and row-level security as the second line.

The RLS tests run deliberately unscoped SQL (``SELECT * FROM chunks`` with no WHERE) through the
service's connection setup (:class:`rag.api.auth.OwnerDatabase`) and see one owner's rows only.
Keys live in a database of this module's own: a key in the shared one would end the single-owner
mode that other tests' services rely on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from rag.api.auth import (
    TOKEN_PREFIX,
    Caller,
    OwnerDatabase,
    Unauthorized,
    authenticate,
    bearer_token,
    create_key,
    hash_token,
    keys_required,
    list_keys,
    new_token,
    revoke_key,
)
from rag.cli.main import cli
from rag.cli.serve import check_exposure, is_loopback
from rag.db import Database, migrate
from rag.errors import ConfigError, NotFound
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from rag.store import delete_document, ensure_owner
from tests.conftest import create_database

ALICE_TEXT = "Alice vede sklad v Olomouci a objednává palety u firmy Dřevotrans."
BOB_TEXT = "Bob opravuje služební kola v Brně; náhradní duše drží v kanceláři 214."


@pytest.fixture(scope="module")
def keys_url(server_url: str) -> str:
    url = create_database(server_url, "rag_auth")
    migrate(url)
    return url


@pytest.fixture
def keys_settings(keys_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=keys_url,
        data_dir=tmp_path,
        embedder="fake",
        embed_dim=64,
        pool_min=1,
        pool_max=2,
    )


@pytest.fixture
def keys_db(keys_settings: Settings) -> Iterator[Database]:
    database = Database(keys_settings, run_migrations=False)
    yield database
    database.close()


@pytest.fixture(scope="module")
def two_owners(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int, int]:
    """A database with two owners' documents, ingested the way the CLI does (no RLS)."""
    url = create_database(server_url, "rag_rls")
    migrate(url)
    settings = Settings(
        database_url=url, data_dir=tmp_path_factory.mktemp("rls"), embedder="fake", embed_dim=64
    )
    from rag.embedders import make_embedder

    with Database(settings, run_migrations=False) as db:
        emb = make_embedder(settings)
        a = Ingestor(db, settings, emb, "alice", embed_now=True)
        a.add_all([LoadedDocument("sklad.md", None, ALICE_TEXT, "cs", {}, "sklad.md")])
        b = Ingestor(db, settings, emb, "bob", embed_now=True)
        b.add_all(
            [
                LoadedDocument("kola.md", None, BOB_TEXT, "cs", {}, "kola.md"),
                LoadedDocument("duse.md", None, "Duše jsou v kanceláři.", "cs", {}, "duse.md"),
            ]
        )
        with db.connection() as conn:
            create_key(conn, "alice")  # a row in api_keys for each owner
            create_key(conn, "bob")
        return url, a.owner_id, b.owner_id


@pytest.fixture
def rls_db(two_owners: tuple[str, int, int], tmp_path: Path) -> Iterator[Database]:
    # pool_max=1: every checkout gets the same connection, so resets can be observed
    settings = Settings(
        database_url=two_owners[0],
        data_dir=tmp_path,
        embedder="fake",
        embed_dim=64,
        pool_min=1,
        pool_max=1,
    )
    database = Database(settings, run_migrations=False)
    yield database
    database.close()


# --- tokens and keys ------------------------------------------------------------------------------


def test_tokens_are_random_and_only_their_sha256_is_stored(keys_db: Database) -> None:
    token = new_token()
    assert token.startswith(TOKEN_PREFIX) and len(token) == len(TOKEN_PREFIX) + 43  # 32 bytes
    assert new_token() != token
    assert hash_token(token) == hashlib.sha256(token.encode()).digest()
    with keys_db.connection() as conn:
        key = create_key(conn, "t-hash", "laptop")
        row = conn.execute(
            "SELECT token_hash, label FROM api_keys WHERE key_id = %s", (key.key_id,)
        ).fetchone()
        dump = conn.execute("SELECT string_agg(t::text, ' ') FROM api_keys t").fetchone()
    assert row == (hashlib.sha256(key.token.encode()).digest(), "laptop")
    assert key.token not in dump[0]


def test_list_and_revoke(keys_db: Database) -> None:
    with keys_db.connection() as conn:
        k1 = create_key(conn, "t-list-a", "ci")
        k2 = create_key(conn, "t-list-b")
        mine = list_keys(conn, "t-list-a")
        assert [(r["key_id"], r["owner"], r["label"]) for r in mine] == [
            (k1.key_id, "t-list-a", "ci")
        ]
        first = revoke_key(conn, k2.key_id)["revoked_at"]
        again = revoke_key(conn, k2.key_id)["revoked_at"]
        assert first is not None and again == first  # the first revocation time stays
        with pytest.raises(NotFound, match="no API key 999999"):
            revoke_key(conn, 999999)
        rows = {r["key_id"]: r for r in list_keys(conn)}
    assert rows[k1.key_id]["revoked_at"] is None and rows[k2.key_id]["revoked_at"] == first
    assert "token" not in rows[k1.key_id] and "token_hash" not in rows[k1.key_id]


def test_authenticate_maps_keys_to_owners_and_refuses_bad_ones(keys_db: Database) -> None:
    def no_default() -> int:
        raise AssertionError("a service with keys must not fall back to the default owner")

    with keys_db.connection() as conn:
        good = create_key(conn, "t-auth-good")
        gone = create_key(conn, "t-auth-gone")
        revoke_key(conn, gone.key_id)
        owner_id = ensure_owner(conn, "t-auth-good")
    caller = authenticate(keys_db, good.token, no_default)
    assert caller == Caller(owner_id, "t-auth-good", good.key_id)
    with pytest.raises(Unauthorized, match="revoked"):
        authenticate(keys_db, gone.token, no_default)
    with pytest.raises(Unauthorized, match="unknown API key"):
        authenticate(keys_db, good.token + "x", no_default)
    with pytest.raises(Unauthorized, match="requires an API key"):
        authenticate(keys_db, None, no_default)


def test_without_keys_requests_act_for_the_default_owner(fresh_db_url: str, tmp_path: Path) -> None:
    migrate(fresh_db_url)
    settings = Settings(database_url=fresh_db_url, data_dir=tmp_path, embedder="fake")
    with Database(settings, run_migrations=False) as db:
        with db.connection() as conn:
            assert not keys_required(conn)
        assert authenticate(db, None, lambda: 42) == Caller(42, "default", None)
        # Chat clients always send some key; without keys configured it is ignored.
        assert authenticate(db, "not-needed", lambda: 42) == Caller(42, "default", None)
        with db.connection() as conn:
            key = create_key(conn, "someone")
            assert keys_required(conn)
        with pytest.raises(Unauthorized, match="unknown API key"):
            authenticate(db, "not-needed", lambda: 42)
        with db.connection() as conn:
            revoke_key(conn, key.key_id)
            assert not keys_required(conn)  # revoking the last key restores single-owner mode
        assert authenticate(db, key.token, lambda: 42) == Caller(42, "default", None)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("BEARER rag_x", "rag_x"),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize("header", ["Basic dXNlcjpwdw==", "Bearer", "Token abc", "abc"])
def test_bearer_token_refuses_other_schemes(header: str) -> None:
    with pytest.raises(Unauthorized, match="Bearer"):
        bearer_token(header)


# --- row-level security -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table", ["chunks", "documents", "word_stats", "owner_langs", "owners", "api_keys"]
)
def test_unscoped_query_sees_only_the_callers_rows(
    rls_db: Database, two_owners: tuple[str, int, int], table: str
) -> None:
    _, alice, bob = two_owners
    with rls_db.connection() as conn:  # the connecting user: every row
        everyone = {r[0] for r in conn.execute(f"SELECT owner_id FROM {table}")}
    assert {alice, bob} <= everyone
    for owner_id in (alice, bob):
        with OwnerDatabase(rls_db, owner_id).connection() as conn:
            # Deliberately no WHERE clause: a query that forgot the owner.
            seen = [r[0] for r in conn.execute(f"SELECT owner_id FROM {table}")]
        assert seen and set(seen) == {owner_id}, (table, owner_id, seen)


def test_unscoped_select_star_from_chunks_returns_the_callers_text_only(
    rls_db: Database, two_owners: tuple[str, int, int]
) -> None:
    _, alice, _ = two_owners
    with OwnerDatabase(rls_db, alice).connection() as conn:
        rows = conn.execute("SELECT * FROM chunks").fetchall()
        names = [d.name for d in conn.execute("SELECT * FROM chunks LIMIT 0").description or []]
    texts = [r[names.index("text")] for r in rows]
    assert texts == [ALICE_TEXT]


def test_writes_to_another_owner_are_refused_or_touch_nothing(
    rls_db: Database, two_owners: tuple[str, int, int]
) -> None:
    _, alice, bob = two_owners
    with OwnerDatabase(rls_db, alice).connection() as conn:
        assert (
            conn.execute("UPDATE documents SET title = 'x' WHERE owner_id = %s", (bob,)).rowcount
            == 0
        )
        assert conn.execute("DELETE FROM chunks WHERE owner_id = %s", (bob,)).rowcount == 0
        assert delete_document_quietly(conn, bob, "kola.md") is None
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO documents (owner_id, source_id, lang, content_hash, char_count) "
                "VALUES (%s, 'planted.md', 'cs', '\\x00', 1)",
                (bob,),
            )
        conn.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO owners (name) VALUES ('intruder')")  # no owners are created
        conn.rollback()
    with rls_db.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = %s", (bob,)
        ).fetchone() == (2,)
        assert conn.execute("SELECT count(*) FROM owners WHERE name = 'intruder'").fetchone() == (
            0,
        )


def delete_document_quietly(conn: psycopg.Connection, owner_id: int, ref: str) -> object:
    try:
        return delete_document(conn, owner_id, ref)
    except NotFound:
        return None


def test_no_owner_set_sees_nothing(rls_db: Database) -> None:
    with rls_db.connection() as conn:
        conn.execute("SET ROLE rag_service")
        assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        conn.execute("RESET ROLE")


def test_connections_go_back_to_the_pool_unscoped(
    rls_db: Database, two_owners: tuple[str, int, int]
) -> None:
    _, alice, _ = two_owners
    who = "SELECT current_user, current_setting('rag.owner_id', true)"
    with rls_db.connection() as conn:
        session_user = conn.execute("SELECT session_user").fetchone()[0]
    with OwnerDatabase(rls_db, alice).connection() as conn:
        assert conn.execute(who).fetchone() == ("rag_service", str(alice))
    with rls_db.connection() as conn:  # pool_max=1: the very same connection
        assert conn.execute(who).fetchone() == (session_user, "")
    with (
        pytest.raises(psycopg.errors.DivisionByZero),
        OwnerDatabase(rls_db, alice).connection() as c,
    ):
        c.execute("SELECT 1 / 0")
    with rls_db.connection() as conn:
        assert conn.execute(who).fetchone() == (session_user, "")


def test_ingestion_and_deletion_under_rls_keep_statistics_exact(
    rls_db: Database, two_owners: tuple[str, int, int], tmp_path: Path
) -> None:
    url, _, bob = two_owners
    settings = Settings(database_url=url, data_dir=tmp_path, embedder="none")
    scoped = OwnerDatabase(rls_db, bob)
    ingestor = Ingestor(rls_db, settings, None, "bob")
    ingestor.db = scoped  # as the service does: the owner exists, writes go through RLS
    ingestor.add_all(
        [
            LoadedDocument(
                "novy.md", None, "Nový ventilátor stojí v chodbě u výtahu.", "cs", {}, "novy.md"
            )
        ]
    )
    exact = """
        SELECT (SELECT chunk_count FROM owners WHERE owner_id = %(o)s),
               (SELECT count(*) FROM chunks WHERE owner_id = %(o)s),
               (SELECT coalesce(sum(df), 0) FROM word_stats WHERE owner_id = %(o)s),
               (SELECT count(*) FROM chunks c, unnest(tsvector_to_array(c.word_keys)) k
                 WHERE c.owner_id = %(o)s)"""
    with rls_db.connection() as conn:
        counted, chunks, df_total, keys_total = conn.execute(exact, {"o": bob}).fetchone()
    assert counted == chunks == 3 and df_total == keys_total
    with scoped.connection() as conn:
        delete_document(conn, bob, "novy.md")
    with rls_db.connection() as conn:
        counted, chunks, df_total, keys_total = conn.execute(exact, {"o": bob}).fetchone()
    assert counted == chunks == 2 and df_total == keys_total


def test_full_text_match_uses_the_gin_index_under_rls(rls_db: Database) -> None:
    # Under RLS the planner may use an index for `@@` only if ts_match_vq is LEAKPROOF (sql/002).
    # An owner with many chunks and one match makes the GIN index the plan whenever it is allowed.
    with rls_db.connection() as conn:
        carol = ensure_owner(conn, "carol")
        doc = conn.execute(
            "INSERT INTO documents (owner_id, source_id, lang, content_hash, char_count) "
            "VALUES (%s, 'mnoho.md', 'cs', '\\x00', 1) RETURNING document_id",
            (carol,),
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO chunks (owner_id, document_id, ordinal, text, char_count, token_count,"
            " word_keys) SELECT %s, %s, g, 'vata', 4, 2, format('%%L %%L', 'l:vata', 'l:k' || g)::tsvector"
            " FROM generate_series(1, 3000) g",
            (carol, doc),
        )
        conn.commit()
        conn.execute("ANALYZE chunks")
        conn.commit()
    explain = (
        "EXPLAIN SELECT chunk_id FROM chunks WHERE word_keys @@ %s::tsquery"  # no owner filter
    )
    scope = "SELECT set_config('role', 'rag_service', true), set_config('rag.owner_id', %s, true)"
    try:
        with rls_db.connection() as conn:
            conn.execute(scope, (str(carol),))
            plan = "\n".join(r[0] for r in conn.execute(explain, ("'l:k17'",)))
            conn.rollback()
            assert "chunks_word_keys" in plan, plan
            # The same plan with the mark taken away (and rolled back): the index is not allowed.
            conn.execute("ALTER FUNCTION ts_match_vq(tsvector, tsquery) NOT LEAKPROOF")
            conn.execute(scope, (str(carol),))
            unmarked = "\n".join(r[0] for r in conn.execute(explain, ("'l:k17'",)))
            conn.rollback()
            assert "chunks_word_keys" not in unmarked, unmarked
    finally:
        with rls_db.connection() as conn:
            conn.execute("DELETE FROM owners WHERE owner_id = %s", (carol,))


# --- the command line ---------------------------------------------------------------------------


def test_cli_apikeys_create_list_revoke(keys_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": keys_url, "RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDER": "fake"}
    runner = CliRunner()
    created = runner.invoke(
        cli, ["apikeys", "create", "--owner", "t-cli", "--label", "notebook"], env=env
    )
    assert created.exit_code == 0, created.output
    token = created.output.strip().splitlines()[-1]
    assert token.startswith(TOKEN_PREFIX)
    key_id = int(created.output.split()[1])
    listed = runner.invoke(cli, ["apikeys", "list", "--owner", "t-cli"], env=env)
    assert listed.exit_code == 0 and "notebook" in listed.output and "active" in listed.output
    assert token not in listed.output
    revoked = runner.invoke(cli, ["apikeys", "revoke", str(key_id)], env=env)
    assert revoked.exit_code == 0 and f"key {key_id} revoked" in revoked.output
    listed = runner.invoke(cli, ["apikeys", "list", "--owner", "t-cli", "--json"], env=env)
    assert '"revoked_at": null' not in listed.output
    missing = runner.invoke(cli, ["apikeys", "revoke", "987654"], env=env)
    assert missing.exit_code == 1 and "no API key 987654" in missing.output


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_open_interfaces_need_keys_or_allow_open() -> None:
    open_host = Settings(host="0.0.0.0")
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0 without API keys"):
        check_exposure(open_host, keys_exist=False)
    check_exposure(open_host, keys_exist=True)
    check_exposure(open_host.replace(allow_open=True), keys_exist=False)
    check_exposure(Settings(host="127.0.0.1"), keys_exist=False)


def test_rag_serve_refuses_a_public_address_without_keys(fresh_db_url: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_db_url, "RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDER": "fake"}
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0"], env=env)
    assert result.exit_code == 1
    assert "refusing to listen on 0.0.0.0 without API keys" in result.output
