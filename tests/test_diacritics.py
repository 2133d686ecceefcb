"""Questions typed without diacritics, spelled back as the owner's corpus spells them.

The spelling entries of a chunk (``a:<form>:<marks>``), the restoration of a question from them and
from the stopword list, and, against a real database, what a search embeds and keys: the restored
question, in a live search and in evaluation alike, and nothing once the documents are gone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from rag.answer.engine import Engine
from rag.db import Database
from rag.eval.sets import Case, retrieve_all
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.language.diacritics import may_restore, restore
from rag.language.keys import _accent_entry, _body, chunk_keys, spelling_from_accent_key
from rag.search.retrieve import searched_question
from rag.settings import Settings
from rag.store import delete_document, find_owner


@pytest.mark.parametrize(
    ("word", "entry"),
    [
        ("nabití", "a:nabiti:5xed"),
        ("Úplně", "a:uplne:0xfa.4x11b"),
        ("Žluťoučký", "a:zlutoucky:0x17e.3x165.6x10d.8xfd"),
        ("Łódź", "a:lodz:0x142.1xf3.3x17a"),
        ("ôsmy", "a:osmy:0xf4"),
    ],
)
def test_spelling_entry_records_where_the_accents_sit(word: str, entry: str) -> None:
    assert _accent_entry(word, _body(word)) == entry
    assert spelling_from_accent_key(entry) == word.lower()


@pytest.mark.parametrize("word", ["Brno", "Straße", "Москве", "3,8", "ZX-4411"])
def test_no_spelling_entry_without_one_to_one_latin_accents(word: str) -> None:
    assert _accent_entry(word, _body(word)) is None


@pytest.mark.parametrize(
    "key",
    [
        "a:trva",
        "a:trva:",
        "a:trva:9xe1",
        "a:trva:3x41",
        "a:trva:3x43c",
        "a:trva:3xzz",
        "m:trva:3xe1",
    ],
)
def test_malformed_spelling_entries_give_nothing(key: str) -> None:
    assert spelling_from_accent_key(key) is None


def test_chunk_keys_hold_spelling_entries_for_content_words_only() -> None:
    keys = chunk_keys("Že úplné nabití trvá dvě hodiny.", "cs").keys
    spellings = sorted(k for k in keys if k.startswith("a:"))
    assert spellings == ["a:dve:2x11b", "a:nabiti:5xed", "a:trva:3xe1", "a:uplne:0xfa.4xe9"]


SPELLINGS = {"trva": "trvá", "uplne": "úplné", "nabiti": "nabití", "terminalu": "terminálu"}


@pytest.mark.parametrize(
    ("question", "lang", "expected"),
    [
        # capitals kept where typed, codes and unknown words as typed
        (
            "Jak dlouho trva uplne nabiti terminalu SOVA T3?",
            "cs",
            "Jak dlouho trvá úplné nabití terminálu SOVA T3?",
        ),
        ("TRVA UPLNE nabiti?", "cs", "TRVÁ ÚPLNÉ nabití?"),
        # a stopword with one accented spelling comes back, "ze" (ze / že) stays; a word the
        # corpus lacks takes the dictionary's one spelling ("terminál")
        ("Jaky terminal ze skladu?", "cs", "Jaký terminál ze skladu?"),
        # the dictionary knows two spellings of "liska" (liška, líska), and "byt" is a word
        ("Smi se krmit liska u byt?", "cs", "Smí se krmit liska u byt?"),
        # a question typed with diacritics is taken as typed, even where a word lacks them
        ("Jak dlouho trvá uplne nabiti?", "cs", "Jak dlouho trvá uplne nabiti?"),
        # languages whose ASCII text is ordinary text are left alone
        ("Wie lange dauert nabiti?", "de", "Wie lange dauert nabiti?"),
        ("How long does nabiti take?", "en", "How long does nabiti take?"),
        ("Ako dlho trva nabiti?", "sk", "Ako dlho trvá nabití?"),
    ],
)
def test_restore(question: str, lang: str, expected: str) -> None:
    assert restore(question, lang, SPELLINGS) == expected


def test_only_all_ascii_questions_with_letters_may_be_restored() -> None:
    assert may_restore("Kdo je Novak?")
    assert not may_restore("Kdo je Novák?")
    assert not may_restore("123 456?")


class Recording:
    """A deterministic embedder that remembers the questions it was asked to embed."""

    model_id = "recording/4"
    dim = 4

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        if kind == "query":
            self.queries.extend(texts)
        out = [
            np.asarray([1.0, len(t) % 7, t.count("é") + 1, 1.0], dtype=np.float32) for t in texts
        ]
        return np.stack([v / np.linalg.norm(v) for v in out])


MANUAL = (
    "Úplné nabití terminálu trvá dvě hodiny. Terminál se nabíjí v kolébce u výdejního okna; "
    "během nabíjení svítí zelená kontrolka. Kolébky dodává firma Čeřovský."
)
PAYROLL = "Výplatní páska se posílá e-mailem. Nabití karty na obědy trvá den."


def _load(db: Database, settings: Settings, owner: str, embedder: Recording) -> int:
    docs = [
        LoadedDocument("manual.txt", None, MANUAL, "cs", {}, "manual.txt"),
        LoadedDocument("payroll.txt", None, PAYROLL, "cs", {}, "payroll.txt"),
    ]
    Ingestor(db, settings, embedder, owner, embed_now=True).add_all(docs)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    return oid


def test_search_embeds_and_keys_the_question_as_the_corpus_spells_it(
    db: Database, settings: Settings, owner: str
) -> None:
    emb = Recording()
    oid = _load(db, settings, owner, emb)
    engine = Engine(db, settings, emb)
    result = engine.search(oid, "Jak dlouho trva uplne nabiti terminalu?")
    restored = "Jak dlouho trvá úplné nabití terminálu?"
    assert result.retrieval.searched_as == restored
    assert result.as_dict()["searched_as"] == restored
    assert emb.queries[-1] == restored
    surfaces = {w.surface for w in result.retrieval.query.words}
    assert {"trvá", "úplné", "nabití", "terminálu"} <= surfaces
    assert result.hits and result.hits[0].candidate.source_id == "manual.txt"

    # typed with diacritics: taken as typed, nothing restored
    typed = engine.search(oid, "Jak dlouho trvá úplné nabití terminálu?")
    assert typed.retrieval.searched_as is None
    assert typed.as_dict()["searched_as"] is None
    assert emb.queries[-1] == "Jak dlouho trvá úplné nabití terminálu?"


def test_evaluation_embeds_the_restored_question(
    db: Database, settings: Settings, owner: str
) -> None:
    emb = Recording()
    oid = _load(db, settings, owner, emb)
    engine = Engine(db, settings, emb)
    emb.queries.clear()
    [r] = retrieve_all(
        engine, oid, [Case("u-1", "Kdy sviti zelena kontrolka?", ())], progress=False
    )
    assert r.searched_as == "Kdy svítí zelená kontrolka?"
    assert emb.queries == [r.searched_as]


def test_spellings_follow_the_owners_documents(
    db: Database, settings: Settings, owner: str
) -> None:
    emb = Recording()
    oid = _load(db, settings, owner, emb)
    # a surname only the manual spells, which no dictionary knows
    assert searched_question(db, oid, "Kdo je Cerovsky?") == "Kdo je Čeřovský?"
    with db.connection() as conn:
        delete_document(conn, oid, "manual.txt")
        conn.commit()
    assert searched_question(db, oid, "Kdo je Cerovsky?") == "Kdo je Cerovsky?"
    # another owner's words are not this owner's spellings
    other = owner + "-other"
    Ingestor(db, settings, emb, other, embed_now=True).add_all(
        [LoadedDocument("c.txt", None, "Kolébky dodává firma Čeřovský.", "cs", {}, "c.txt")]
    )
    with db.connection() as conn:
        other_id = find_owner(conn, other)
    assert other_id is not None
    assert searched_question(db, other_id, "Kdo je Cerovsky?") == "Kdo je Čeřovský?"
    assert searched_question(db, oid, "Kdo je Cerovsky?") == "Kdo je Cerovsky?"


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # the corpus writes the form with accents in two chunks of three: restored
        (["Před recepcí je káva.", "Za recepcí je šatna.", "Na recepci je parkoviště."], "recepcí"),
        # mostly without: the corpus's own spelling is the typed one
        (
            ["Hlaste se na recepci.", "Na recepci je káva.", "Před recepcí je parkoviště."],
            "recepci",
        ),
    ],
)
def test_the_corpus_spelling_of_a_form_wins(
    db: Database, settings: Settings, owner: str, texts: list[str], expected: str
) -> None:
    docs = [
        LoadedDocument(f"d{i}.txt", None, t, "cs", {}, f"d{i}.txt") for i, t in enumerate(texts)
    ]
    Ingestor(db, settings, Recording(), owner, embed_now=True).add_all(docs)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    assert searched_question(db, oid, "Kde je recepci?") == f"Kde je {expected}?"
