"""The pull of missing focus words toward a passage (rag.search.pull), against a real database.

The fake embedder hashes words and character n-grams, so its vectors behave as the check expects
of a sentence encoder, for reasons one can state: leaving out a word the passage lacks brings the
question closer to the passage (the word pushed it away), leaving out a word that shares most of
its letters with the passage's words takes it further (the word pulled it closer).
"""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from rag.answer.engine import Engine
from rag.db import Database
from rag.embedders.fake import FakeEmbedder
from rag.eval.sweep import coverage_and_support
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.search.answerability import Answerability
from rag.search.pull import PULL_OFF, PullProbe, occluded
from rag.search.relevance import FilterParams, judge, missing_focus
from rag.search.retrieve import embed_question
from rag.settings import Settings
from rag.store import find_owner


@pytest.mark.parametrize(
    ("text", "words", "expected"),
    [
        ("Kdy proběhne kurz účetnictví v Praze?", ("účetnictví",), "Kdy proběhne kurz v Praze?"),
        ("Kde stojí kontejnery na bioodpad?", ("bioodpad",), "Kde stojí kontejnery na?"),
        # whole words only: "pes" is not taken out of "pesticid"
        ("Smí pes k pesticidu?", ("pes",), "Smí k pesticidu?"),
        (
            "Kolik stojí oprava klimatizace v hale B?",
            ("oprava", "klimatizace"),
            "Kolik stojí v hale B?",
        ),
        ("Kdy se koná zimní slavnost?", ("letní",), "Kdy se koná zimní slavnost?"),
    ],
)
def test_occluded_leaves_out_whole_words(text: str, words: tuple[str, ...], expected: str) -> None:
    assert occluded(text, words) == expected


# the party named by no other kind ("Letní firemní slavnost" would be another kind of the
# masquerade party asked for below, and no vector stands in for that: rag.search.answerability)
PARTY = (
    "Firemní slavnost se koná v pátek 21. června od 15 hodin na louce za halou C. "
    "Partnery a děti je třeba přihlásit do 7. června."
)
CANTEEN = "Jídelna v přízemí haly B vaří obědy od 11 do 13:30 hodin. Večeře je pro odpolední směnu."
# every rule and the paraphrase rule open: only the pull can keep a candidate out
OPEN = FilterParams(
    2.0,
    1.0,
    0.1,
    1,
    0.5,
    "idf",
    1.0,
    answer_window=2,
    focus_words=1,
    paraphrase_max_distance=2.0,
)


def _load(db: Database, settings: Settings, owner: str) -> tuple[int, FakeEmbedder]:
    emb = FakeEmbedder(settings)
    docs = [
        LoadedDocument("party.txt", None, PARTY, "cs", {}, "party.txt"),
        LoadedDocument("canteen.txt", None, CANTEEN, "cs", {}, "canteen.txt"),
    ]
    Ingestor(db, settings, emb, owner, embed_now=True).add_all(docs)
    with db.connection() as conn:
        oid = find_owner(conn, owner)
    assert oid is not None
    return oid, emb


def _party(result: object) -> object:
    hits = result.hits  # type: ignore[attr-defined]
    return next(h for h in hits if h.candidate.source_id == "party.txt")


def test_a_word_the_passage_lacks_pushes_the_question_away(
    db: Database, settings: Settings, owner: str
) -> None:
    oid, emb = _load(db, settings, owner)
    engine = Engine(db, settings, emb, params=OPEN)
    # an attribute the summer party's record does not give; a calendar word ("zimní") would
    # not reach the paraphrase rule at all (rag.search.answerability)
    result = engine.search(oid, "Kdy se koná maškarní firemní slavnost?")
    hit = _party(result)
    assert hit.judgement.answer is not None
    assert missing_focus(hit.judgement.answer) == ("maškarní",)
    # the pull off: the close vector stands in for "maškarní", as before the check existed
    assert hit.judgement.passed and "paraphrase" in hit.judgement.rule
    assert hit.judgement.pull is None

    probe = result.retrieval.pull
    assert isinstance(probe, PullProbe)
    chunk = hit.candidate.chunk_id
    away = probe([chunk], ["maškarní"])[chunk]
    toward = probe([chunk], ["firemní"])[chunk]  # a word the passage has
    assert away is not None and away < 0, away
    assert toward is not None and toward > 0, toward

    guarded = judge(result.retrieval, replace(OPEN, paraphrase_min_pull=0.0))
    j = next(
        j for j, c in zip(guarded, result.retrieval.candidates, strict=True) if c.chunk_id == chunk
    )
    assert not j.passed
    assert j.pull == pytest.approx(away)
    assert j.as_dict()["pull"] == round(away, 4)


