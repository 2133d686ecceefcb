"""Ingestion against the real database: formats, idempotence, atomic replacement, cascades, bad input."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import EmbedderError
from rag.ingest.chunking import chunk_text
from rag.ingest.loaders import LoadedDocument, iter_paths, load_path
from rag.ingest.reindex import reindex
from rag.ingest.writer import Ingestor
from rag.settings import Settings
from rag.store import delete_document, find_owner


def doc(source_id: str, text: str, title: str | None = None) -> LoadedDocument:
    return LoadedDocument(
        source_id=source_id, title=title, text=text, lang="cs", metadata={}, origin=source_id
    )


def ingest(db: Database, settings: Settings, owner: str, docs: list[LoadedDocument], embedder=None):
    return Ingestor(db, settings, embedder, owner, embed_now=True).add_all(docs)


def recount(conn: psycopg.Connection, owner_id: int) -> dict[str, int]:
    rows = conn.execute(
        """SELECT k, count(*) FROM chunks c, unnest(tsvector_to_array(c.word_keys)) k
           WHERE c.owner_id = %s GROUP BY k""",
        (owner_id,),
    ).fetchall()
    return {k: int(n) for k, n in rows}


def stats(conn: psycopg.Connection, owner_id: int) -> dict[str, int]:
    return dict(
        conn.execute("SELECT key, df FROM word_stats WHERE owner_id = %s", (owner_id,)).fetchall()
    )


def owner_counts(conn: psycopg.Connection, owner_id: int) -> tuple[int, int, int, int]:
    row = conn.execute(
        """SELECT o.chunk_count, o.token_total, (SELECT count(*) FROM chunks c WHERE c.owner_id = o.owner_id),
                  (SELECT coalesce(sum(token_count), 0) FROM chunks c WHERE c.owner_id = o.owner_id)
           FROM owners o WHERE owner_id = %s""",
        (owner_id,),
    ).fetchone()
    return tuple(int(x) for x in row)  # type: ignore[return-value]


LONG = "\n\n".join(
    f"Odstavec číslo {i}. Pes běžel přes louku k lesu a liška ho sledovala z křoví. "
    f"Na pavlači domu číslo {i} sušila paní Nováková prádlo."
    for i in range(40)
)


def test_ingest_then_unchanged_is_a_no_op(db: Database, settings: Settings, owner: str) -> None:
    docs = [
        doc("a.txt", LONG, "Dlouhý"),
        doc("b.txt", "Cenu předal ředitel Novákovi. Šlo o sklad."),
    ]
    first = ingest(db, settings, owner, docs)
    assert (first.added, first.replaced, first.unchanged, first.failed) == (2, 0, 0, 0)
    assert first.chunks > 2
    second = ingest(db, settings, owner, docs)
    assert (second.added, second.replaced, second.unchanged, second.chunks) == (0, 0, 2, 0)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        n = conn.execute("SELECT count(*) FROM chunks WHERE owner_id = %s", (oid,)).fetchone()
    assert n == (first.chunks,)


def test_short_record_is_one_chunk_with_its_length(
    db: Database, settings: Settings, owner: str
) -> None:
    text = "Cenu za inovaci předal ředitel Novákovi z oddělení vývoje. Ocenění se týkalo skladu."
    ingest(db, settings, owner, [doc("rec-1", text)])
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT text, char_count, token_count FROM chunks c JOIN owners o USING (owner_id) WHERE o.name = %s",
            (owner,),
        ).fetchall()
    assert len(rows) == 1
    assert rows[0][0] == text and rows[0][1] == len(text) and rows[0][2] >= 12


def test_statistics_stay_exact_through_add_replace_delete(
    db: Database, settings: Settings, owner: str
) -> None:
    ingest(db, settings, owner, [doc("a", LONG), doc("b", "Psa venčí Pavel. Liška utekla.")])
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        assert oid is not None
        assert stats(conn, oid) == recount(conn, oid)
        c = owner_counts(conn, oid)
        assert c[0] == c[2] and c[1] == c[3]
    ingest(db, settings, owner, [doc("b", "Úplně jiný text o kočce a myši v Brně.")])
    with db.connection() as conn:
        s = stats(conn, oid)
        assert s == recount(conn, oid)
        assert "l:kocka" in s and "l:liska" in s  # liška still in document a
        delete_document(conn, oid, "a")
        s = stats(conn, oid)
        assert s == recount(conn, oid)
        assert "l:liska" not in s
        c = owner_counts(conn, oid)
        assert c[0] == c[2] and c[1] == c[3]
        delete_document(conn, oid, "b")
        assert stats(conn, oid) == {}
        assert owner_counts(conn, oid)[:2] == (0, 0)


def test_language_counts_stay_exact_through_add_replace_delete(
    db: Database, settings: Settings, owner: str
) -> None:
    def langs(conn: psycopg.Connection, oid: int) -> dict[str, int]:
        kept = conn.execute(
            "SELECT lang, documents FROM owner_langs WHERE owner_id = %s", (oid,)
        ).fetchall()
        counted = conn.execute(
            "SELECT lang, count(*) FROM documents WHERE owner_id = %s GROUP BY lang", (oid,)
        ).fetchall()
        assert dict(kept) == dict(counted)
        return dict(kept)

    slovak = LoadedDocument(
        source_id="b", title=None, text="Pes beží cez lúku.", lang="sk", metadata={}, origin="b"
    )
    ingest(db, settings, owner, [doc("a", LONG), doc("b", "Psa venčí Pavel."), doc("c", "Kočka.")])
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        assert oid is not None
        assert langs(conn, oid) == {"cs": 3}
    ingest(db, settings, owner, [slovak])  # replaced in place: an UPDATE of documents.lang
    with db.connection() as conn:
        assert langs(conn, oid) == {"cs": 2, "sk": 1}
        delete_document(conn, oid, "b")
        assert langs(conn, oid) == {"cs": 2}
        conn.execute("DELETE FROM documents WHERE owner_id = %s", (oid,))  # raw SQL, no rag code
        conn.commit()
        assert langs(conn, oid) == {}


def test_deleting_a_document_cascades_to_chunks(
    db: Database, settings: Settings, owner: str
) -> None:
    ingest(db, settings, owner, [doc("a", LONG)])
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        conn.execute("DELETE FROM documents WHERE owner_id = %s", (oid,))  # raw SQL, no rag code
        conn.commit()
        assert conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = %s", (oid,)
        ).fetchone() == (0,)
        assert stats(conn, oid) == {}


def test_chunk_keys_cannot_change_in_place(db: Database, settings: Settings, owner: str) -> None:
    ingest(db, settings, owner, [doc("a", "Krátký záznam o psovi.")])
    with db.connection() as conn, pytest.raises(psycopg.errors.RaiseException, match="immutable"):
        conn.execute(
            "UPDATE chunks SET text = 'x' WHERE owner_id = (SELECT owner_id FROM owners WHERE name = %s)",
            (owner,),
        )


def test_replacement_is_atomic_for_readers(db: Database, settings: Settings, owner: str) -> None:
    """A reader polling during many replacements always sees exactly one complete version."""
    versions = {
        v: "\n\n".join(f"Verze {v} odstavec {i}. " + "slovo " * 60 for i in range(12))
        for v in range(2)
    }
    ingest(db, settings, owner, [doc("doc", versions[0])])
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    seen: list[tuple[int, ...]] = []
    stop = threading.Event()

    def reader() -> None:
        with psycopg.connect(settings.database_url) as conn:  # type: ignore[arg-type]
            while not stop.is_set():
                rows = conn.execute(
                    "SELECT substring(text from 'Verze (\\d)')::int FROM chunks WHERE owner_id = %s",
                    (oid,),
                ).fetchall()
                conn.commit()
                seen.append(tuple(sorted(r[0] for r in rows)))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i in range(1, 9):
            ingest(db, settings, owner, [doc("doc", versions[i % 2])])
    finally:
        stop.set()
        t.join(30)
    assert seen
    counts = {
        v: len(chunk_text(text, size=settings.chunk_size, overlap=settings.chunk_overlap))
        for v, text in versions.items()
    }
    for snapshot in seen:
        assert snapshot, "reader saw no version at all"
        assert len(set(snapshot)) == 1, f"reader saw two versions at once: {set(snapshot)}"
        assert len(snapshot) == counts[snapshot[0]], "reader saw an incomplete version"


class BrokenEmbedder:
    model_id = "broken/1"
    dim = 8

    def embed(self, texts, *, kind):
        raise EmbedderError("model server down")


def test_embedder_failure_keeps_document_searchable_and_reindex_backfills(
    db: Database, settings: Settings, owner: str
) -> None:
    summary = ingest(
        db, settings, owner, [doc("a", "Pes a liška v Brně.")], embedder=BrokenEmbedder()
    )
    assert summary.added == 1 and summary.unembedded == 1
    assert any("model server down" in d for d in summary.degraded)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        row = conn.execute(
            "SELECT embedding IS NULL, word_keys @@ %s::tsquery FROM chunks WHERE owner_id = %s",
            ("'l:pes'", oid),
        ).fetchone()
    assert row == (True, True)
    fake = make_embedder(settings)
    assert fake is not None
    done = reindex(db, fake, oid)
    assert done.embedded == 1
    with db.connection() as conn:
        assert conn.execute(
            "SELECT embed_model FROM chunks WHERE owner_id = %s", (oid,)
        ).fetchone() == (fake.model_id,)


def test_reindex_after_model_switch(db: Database, settings: Settings, owner: str) -> None:
    a = make_embedder(settings.replace(embed_dim=32))
    b = make_embedder(settings.replace(embed_dim=48))
    assert a is not None and b is not None and a.model_id != b.model_id
    ingest(db, settings, owner, [doc("x", LONG)], embedder=a)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert reindex(db, b, oid).embedded > 0
    assert reindex(db, b, oid).embedded == 0  # nothing left for the new model
    with db.connection() as conn:
        models = conn.execute(
            "SELECT DISTINCT embed_model, vector_dims(embedding) FROM chunks WHERE owner_id = %s",
            (oid,),
        ).fetchall()
    assert models == [(b.model_id, 48)]
    assert reindex(db, b, oid, force=True).embedded > 0


def test_cli_ingest_reports_bad_files_and_keeps_good_ones(
    tmp_path: Path, settings: Settings, owner: str
) -> None:
    (tmp_path / "good.txt").write_text("Dobrý dokument o psovi a lišce.", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("   \n", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"caf\xe9 \xff\xfe")
    (tmp_path / "x.xyz").write_text("unsupported", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    (tmp_path / "rows.jsonl").write_text(
        json.dumps({"id": "r1", "text": "Záznam jedna."}, ensure_ascii=False)
        + "\n"
        + json.dumps({"text": "bez id"})
        + "\n"
        + "{not json\n",
        encoding="utf-8",
    )
    env = {
        "DATABASE_URL": settings.database_url,
        "RAG_EMBEDDER": "fake",
        "RAG_DATA_DIR": str(tmp_path),
    }
    result = CliRunner().invoke(cli, ["ingest", str(tmp_path), "--owner", owner, "--json"], env=env)
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    assert summary["added"] == 2  # good.txt and r1
    origins = " ".join(f["error"] for f in summary["failures"])
    for name in ("empty.txt", "bad.txt", "x.xyz", "broken.pdf", "rows.jsonl:2", "rows.jsonl:3"):
        assert name in origins, f"{name} missing from {origins}"
    with psycopg.connect(settings.database_url) as conn:  # type: ignore[arg-type]
        n = conn.execute(
            "SELECT count(*) FROM documents d JOIN owners o USING (owner_id) WHERE o.name = %s",
            (owner,),
        ).fetchone()
    assert n == (2,)


def test_cli_documents_list_show_delete(tmp_path: Path, settings: Settings, owner: str) -> None:
    (tmp_path / "one.md").write_text("# Titulek\n\nText o pavlači.", encoding="utf-8")
    env = {
        "DATABASE_URL": settings.database_url,
        "RAG_EMBEDDER": "none",
        "RAG_DATA_DIR": str(tmp_path),
    }
    r = CliRunner()
    assert (
        r.invoke(cli, ["ingest", str(tmp_path / "one.md"), "--owner", owner], env=env).exit_code
        == 0
    )
    listed = r.invoke(cli, ["documents", "list", "--owner", owner, "--json"], env=env)
    rows = json.loads(listed.stdout)
    assert len(rows) == 1 and rows[0]["title"] == "Titulek"
    shown = r.invoke(
        cli, ["documents", "show", str(rows[0]["document_id"]), "--owner", owner], env=env
    )
    assert "Titulek" in shown.stdout
    gone = r.invoke(cli, ["documents", "delete", rows[0]["source_id"], "--owner", owner], env=env)
    assert gone.exit_code == 0
    again = r.invoke(cli, ["documents", "delete", rows[0]["source_id"], "--owner", owner], env=env)
    assert again.exit_code == 1 and "rag: error: no document" in again.stderr


def test_every_sample_file_loads(tmp_path: Path) -> None:
    from rag.eval.sets import SAMPLE_DIR

    items = [x for p in iter_paths([SAMPLE_DIR]) for x in load_path(p, max_bytes=10_000_000)]
    failures = [x for x in items if not isinstance(x, LoadedDocument)]
    assert not failures, failures
    assert len(items) >= 12


def test_vectors_are_stored_with_their_model(db: Database, settings: Settings, owner: str) -> None:
    fake = make_embedder(settings)
    ingest(db, settings, owner, [doc("v", "Krátký text o psech.")], embedder=fake)
    with db.connection() as conn:
        emb, model = conn.execute(
            "SELECT embedding, embed_model FROM chunks c JOIN owners o USING (owner_id) WHERE o.name = %s",
            (owner,),
        ).fetchone()
    assert model == fake.model_id
    vec = emb.to_numpy() if hasattr(emb, "to_numpy") else np.asarray(emb)
    assert vec.shape == (fake.dim,)
    assert np.isclose(np.linalg.norm(vec), 1.0, atol=1e-4)
