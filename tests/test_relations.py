"""Questions in another language than the documents: the relation that picks a threshold set, the
profile that holds the sets, distances judged relative to the neighbourhood, parallel-corpus
pairing and splits, and the commands that fit and report them, on a real database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.answer.engine import Engine, relative
from rag.cli.main import cli
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import ConfigError, InputError
from rag.eval.gate import OTHER_MIN_RECALL
from rag.eval.metrics import score
from rag.eval.relation_fit import Group, fit
from rag.eval.sets import (
    WITHHELD_TAG,
    Case,
    check_gold,
    external_set,
    load_corpus,
    map_gold,
    split_of,
    split_set,
    withheld,
    withhold_set,
)
from rag.eval.sweep import Grid
from rag.ingest.loaders import LoadedDocument
from rag.ingest.writer import Ingestor
from rag.language.question_keys import QueryKeys
from rag.search.profiles import thresholds, write_profile
from rag.search.relations import is_relation_key, pair, relation
from rag.search.relevance import FilterParams
from rag.search.retrieve import Candidate, Retrieval
from rag.search.thresholds import Thresholds
from rag.settings import Settings

SAME_SET = FilterParams(0.1, 0.01, 0.02, 3, 0.5)
OTHER_SET = FilterParams(0.2, 0.01, 0.02, 3, 0.5)
PAIR_SET = FilterParams(0.3, 0.01, 0.02, 3, 0.5)


@pytest.mark.parametrize(
    ("lang", "owner_langs", "expected"),
    [
        ("cs", [("cs", 10)], "same"),
        ("en", [("cs", 10)], "other"),
        ("sk", [("cs", 10)], "other"),
        ("en", [("cs", 6), ("en", 4)], "same"),  # 40 % of the documents are English
        ("en", [("cs", 8), ("en", 2)], "other"),  # 20 %: below a third
        ("de", [], "same"),  # no documents: nothing to differ from
    ],
)
def test_relation_of_a_question_to_the_owners_language_mix(
    lang: str, owner_langs: list[tuple[str, int]], expected: str
) -> None:
    assert relation(lang, owner_langs) == expected


def test_a_pair_names_the_question_and_the_corpus_main_language() -> None:
    assert pair("de", [("ru", 240), ("en", 3)]) == "de>ru"
    assert [is_relation_key(k) for k in ("same", "other", "de>ru", "de>de", "x>ru", "de-ru")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_a_pair_set_wins_over_other_and_other_over_the_default() -> None:
    t = Thresholds(SAME_SET, {"other": OTHER_SET, "de>ru": PAIR_SET})
    ru = [("ru", 240)]
    assert t.choose("ru", ru) == ("same", "same", SAME_SET)
    assert t.choose("de", ru) == ("other", "de>ru", PAIR_SET)
    assert t.choose("en", ru) == ("other", "other", OTHER_SET)
    # a single-set profile judges every question with its one set, as before
    assert Thresholds(SAME_SET).choose("en", [("cs", 5)]) == ("other", "same", SAME_SET)


def _profile(path: Path, relations: object) -> Path:
    write_profile(path, "fake/64", SAME_SET, {"relations": relations})
    return path


def test_profiles_load_their_relation_sets_and_old_profiles_still_load(
    settings: Settings, tmp_path: Path
) -> None:
    old = tmp_path / "old.json"
    write_profile(old, "fake/64", SAME_SET, {})
    found, path = thresholds(settings.replace(profile=str(old)), "fake/64")
    assert path == old and found.default == SAME_SET and dict(found.sets) == {}
    new = _profile(
        tmp_path / "new.json",
        {"other": {"params": {"vector_max_distance": 0.2}, "contrast": 2.0}},
    )
    found, _ = thresholds(settings.replace(profile=str(new)), "fake/64")
    # a set's missing knobs come from the default set
    assert found.get("other") == OTHER_SET and found.contrast_of("other") == 2.0
    assert found.contrast_of("same") == 0.0


@pytest.mark.parametrize(
    ("relations", "message"),
    [
        ({"german": {"params": {}}}, "relation 'german' is not same, other or a language pair"),
        ({"other": {"contrast": 1}}, "relation 'other' has no params"),
        ({"other": {"params": {}, "contrast": -1}}, "contrast must be a number from 0 to 10"),
        ({"other": {"params": {}, "contrast": "2"}}, "contrast must be a number from 0 to 10"),
        ([1, 2], "relations must be an object"),
    ],
)
def test_a_malformed_relation_section_is_a_clear_error(
    settings: Settings, tmp_path: Path, relations: object, message: str
) -> None:
    path = _profile(tmp_path / "bad.json", relations)
    with pytest.raises(ConfigError, match=message):
        thresholds(settings.replace(profile=str(path)), "fake/64")


def _cand(cid: int, vec: int | None, dist: float | None) -> Candidate:
    return Candidate(cid, cid, f"d{cid}", None, "text", "ru", None, None, vec, dist, 0.0, [])


def test_relative_distances_shift_every_candidate_by_the_same_reference() -> None:
    r = Retrieval(
        "frage",
        QueryKeys("de", (), ()),
        # two vector candidates (mean 0.2) and one full-text candidate with a late distance
        [_cand(1, 1, 0.1), _cand(2, 2, 0.3), _cand(3, None, 0.5), _cand(4, None, None)],
        {},
        4,
        {},
    )
    moved = relative(r, 2.0)
    # + 2 * (2 - 0.2): ordered as distance - 2 * reference, and positive
    assert [c.distance for c in moved.candidates] == pytest.approx([3.7, 3.9, 4.1, None])
    assert relative(r, 0.0) is r and [c.distance for c in r.candidates][0] == 0.1


def _question(cid: str, gold: float, rest: float, answerable: bool) -> tuple[Case, Retrieval]:
    """A question whose first candidate is at ``gold`` and its 9 others at ``rest``."""
    cands = [_cand(1, 1, gold), *(_cand(n, n, rest) for n in range(2, 11))]
    r = Retrieval("frage", QueryKeys("de", (), ()), cands, {}, 100, {}, owner_langs=(("ru", 9),))
    return Case(cid, "frage", ("d1",) if answerable else ()), r


def test_calibration_picks_the_contrast_that_separates_what_raw_distances_cannot() -> None:
    # Answerable: 0.30 from their paragraph, 0.50 from the rest. Off-topic: 0.25 from the
    # nearest, 0.27 from the rest. No raw threshold admits the first without the second; relative
    # to each question's neighbourhood they part.
    pairs = [_question(f"a{i}", 0.30, 0.50, True) for i in range(4)]
    pairs += [_question(f"n{i}", 0.25, 0.27, False) for i in range(4)]
    g = Group("other", [c for c, _ in pairs], [r for _, r in pairs], [])
    engine = Engine(None, Settings(), None, params=SAME_SET)  # type: ignore[arg-type]
    # a small grid keeps the test quick; the contrast loop around the sweep is what is tested
    grid = Grid(
        vector_margin=(1.0,),
        min_coverage=(1.0,),
        rare_df=(0.02,),
        rare_min_chunks=(3,),
        coverage_mode=("count",),
        prefix_credit=(0.0,),
        support_max_distance=(0.0,),
        support_min_coverage=(0.5,),
        topic_max_distance=(0.0,),
        topic_min_known=(0.6,),
    )
    f = fit(engine, "other", g, 0.0, 2, None, contrasts=(0.0, 2.0), grid=grid)
    assert f.contrast == 2.0 and f.swept == (0.0, 2.0)
    assert f.report is not None and f.report.figures.recalled == 4
    assert f.report.figures.false_answers == 0
    # the engine, given the profile's set and contrast, judges the raw retrievals alike
    t = Thresholds(SAME_SET, {"other": f.params}, {"other": 2.0})
    again = score(engine, "x", g.cases, [r for _, r in pairs], t).figures
    assert (again.recalled, again.false_answers) == (4, 0)


# --- pairing parallel corpora and splitting sets ----------------------------------------------------


def test_map_gold_rewrites_the_first_matching_prefix() -> None:
    case = Case("xquad-de-1", "Wer?", ("xquad-de-00-01", "other-7"))
    mapped = map_gold(case, [("xquad-de-", "xquad-ru-"), ("xquad-", "never-")])
    assert mapped.expect == ("xquad-ru-00-01", "other-7") and mapped.id == case.id


def test_split_keeps_a_question_on_the_same_side_in_every_language() -> None:
    ids = [f"q-{n:04d}" for n in range(400)]
    sides = [split_of(i) for i in ids]
    assert 150 < sides.count("dev") < 250  # about half
    assert all(split_of(f"xquad-de-{i}") == split_of(f"xquad-ru-{i}") for i in ids)


def _articles(tmp_path: Path) -> tuple[Path, Path]:
    """Eight articles of five paragraphs, one question per paragraph and one over two."""
    docs, questions = tmp_path / "docs.jsonl", tmp_path / "questions.jsonl"
    ids = [f"w-de-{a:02d}-{p:02d}" for a in range(8) for p in range(5)]
    docs.write_text(
        "".join(
            json.dumps({"id": i, "text": f"Absatz {i} über Thema {i[5:7]}."}) + "\n" for i in ids
        ),
        encoding="utf-8",
    )
    records = [{"id": f"q-{i}", "question": f"Was steht in {i}?", "relevant": [i]} for i in ids]
    records.append({"id": "q-two", "question": "Zwei?", "relevant": ids[:2]})
    questions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return docs, questions


def test_withhold_leaves_documents_out_and_makes_their_questions_probes(tmp_path: Path) -> None:
    docs, questions = _articles(tmp_path)
    evalset = withhold_set(external_set(docs, [questions]), 4)
    left_out = {c.id[2:] for c in evalset.cases if WITHHELD_TAG in c.tags}
    assert 4 <= len(left_out) <= 18  # about a quarter of 40
    assert all(withheld(d, 4) for d in left_out)
    kept = {d.source_id for d in load_corpus(evalset, 1 << 20)}
    assert len(kept) == 40 - len(left_out) and not kept & left_out
    for c in evalset.cases:
        assert (WITHHELD_TAG in c.tags) == (not c.answerable)
        assert set(c.expect) <= kept
    two = next(c for c in evalset.cases if c.id == "q-two")
    original = ("w-de-00-00", "w-de-00-01")
    assert two.expect == tuple(d for d in original if d not in left_out) or not two.answerable
    # the parallel corpora leave out the same paragraphs
    paragraphs = [d.split("-", 2)[2] for d in left_out]  # "00-03"
    assert all(withheld(f"xquad-ru-{p}", 4) for p in paragraphs)
    with pytest.raises(InputError, match="at least 2"):
        withhold_set(external_set(docs, [questions]), 1)


def _parallel(tmp_path: Path) -> tuple[Path, Path, Path]:
    docs = tmp_path / "docs_ru.jsonl"
    docs.write_text(
        json.dumps({"id": "x-ru-1", "text": "Варшава — столица Польши.", "lang": "ru"}) + "\n",
        encoding="utf-8",
    )
    questions = tmp_path / "questions_de.jsonl"
    questions.write_text(
        json.dumps({"id": "x-de-q1", "question": "Was ist Warschau?", "relevant": ["x-de-1"]})
        + "\n",
        encoding="utf-8",
    )
    probes = tmp_path / "probes.jsonl"
    probes.write_text(
        json.dumps({"id": "p-1", "question": "Jak se peče chleba?", "relevant": ["c-1"]}) + "\n",
        encoding="utf-8",
    )
    return docs, questions, probes


def test_gold_the_corpus_lacks_is_an_error_that_names_the_pairing(tmp_path: Path) -> None:
    docs, questions, probes = _parallel(tmp_path)
    evalset = external_set(docs, [questions], [probes])
    doc = [LoadedDocument("x-ru-1", None, "Варшава", "ru", {}, "test")]
    with pytest.raises(InputError, match=r"1 answerable case.*x-de-q1.*--map-gold"):
        check_gold(evalset, doc)
    paired = external_set(docs, [questions], [probes], gold_map=[("x-de-", "x-ru-")])
    check_gold(paired, doc)
    assert [c.expect for c in paired.cases] == [("x-ru-1",), ()]
    halves = [split_set(paired, s) for s in ("dev", "test")]
    assert sorted(c.id for h in halves for c in h.cases) == ["p-1", "x-de-q1"]
    assert {h.name for h in halves} == {paired.name} and halves[0].label.endswith("(dev)")


def run(settings: Settings, *args: str) -> tuple[int, str, str]:
    env = {
        "DATABASE_URL": settings.database_url or "",
        "RAG_DATA_DIR": str(settings.data_dir),
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
        "RAG_PROFILE": "",
    }
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_eval_withholds_documents_from_the_command_line(settings: Settings, tmp_path: Path) -> None:
    docs, questions = _articles(tmp_path)
    common = ["eval", "--corpus", str(docs), "--questions", str(questions), "--json"]
    code, _, err = run(settings, *common, "--withhold", "1")
    assert code == 2 and "--withhold" in err
    code, out, err = run(settings, *common, "--withhold", "4")
    assert code == 0, err
    data = json.loads(out)
    probes = withhold_set(external_set(docs, [questions]), 4)
    n = sum(not c.answerable for c in probes.cases)
    assert data["tags"][WITHHELD_TAG]["no_answer"] == n == data["pipeline"]["no_answer"]
    assert data["pipeline"]["answerable"] == 41 - n


def test_eval_pairs_a_parallel_corpus_from_the_command_line(
    settings: Settings, tmp_path: Path
) -> None:
    docs, questions, probes = _parallel(tmp_path)
    common = ["eval", "--corpus", str(docs), "--questions", str(questions)]
    code, _, err = run(settings, *common, "--noanswer", str(probes))
    assert code == 1 and "--map-gold" in err and err.count("\n") == 1
    code, _, err = run(settings, *common, "--map-gold", "x-de-")
    assert code == 2 and "is not OLD=NEW" in err
    code, out, err = run(
        settings, *common, "--noanswer", str(probes), "--map-gold", "x-de-=x-ru-", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["pipeline"]["answerable"] == 1 and data["pipeline"]["no_answer"] == 1
    # German and Czech questions over Russian paragraphs: both in the other-language relation
    assert {r["relation"] for r in data["failures"]} <= {"other"}
    assert set(data["langs"]) == {"de", "cs"}
    # figures per value of a field of the question records (none here: no record has one)
    code, out, err = run(
        settings,
        *common,
        "--noanswer",
        str(probes),
        "--map-gold",
        "x-de-=x-ru-",
        "--tag-by",
        "answer",
        "--json",
    )
    assert code == 0, err
    tags = json.loads(out)["tags"]
    assert (tags["answer=none"]["cases"], tags["no-answer"]["cases"]) == (2, 1)
    code, _, err = run(settings, "eval", "--tag-by", "answer")
    assert code == 2 and "--tag-by reads a field of --questions' records" in err


# --- the engine and calibration on a real database --------------------------------------------------

DOCS = {
    "d-kolo": "Služební kola se půjčují na vrátnici. Každé kolo má zámek a přilbu v brašně.",
    "d-sauna": "Firemní sauna v suterénu je otevřená v úterý a ve čtvrtek od šestnácti hodin.",
    "d-tiskarna": "Barevná tiskárna ve třetím patře tiskne jen po přihlášení kartou zaměstnance.",
    "d-kava": "Kávovar v kuchyňce se odvápňuje každý pátek. Zrnkovou kávu objednává asistentka.",
}
CASES = [
    ("c1", "Kde si půjčím služební kolo?", ["d-kolo"]),
    ("c2", "Kdy je otevřená firemní sauna?", ["d-sauna"]),
    ("c3", "Kdy se odvápňuje kávovar?", ["d-kava"]),
    ("c4", "Jaký je recept na bramborový guláš?", "not_found"),
    ("c5", "Jak vysoká je hora Sněžka?", "not_found"),
    ("e1", "Where can I borrow a company bike?", ["d-kolo"]),
    ("e2", "When is the company sauna open?", ["d-sauna"]),
    ("e3", "Who won the Berlin marathon last year?", "not_found"),
    ("e4", "How many moons does Jupiter have?", "not_found"),
]


def test_the_engine_judges_each_question_with_its_relations_set(
    settings: Settings, db: Database
) -> None:
    embedder = make_embedder(settings)
    ingestor = Ingestor(db, settings, embedder, "relations-engine", embed_now=True)
    ingestor.add_all([LoadedDocument(k, None, v, "cs", {}, "test") for k, v in DOCS.items()])
    # the other-language set admits every near candidate, the same-language set none
    admit_all = FilterParams(2.0, 2.0, 0.5, 3, 1.0, "count")
    admit_none = FilterParams(-1.0, 0.0, 0.5, 3, 1.0, "count")
    engine = Engine(db, settings, embedder, params=Thresholds(admit_none, {"other": admit_all}))
    czech = engine.search(ingestor.owner_id, "Kde si půjčím kolo?")
    english = engine.search(ingestor.owner_id, "Where can I borrow a bike?")
    assert (czech.relation, czech.thresholds) == ("same", "same")
    assert (english.lang, english.relation, english.thresholds) == ("en", "other", "other")
    assert not any(h.judgement.passed for h in czech.hits)
    assert english.hits and all(h.judgement.passed for h in english.hits)
    assert {h.as_dict()["evidence"]["thresholds"] for h in english.hits} == {"other"}
    answer = engine.answer_from(english, history=[], use_llm=False)
    assert answer.status == "answered" and answer.lang == "en"
    assert {s.evidence["thresholds"] for s in answer.sources} == {"other"}
    # evaluation judges through the same choice
    r = english.retrieval
    report = score(engine, "x", [Case("e", "q", ("d-kolo",))], [r], engine.thresholds)
    assert report.results[0].thresholds == "other" and report.results[0].lang == "en"


@pytest.fixture
def mixed_set(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "kancelar.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": k, "text": v, "lang": "cs"}, ensure_ascii=False) + "\n"
            for k, v in DOCS.items()
        ),
        encoding="utf-8",
    )
    cases = tmp_path / "mixed.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": i, "question": q, "expect": e, "tags": []}, ensure_ascii=False) + "\n"
            for i, q, e in CASES
        ),
        encoding="utf-8",
    )
    return cases, corpus


# The command's full default grid sweeps tens of millions of settings per relation; what this
# test checks (which sets are fitted and kept) does not depend on the grid's size.
SMALL_GRID = Grid(
    vector_margin=(0.0, 1.0),
    min_coverage=(0.5, 1.0),
    rare_df=(0.02,),
    rare_min_chunks=(3,),
    coverage_mode=("count",),
    prefix_credit=(0.5,),
    support_min_coverage=(0.5,),
    topic_min_known=(0.6,),
    focus_words=(2,),
)


def test_calibrate_fits_each_relation_and_keeps_the_sets_it_cannot_fit(
    settings: Settings,
    mixed_set: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("rag.eval.calibrate.Grid", lambda: SMALL_GRID)
    monkeypatch.setattr("rag.eval.relation_fit.OTHER_GRID", SMALL_GRID)
    cases, corpus = mixed_set
    out = tmp_path / "p.json"
    common = ["calibrate", "--set", str(cases), "--corpus", str(corpus), "--folds", "2"]
    code, text, err = run(settings, *common, "--output", str(out), "--contrast", "0")
    assert code == 0, err
    assert "thresholds same: 5 cases" in text and "thresholds other: 4 cases" in text
    profile = json.loads(out.read_text(encoding="utf-8"))
    other = profile["relations"]["other"]
    assert other["cases"] == 4 and other["figures"]["answerable"] == 2
    assert other["contrast"] == 0.0 and other["contrasts_swept"] == [0.0]
    assert profile["figures"]["answerable"] == 3  # the top-level set is the Czech questions'
    found, _ = thresholds(settings.replace(profile=str(out)), "fake/64")
    assert found.get("other").as_dict() == other["params"]
    # a set with only English questions refits "other" and keeps the Czech set as it was
    english = tmp_path / "english.jsonl"
    english.write_text(
        "".join(
            line for line in cases.read_text(encoding="utf-8").splitlines(True) if '"e' in line
        ),
        encoding="utf-8",
    )
    again = tmp_path / "again.json"
    code, text, err = run(
        settings,
        "calibrate",
        "--set",
        str(english),
        "--corpus",
        str(corpus),
        "--folds",
        "2",
        "--profile",
        str(out),
        "--output",
        str(again),
        "--other-as",
        "en>cs",
        "--contrast",
        "0",
    )
    assert code == 0, err
    kept = json.loads(again.read_text(encoding="utf-8"))
    assert kept["params"] == profile["params"] and kept["figures"] == profile["figures"]
    assert set(kept["relations"]) == {"other", "en>cs"}
    code, _, err = run(settings, *common, "--other-as", "english")
    assert code == 2 and "neither other nor a language pair" in err


def test_check_holds_the_floors_for_each_relation(
    settings: Settings, mixed_set: tuple[Path, Path], tmp_path: Path
) -> None:
    cases, corpus = mixed_set
    # admits nothing: each relation's figures and floor are reported apart
    words = FilterParams(-1.0, 0.0, 0.5, 3, 1.0, "count")
    path = tmp_path / "p.json"
    write_profile(path, "fake/64", words, {})
    common = ["calibrate", "--check", "--set", str(cases), "--corpus", str(corpus)]
    code, out, _ = run(settings, *common, "--profile", str(path))
    assert code == 1
    assert f"other questions: answer recall 0.000 (0/2) (floor {OTHER_MIN_RECALL})" in out
    assert f"other questions: answer recall 0.000 < {OTHER_MIN_RECALL}" in out