def test_a_word_that_pulls_toward_the_passage_may_stand_in(
    db: Database, settings: Settings, owner: str
) -> None:
    oid, emb = _load(db, settings, owner)
    # "velkoslavnost" meets no key of the record, but shares most of its letters with "slavnost"
    params = replace(OPEN, paraphrase_min_pull=0.0)
    result = Engine(db, settings, emb, params=params).search(
        oid, "Kdy se koná firemní velkoslavnost?"
    )
    hit = _party(result)
    assert hit.judgement.answer is not None
    assert missing_focus(hit.judgement.answer) == ("velkoslavnost",)
    assert hit.judgement.pull is not None and hit.judgement.pull > 0
    assert hit.judgement.passed and "paraphrase" in hit.judgement.rule


def test_calibration_sees_the_pull(db: Database, settings: Settings, owner: str) -> None:
    oid, emb = _load(db, settings, owner)
    r = Engine(db, settings, emb, params=OPEN).search(oid, "Kdy se koná maškarní firemní slavnost?")
    retrieval = r.retrieval
    j = next(i for i, c in enumerate(retrieval.candidates) if c.source_id == "party.txt")
    k = len(retrieval.candidates)
    _, _, answers, paraphrase = coverage_and_support([retrieval], k, OPEN)
    assert not answers[0, j] and paraphrase[0, j]
    _, _, _, guarded = coverage_and_support([retrieval], k, replace(OPEN, paraphrase_min_pull=0.0))
    assert not guarded[0, j]
    # with the check off nothing is embedded for it
    assert OPEN.paraphrase_min_pull == PULL_OFF


MASQUERADE = "Kdy se koná maškarní firemní slavnost?"


def _masquerade(
    db: Database, settings: Settings, owner: str
) -> tuple[int, FakeEmbedder, object, int]:
    """The owner, its embedder, the masquerade search with every rule open, the party chunk."""
    oid, emb = _load(db, settings, owner)
    result = Engine(db, settings, emb, params=OPEN).search(oid, MASQUERADE)
    return oid, emb, result, _party(result).candidate.chunk_id  # type: ignore[attr-defined]


def test_a_pull_that_cannot_be_computed_does_not_veto(
    db: Database, settings: Settings, owner: str
) -> None:
    oid, emb, result, chunk = _masquerade(db, settings, owner)

    class Broken(FakeEmbedder):
        def embed(self, texts, *, kind):  # type: ignore[no-untyped-def]
            raise RuntimeError("engine gone")

    probe = PullProbe(db, Broken(settings), oid, MASQUERADE, emb.embed(["x"], kind="query")[0])
    assert probe([chunk], ["maškarní"]) == {chunk: None}
    assert probe.errors == ["engine gone"]
    broken = replace(result.retrieval, pull=probe)  # type: ignore[attr-defined]
    j = next(
        j
        for j, c in zip(
            judge(broken, replace(OPEN, paraphrase_min_pull=0.0)), broken.candidates, strict=True
        )
        if c.chunk_id == chunk
    )
    assert j.passed and j.pull is None


def test_the_pull_is_asked_of_missing_nouns_not_of_verbs() -> None:
    answer = Answerability(
        (0, 10),
        False,
        True,
        "focus",
        None,
        None,
        focus=[
            {"word": "Stillstand", "df": 0, "matched_by": None, "verb": False},
            {"word": "brachte", "df": 0, "matched_by": None, "verb": True},
            {"word": "Börse", "df": 3, "matched_by": "lemma", "verb": False},
        ],
    )
    assert missing_focus(answer) == ("Stillstand",)


def test_the_pull_embeds_within_the_search_timeout(
    db: Database, settings: Settings, owner: str
) -> None:
    oid, emb, _, chunk = _masquerade(db, settings, owner)

    class Slow(FakeEmbedder):
        def embed(self, texts, *, kind):  # type: ignore[no-untyped-def]
            time.sleep(0.6)
            return super().embed(texts, kind=kind)

    slow = Slow(settings)
    timed = lambda text: embed_question(slow, text, 0.1)  # noqa: E731
    probe = PullProbe(db, slow, oid, MASQUERADE, emb.embed(["x"], kind="query")[0], timed)
    started = time.monotonic()
    assert probe([chunk], ["maškarní"]) == {chunk: None}
    assert time.monotonic() - started < 0.5
    assert probe.errors == ["embedder took longer than 0.1 s"]


def test_one_lookup_serves_every_candidate(
    db: Database, settings: Settings, owner: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, result, chunk = _masquerade(db, settings, owner)
    probe = result.retrieval.pull  # type: ignore[attr-defined]
    assert isinstance(probe, PullProbe)
    probe.forget()
    calls: list[list[int]] = []
    real = probe._distances

    def counted(ids: list[int], vec: object) -> dict[int, float]:
        calls.append(ids)
        return real(ids, vec)  # type: ignore[arg-type]

    monkeypatch.setattr(probe, "_distances", counted)
    others = [c.chunk_id for c in result.retrieval.candidates if c.chunk_id != chunk]  # type: ignore[attr-defined]
    assert others
    first = probe([chunk], ["maškarní"])[chunk]
    then = probe(others, ["maškarní"])
    assert len(calls) == 1 and set(calls[0]) >= {chunk, *others}
    assert first is not None and all(v is not None for v in then.values())
