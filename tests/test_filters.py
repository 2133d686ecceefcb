"""Metadata filters inside both retrievers, against a real database.

A filtered search never returns a chunk outside the filter, in any mode; a small filtered set
inside a large owner still gets its full vector list (through the HNSW iterative scan and through
the exact scan small sets get); the word statistics stay the owner's; filter values travel as
parameters.
"""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest

from rag.answer.engine import Engine
from rag.db import Database, migrate
from rag.embedders import make_embedder
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.search.filters import SearchFilter
from rag.settings import Settings
from rag.store import find_owner
from tests.test_hybrid import WORDS_ONLY

DOCS = [
    # source_id, lang, metadata, text
    (
        "policies/travel.md",
        "cs",
        {"team": "ops", "date": "2024-03-01"},
        "Cestovní náhrady se vyúčtují do deseti dnů po návratu ze služební cesty.",
    ),
    (
        "policies/vacation.md",
        "cs",
        {"team": "hr", "date": "2025-01-15"},
        "Dovolenou schvaluje vedoucí týmu nejméně týden předem v docházkovém systému.",
    ),
    (
        "notes/travel-2023.md",
        "cs",
        {"team": "ops", "date": "2023-06-30"},
        "Služební cesta do Brna: náhrady za jízdné vyúčtoval účetní oddělení v červenci.",
    ),
    (
        "notes/undated.md",
        "cs",
        {"team": "ops", "year": 2024, "public": True},
        "Služební vozy a cestovní náhrady řeší provozní oddělení.",
    ),
    (
        "en/travel.md",
        "en",
        {"team": "ops", "date": "not a date"},
        "Travel expenses for a business trip are settled within ten days.",
    ),
]
QUESTION = "Kdy se vyúčtují cestovní náhrady za služební cestu?"


def _load(db: Database, settings: Settings, owner: str, embedder: object) -> int:
    docs = [LoadedDocument(s, None, t, lang, meta, s) for s, lang, meta, t in DOCS]
    Ingestor(db, settings, embedder, owner, embed_now=True).add_all(docs)  # type: ignore[arg-type]
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    return oid


def _admitted(f: SearchFilter) -> set[str]:
    today = dt.datetime.now(dt.UTC).date()
    out = set()
    for source, lang, meta, _ in DOCS:
        if f.source_prefix and not source.startswith(f.source_prefix):
            continue
        if any(meta.get(k) != v for k, v in f.metadata.items()):
            continue
        if f.lang and lang != f.lang:
            continue
        date = meta.get("date")
        day = date if isinstance(date, str) and date[:4].isdigit() else today.isoformat()
        if f.date_from and day < f.date_from.isoformat():
            continue
        if f.date_to and day > f.date_to.isoformat():
            continue
        out.add(source)
    return out


FILTERS = [
    SearchFilter(source_prefix="policies/"),
    SearchFilter(source_prefix="notes/"),
    SearchFilter(metadata={"team": "ops"}),
    SearchFilter(metadata={"team": "ops", "year": 2024}),
    SearchFilter(metadata={"public": True}),
    SearchFilter(lang="en"),
    SearchFilter(date_from=dt.date(2024, 1, 1), date_to=dt.date(2024, 12, 31)),
    SearchFilter(date_to=dt.date(2023, 12, 31)),
    # no metadata.date (or not a date): the day of ingestion, today
    SearchFilter(date_from=dt.datetime.now(dt.UTC).date()),
    SearchFilter(source_prefix="policies/", metadata={"team": "hr"}),
]


@pytest.mark.parametrize("mode", ["hybrid", "fts", "vector"])
def test_filtered_search_returns_only_admitted_documents(
    db: Database, settings: Settings, owner: str, mode: str
) -> None:
    fake = make_embedder(settings)
    oid = _load(db, settings, owner, fake)
    engine = Engine(db, settings, fake, params=WORDS_ONLY)
    for f in FILTERS:
        want = _admitted(f)
        assert want, f  # every filter above admits something
        got = {
            h.candidate.source_id for h in engine.search(oid, QUESTION, mode=mode, filters=f).hits
        }  # type: ignore[arg-type]
        assert got <= want, (f, got - want)
        if mode == "vector":
            assert got == want, (f, got, want)  # the vector list holds every admitted chunk
    everything = {h.candidate.source_id for h in engine.search(oid, QUESTION, mode=mode).hits}  # type: ignore[arg-type]
    # unfiltered, more is found than any filter above admits alone
    assert len(everything) >= (1 if mode == "fts" else len(DOCS)), everything


