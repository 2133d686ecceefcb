"""RRF fusion: Python's re-fusion orders as the SQL does, and a profile's fusion section applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.answer.engine import Engine
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import ConfigError
from rag.search.fusion import Fusion, SetScores, choose, fuse
from rag.search.retrieve import retrieve
from rag.settings import Settings
from tests.test_hybrid import LONG_DOCS, RECORD, load

QUESTIONS = [
    "Komu předal ředitel cenu za inovaci?",
    "Kdy je otevřen sklad hotových výrobků?",
    "Jak se rezervují služební vozy?",
    "Kdo vybírá nejlepší projekty?",
    "inventura skladu a objednávky",
]


@pytest.mark.parametrize(
    "f", [Fusion(10, 1.0, 0.5, 50), Fusion(2, 1.0, 1.25, 3), Fusion(60, 0.7, 1.0, 5)]
)
def test_python_fusion_orders_as_the_sql_does(
    db: Database, settings: Settings, owner: str, f: Fusion
) -> None:
    fake = make_embedder(settings)
    oid = load(db, settings, owner, fake, {**LONG_DOCS, "zaznam.md": RECORD})
    tuned = settings.replace(**f.as_dict())
    for q in QUESTIONS:
        deep = retrieve(db, settings, fake, oid, q)
        sql = retrieve(db, tuned, fake, oid, q)
        assert [c.chunk_id for c in fuse(deep.candidates, f)] == [
            c.chunk_id for c in sql.candidates
        ], q


def test_choose_prefers_a_fusion_no_worse_than_either_list(
    db: Database, settings: Settings, owner: str
) -> None:
    fake = make_embedder(settings)
    oid = load(db, settings, owner, fake, {**LONG_DOCS, "zaznam.md": RECORD})
    retrievals = [retrieve(db, settings, fake, oid, q) for q in QUESTIONS]
    gold = [{"zaznam.md"}, {"sklad.md"}, {"auto.md"}, {"oceneni.md"}, {"sklad.md"}]
    scores = SetScores("t", retrievals, gold)
    settings_grid = [Fusion(k, 1.0, w, 50) for k in (2, 60) for w in (0.3, 1.0)]
    chosen, mean = choose([scores], settings_grid)
    best = scores.best_single(50)
    fine = [
        f
        for f in settings_grid
        if scores.hybrid(f)["hit@1"] >= best["hit@1"]
        and scores.hybrid(f)["mrr@10"] >= best["mrr@10"]
    ]
    assert mean == pytest.approx(scores.hybrid(chosen)["mrr@10"])
    if fine:
        assert chosen in fine
        assert mean == pytest.approx(max(scores.hybrid(f)["mrr@10"] for f in fine))


def test_profile_fusion_section_sets_the_engine_knobs(
    db: Database, settings: Settings, tmp_path: Path
) -> None:
    fake = make_embedder(settings)
    path = tmp_path / "p.json"
    section = {"rrf_k": 7, "rrf_weight_fts": 1.0, "rrf_weight_vector": 0.6, "candidates": 30}
    path.write_text(json.dumps({"model_id": fake.model_id, "params": {}, "fusion": section}))
    engine = Engine(db, settings.replace(profile=str(path)), fake)
    assert (engine.settings.rrf_k, engine.settings.rrf_weight_vector) == (7, 0.6)
    assert engine.settings.candidates == 30
    path.write_text(json.dumps({"model_id": fake.model_id, "params": {}}))
    assert Engine(db, settings.replace(profile=str(path)), fake).settings.rrf_k == settings.rrf_k
    path.write_text(json.dumps({"model_id": fake.model_id, "params": {}, "fusion": {"rrf_k": "x"}}))
    with pytest.raises(ConfigError, match="bad fusion section"):
        Engine(db, settings.replace(profile=str(path)), fake)


def test_a_relations_own_fusion_orders_other_language_questions(
    db: Database, settings: Settings, owner: str, tmp_path: Path
) -> None:
    fake = make_embedder(settings)
    oid = load(db, settings, owner, fake, {**LONG_DOCS, "zaznam.md": RECORD})
    own = Fusion(3, 1.0, 5.0, 5)
    path = tmp_path / "p.json"
    relations = {"other": {"params": {}, "fusion": own.as_dict()}}
    path.write_text(json.dumps({"model_id": fake.model_id, "params": {}, "relations": relations}))
    engine = Engine(db, settings.replace(profile=str(path)), fake)
    english = engine.search(oid, "Who chooses the best projects for the innovation award?")
    r = english.retrieval
    assert (r.query.lang, english.relation, r.fusion_set) == ("en", "other", "other")
    deep = retrieve(db, settings, fake, oid, r.question)
    assert [c.chunk_id for c in r.candidates] == [c.chunk_id for c in fuse(deep.candidates, own)]
    assert len(r.candidates) < len(deep.candidates)  # its depth, not the settings' 50
    czech = engine.search(oid, QUESTIONS[3]).retrieval
    assert czech.fusion_set is None
    same = retrieve(db, settings, fake, oid, QUESTIONS[3])
    assert [c.chunk_id for c in czech.candidates] == [c.chunk_id for c in same.candidates]
    relations["other"]["fusion"] = {"candidates": 0}
    path.write_text(json.dumps({"model_id": fake.model_id, "params": {}, "relations": relations}))
    with pytest.raises(ConfigError, match="candidates >= 1"):
        Engine(db, settings.replace(profile=str(path)), fake)
