"""Stored sentence analyses (migration 009): what ingestion or the analysis worker stores is what
the answerability stage would compute, a search uses only its own version's, and judgements do
not change with them."""

from __future__ import annotations

import datetime
import json
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import DatabaseUnavailable
from rag.ingest import analysis_queue
from rag.ingest.chunking import chunk_text
from rag.ingest.loaders import LoadedDocument, iter_paths, load_path
from rag.ingest.prepare import prepare
from rag.ingest.writer import Ingestor
from rag.language.keys import normalize
from rag.search import answerability, stored_analysis
from rag.search.answerability import (
    ANALYSIS_VERSION,
    decode_sentences,
    encode_sentences,
    sentences,
    stored_sentences,
)
from rag.search.relevance import FilterParams, judge
from rag.search.retrieve import read_analyses, retrieve
from rag.settings import Settings
from rag.store import find_owner

SAMPLE = Path(__file__).resolve().parent.parent / "rag" / "sample"

# Texts that reach every branch of the analysis: numbers in words and digits, amounts, dates,
# spans of years, clock times, codes, hyphenated compounds, names and their adjectives,
# headings apart from their paragraphs, other languages and scripts, and nothing at all.
VARIED = [
    ("", "cs"),
    ("   \n\n ", "cs"),
    ("Parkovací karta stojí 1 200 Kč měsíčně, od 1. 3. 2024 pak 11 tisíc korun ročně.", "cs"),
    ("# Ceník\n\nKód ZX-4411 platí do 31.12.2025; v letech 1620—21 se nic nedělo.", "cs"),
    ("Sraz je v 8:30 u haly B. Pokud přijdete pozdě, volejte Janu Novákovou.", "cs"),
    ("Polský a britský tým (MLS-Team) hrál 5-Zylinder ve 1970ern, čtyřech zápasech.", "cs"),
    ("Der 5-Zylinder-Zweitaktmotor wurde in den 1970ern von Siemens gebaut.", "de"),
    ("В 1998 году компания «Яндекс» открыла офис в Москве.", "ru"),
    ("Kancelář je otevřená 3denní týden; e-mail: info@firma.cz, tel. 123/2024.", "sk"),
    ("ZÁSADY BEZPEČNOSTI PRÁCE\n\nKaždý zaměstnanec musí projít školením.", "cs"),
]


def sample_chunks() -> list[tuple[str, str]]:
    settings = Settings()
    out = []
    for path in iter_paths([SAMPLE]):
        for item in load_path(path, max_bytes=settings.max_upload_bytes):
            if not isinstance(item, LoadedDocument):
                continue
            lang = item.lang or "cs"
            text = normalize(item.text)
            for c in chunk_text(text, size=settings.chunk_size, overlap=settings.chunk_overlap):
                out.append((c.text, lang))
    return out


def test_stored_analyses_decode_to_what_the_rules_compute() -> None:
    texts = [*sample_chunks(), *VARIED]
    assert len(texts) > 50
    for text, lang in texts:
        live = sentences(text, lang)
        stored = analysis_queue.analysis_json(text, lang)
        decoded = decode_sentences(stored)
        assert decoded == live, text[:60]
        assert [type(s) for s in decoded] == [type(s) for s in live]
        # and what the search reads back is the same
        assert stored_sentences(text, lang, stored) == live


def test_every_field_of_a_sentence_is_stored() -> None:
    text = "Vstupné stojí 120 Kč. Prodejna Mlýn v Brně otevírá v 9:00."
    live = sentences(text, "cs")
    encoded = encode_sentences(live)
    assert all(len(row) == len(answerability.Sentence.__slots__) for row in encoded)
    assert decode_sentences(json.dumps(encoded))[1].classes == live[1].classes


def test_a_damaged_or_missing_analysis_is_computed_by_the_rules() -> None:
    text = "Kantýna otevírá v 11:00 a zavírá ve 14:00."
    live = sentences(text, "cs")
    assert stored_sentences(text, "cs", None) == live
    assert stored_sentences(text, "cs", "[[1, 2]]") == live
    assert stored_sentences(text, "cs", "{not json") == live


def docs_of(*texts: str) -> list[LoadedDocument]:
    return [
        LoadedDocument(f"d{i}", f"Dokument {i}", t, "cs", {}, f"d{i}") for i, t in enumerate(texts)
    ]