def test_word_statistics_stay_the_owners(db: Database, settings: Settings, owner: str) -> None:
    oid = _load(db, settings, owner, None)
    engine = Engine(db, settings, None, params=WORDS_ONLY)
    question = "Jaké náhrady za služební cestu do Brna a vozy?"
    plain = engine.search(oid, question, mode="fts")
    narrow = engine.search(oid, question, mode="fts", filters=SearchFilter(source_prefix="notes/"))
    assert narrow.retrieval.chunk_count == plain.retrieval.chunk_count == len(DOCS)
    assert narrow.retrieval.key_df == plain.retrieval.key_df
    bm25 = {h.candidate.chunk_id: h.candidate.bm25 for h in plain.hits}
    for h in narrow.hits:
        assert h.candidate.source_id.startswith("notes/")
        assert h.candidate.bm25 == pytest.approx(bm25[h.candidate.chunk_id])
    assert narrow.hits


def test_excluded_documents_take_no_rank(db: Database, settings: Settings, owner: str) -> None:
    fake = make_embedder(settings)
    oid = _load(db, settings, owner, fake)
    engine = Engine(db, settings, fake, params=WORDS_ONLY)
    hits = engine.search(oid, QUESTION).hits
    top = hits[0].candidate
    rest = engine.search(
        oid, QUESTION, filters=SearchFilter(exclude_document_ids=(top.document_id,))
    )
    assert rest.hits and top.document_id not in {h.candidate.document_id for h in rest.hits}
    assert rest.hits[0].candidate.fts_rank == 1 or rest.hits[0].candidate.vector_rank == 1


@pytest.mark.parametrize(
    "f",
    [
        SearchFilter(source_prefix="x'; DROP TABLE chunks; --"),
        SearchFilter(metadata={"team": "ops' OR '1'='1"}),
        SearchFilter(metadata={"a%b": "_%\\"}),
        SearchFilter(lang="cs' OR true --"),
    ],
)
def test_hostile_filter_values_are_only_values(
    db: Database, settings: Settings, owner: str, f: SearchFilter
) -> None:
    fake = make_embedder(settings)
    oid = _load(db, settings, owner, fake)
    assert Engine(db, settings, fake, params=WORDS_ONLY).search(oid, QUESTION, filters=f).hits == []
    with db.connection() as conn:
        assert conn.execute(
            "SELECT count(*) FROM chunks WHERE owner_id = %s", (oid,)
        ).fetchone() == (len(DOCS),)


@pytest.mark.parametrize("exact_below", [0, 100])
def test_small_filtered_set_inside_large_owner_gets_full_vector_list(
    fresh_db_url: str, settings: Settings, owner: str, exact_below: int
) -> None:
    """A filter that admits 30 of 430 chunks must not starve the vector list.

    As in the small-owner test of test_hybrid: a database of its own where the planner has no way
    but the HNSW index, ef_search 10. ``exact_below`` 0 keeps the HNSW iterative scan for the
    filtered set; 100 (more than the set, less than the owner) gives it the exact scan.
    """
    migrate(fresh_db_url)
    with psycopg.connect(fresh_db_url, autocommit=True) as conn:
        conn.execute("DROP INDEX chunks_model")
    info = psycopg.conninfo.conninfo_to_dict(fresh_db_url)
    info["options"] = "-c enable_seqscan=off -c enable_bitmapscan=off"
    s = settings.replace(
        exact_scan_below=exact_below,
        ef_search=10,
        database_url=psycopg.conninfo.make_conninfo(**info),
    )
    fake = make_embedder(s)
    docs = [
        LoadedDocument(
            f"big/{i}", None, f"Záznam {i} o skladu a paletách číslo {i}.", "cs", {}, str(i)
        )
        for i in range(400)
    ] + [
        LoadedDocument(
            f"small/{i}", None, f"Poznámka {i} o skladu v Brně.", "cs", {"team": "brno"}, f"s{i}"
        )
        for i in range(30)
    ]
    with Database(s, run_migrations=False) as hnsw_db:
        Ingestor(hnsw_db, s, fake, owner, embed_now=True).add_all(docs)
        with hnsw_db.connection() as conn:
            oid = find_owner(conn, owner)
        engine = Engine(hnsw_db, s, fake, params=WORDS_ONLY)
        for f in (SearchFilter(metadata={"team": "brno"}), SearchFilter(source_prefix="small/")):
            result = engine.search(oid, "sklad", mode="vector", filters=f)
            got = [h.candidate.source_id for h in result.hits]
            assert len(got) == 30 and all(g.startswith("small/") for g in got), (f, len(got))