TEXTS = (
    "Parkovací karty vydává recepce v přízemí. Karta stojí 300 Kč měsíčně.",
    "Kantýna otevírá v 11:00 a zavírá ve 14:00. Polévka stojí 45 Kč.",
    "Služební vozy se rezervují v rezervačním systému. Po jízdě řidič zapíše stav tachometru.",
)
QUESTIONS = ("Kolik stojí parkovací karta?", "Kdy otevírá kantýna?", "Kdo vydává parkovací karty?")


def rows(conn: psycopg.Connection, owner_id: int) -> list[tuple[int, str | None]]:
    return conn.execute(
        "SELECT version, lang FROM chunk_analyses WHERE owner_id = %s ORDER BY chunk_id",
        (owner_id,),
    ).fetchall()


def verdicts(db: Database, settings: Settings, owner_id: int) -> tuple[list[object], list[bool]]:
    embedder = make_embedder(settings)
    params = FilterParams.from_settings(settings)
    out, stored = [], []
    for q in QUESTIONS:
        r = retrieve(db, settings, embedder, owner_id, q)
        out.append([(j.passed, j.rule, j.answer and j.answer.as_dict()) for j in judge(r, params)])
        # read by judging, which looked for every candidate's window
        stored += [c.analysis is not None for c in r.candidates]
    return out, stored


def test_queued_analyses_are_stored_by_the_worker_and_used_with_the_same_verdicts(
    db: Database, settings: Settings, owner: str
) -> None:
    settings = settings.replace(answer_window=2)
    Ingestor(db, settings, make_embedder(settings), owner, embed_now=True).add_all(docs_of(*TEXTS))
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        assert oid is not None
        assert rows(conn, oid) == [(0, None)] * len(TEXTS)  # queued by the insert trigger
    live, used = verdicts(db, settings, oid)
    assert used and not any(used)  # nothing stored: computed at search time, as before
    assert analysis_queue.waiting(db, oid) == len(TEXTS)
    assert analysis_queue.drain(db, oid, batch=2).analysed == len(TEXTS)
    assert analysis_queue.waiting(db, oid) == 0
    with db.connection() as conn:
        assert rows(conn, oid) == [(ANALYSIS_VERSION, "cs")] * len(TEXTS)
    sentences.cache_clear()
    stored, used = verdicts(db, settings, oid)
    assert used and all(used)
    assert stored == live


def test_a_search_uses_only_its_own_version_and_language(
    db: Database, settings: Settings, owner: str
) -> None:
    Ingestor(db, settings.replace(analyze_at_ingest=True), None, owner).add_all(docs_of(*TEXTS))
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        assert oid is not None
        # analysed by ingestion, in the chunks' own transaction
        assert rows(conn, oid) == [(ANALYSIS_VERSION, "cs")] * len(TEXTS)
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT chunk_id FROM chunks WHERE owner_id = %s ORDER BY chunk_id", (oid,)
            )
        ]
        # an older rules' row, a newer one and one analysed in another language
        for chunk_id, version, lang in zip(
            ids,
            (ANALYSIS_VERSION - 1, ANALYSIS_VERSION + 1, ANALYSIS_VERSION),
            ("cs", "cs", "sk"),
            strict=True,
        ):
            conn.execute(
                "UPDATE chunk_analyses SET version = %s, lang = %s, analysis = '[]'"
                " WHERE owner_id = %s AND chunk_id = %s",
                (version, lang, oid, chunk_id),
            )
        conn.commit()
    r = retrieve(db, settings, None, oid, "parkovací karta kantýna vozy", mode="fts")
    assert len(r.candidates) == len(TEXTS)
    read_analyses(r.candidates)
    assert all(c.analysis is None for c in r.candidates)  # none trusted: each analysed live
    assert all(c.sentences() == sentences(c.text, c.lang) for c in r.candidates)
    # the worker redoes the older row only: a newer process wrote the newer one
    assert analysis_queue.drain(db, oid, batch=10).analysed == 1
    with db.connection() as conn:
        versions = [v for v, _ in rows(conn, oid)]
    assert versions == [ANALYSIS_VERSION, ANALYSIS_VERSION + 1, ANALYSIS_VERSION]


def test_deleting_chunks_deletes_their_analyses(
    db: Database, settings: Settings, owner: str
) -> None:
    ing = Ingestor(db, settings, None, owner)
    ing.add_all(docs_of(*TEXTS))
    Ingestor(db, settings, None, owner).add_all(docs_of("Jiný text prvního dokumentu.", *TEXTS[1:]))
    with db.connection() as conn:
        oid = find_owner(conn, owner)
        n = conn.execute(
            "SELECT count(*) FROM chunk_analyses a JOIN chunks c USING (owner_id, chunk_id)"
            " WHERE a.owner_id = %s",
            (oid,),
        ).fetchone()[0]
        total = conn.execute(
            "SELECT count(*) FROM chunk_analyses WHERE owner_id = %s", (oid,)
        ).fetchone()[0]
    assert n == total == len(TEXTS)


def test_cli_reindex_analyses_stores_the_owners_queue(
    settings: Settings, owner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(settings, run_migrations=False)
    try:
        Ingestor(db, settings, None, owner).add_all(docs_of(*TEXTS))
    finally:
        db.close()
    monkeypatch.setenv("DATABASE_URL", settings.database_url or "")
    monkeypatch.setenv("RAG_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("RAG_EMBEDDER", "none")
    result = CliRunner().invoke(cli, ["reindex", "--analyses", "--owner", owner, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["analysed"] == len(TEXTS) and out["analysis_version"] == ANALYSIS_VERSION


def test_prepare_analyses_only_when_asked(settings: Settings) -> None:
    d = docs_of(TEXTS[0])[0]
    assert prepare(d, settings).chunks[0].analysis is None
    stored = prepare(d, settings.replace(analyze_at_ingest=True)).chunks[0].analysis
    assert stored is not None
    assert decode_sentences(stored) == sentences(normalize(TEXTS[0]), "cs")


def test_the_service_worker_empties_the_queue_in_the_background(
    db: Database, settings: Settings, owner: str
) -> None:
    Ingestor(db, settings, None, owner).add_all(docs_of(*TEXTS))
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    worker = analysis_queue.AnalysisWorker(db, batch=2, idle_poll=0.05)
    worker.start()
    try:
        deadline = time.monotonic() + 30
        while analysis_queue.waiting(db, oid) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        worker.stop()
    assert analysis_queue.waiting(db, oid) == 0
    assert worker.analysed >= len(TEXTS)


class Down:
    """A database that is down."""

    def connection(self) -> None:
        raise DatabaseUnavailable("database unavailable: connection refused")


def test_a_live_search_reads_the_analyses_of_the_windows_it_looks_for(
    db: Database, settings: Settings, owner: str
) -> None:
    """Judging reads a candidate's stored analysis only when it looks for its window; a read
    that fails leaves it to the rules, with the same verdicts."""
    settings = settings.replace(answer_window=2)
    Ingestor(db, settings.replace(analyze_at_ingest=True), None, owner).add_all(docs_of(*TEXTS))
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    params = FilterParams.from_settings(settings)
    question = "Kolik stojí parkovací karta?"
    r = retrieve(db, settings, None, oid, question, mode="fts")
    assert all(c.analysis is None for c in r.candidates)  # not read with the candidates
    live = judge(r, params, complete=False)
    assert [c.analysis is not None for c in r.candidates] == [j.window_checked for j in live]
    assert any(j.window_checked for j in live) and not all(j.window_checked for j in live)
    broken = retrieve(db, settings, None, oid, question, mode="fts")
    for c in broken.candidates:
        assert c.reader is not None
        c.reader.db = Down()  # type: ignore[assignment]
    sentences.cache_clear()
    again = judge(broken, params, complete=False)
    assert all(c.analysis is None for c in broken.candidates)
    assert [(j.passed, j.rule, j.answer and j.answer.as_dict()) for j in again] == [
        (j.passed, j.rule, j.answer and j.answer.as_dict()) for j in live
    ]


@dataclass(frozen=True)
class _Row:
    n: int | None
    nested: tuple[tuple[str, tuple[str, ...]], ...]
    keys: frozenset[str]


@dataclass(frozen=True)
class _Dated:
    when: datetime.date


def test_any_dataclass_of_stored_types_round_trips_and_others_are_refused() -> None:
    rows = (
        _Row(None, (("cas", ("8:30", "9:00")),), frozenset({"l:kantyna", "s:kantyn"})),
        _Row(3, (), frozenset()),
    )
    decode = stored_analysis.decoder(_Row, globals())
    assert decode(json.dumps(stored_analysis.encode(rows))) == rows
    with pytest.raises(ValueError):
        decode('[[1, [], ["x"], "extra"]]')
    with pytest.raises(TypeError, match="no stored form"):
        stored_analysis.decoder(_Dated, globals())
