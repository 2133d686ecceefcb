"""Evaluation and calibration: metric arithmetic, the sweep against the engine, selection, held-out
figures, profiles, the plot, and the ``rag eval`` / ``rag calibrate`` commands on a real database.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from rag.answer.engine import Engine
from rag.cli.evaluation import print_report
from rag.cli.main import cli
from rag.db import Database
from rag.embedders import make_embedder
from rag.errors import ConfigError, CorruptInput
from rag.eval import sets as evaluate
from rag.eval.calibrate import frontier, held_out, plot, select, sweep
from rag.eval.metrics import CaseResult, Figures, ranking, retrieval_metrics, score
from rag.eval.sets import Case, load_cases, load_questions
from rag.eval.sweep import KNOBS, MODES, Grid, Sweep, distance_axis, fold_of
from rag.language.keys import chunk_keys
from rag.language.question_keys import QueryKeys, QueryWord, query_keys
from rag.search.profiles import filter_params, write_profile
from rag.search.relevance import FilterParams
from rag.search.retrieve import Candidate, Retrieval
from rag.settings import Settings

VECTOR_ONLY = FilterParams(
    vector_max_distance=0.2,
    vector_margin=1.0,
    rare_df=0.02,
    rare_min_chunks=3,
    min_coverage=1.0,
    coverage_mode="count",
)


def cand(
    cid: int,
    source: str,
    fts: int | None = None,
    vec: int | None = None,
    dist: float | None = None,
    matched: tuple[str, ...] = (),
) -> Candidate:
    return Candidate(
        cid,
        cid,
        source,
        None,
        f"Krátký text zdroje {source}.",
        "cs",
        fts,
        None if fts is None else 1.0,
        vec,
        dist,
        0.0,
        list(matched),
    )


def retrieval(
    cands: list[Candidate], words: dict[str, int] | None = None, n: int = 100
) -> Retrieval:
    words = words or {"alfa": 50}
    qwords = tuple(QueryWord(w, w, (f"l:{w}", f"p:{w[:4]}"), False) for w in words)
    return Retrieval(
        "otázka",
        QueryKeys("cs", qwords, qwords),
        cands,
        {f"l:{w}": df for w, df in words.items()},
        n,
        {},
    )


@pytest.fixture
def engine() -> Engine:
    # answer_from never touches the database; params are given, so no profile is read.
    return Engine(None, Settings(), None, params=VECTOR_ONLY)  # type: ignore[arg-type]


@pytest.fixture
def filter_engine() -> Engine:
    """The engine as calibration counts it: a case no candidate passed is refused. The sweep
    models the filter's verdicts; the related answer (rag.answer.related) is a way of showing
    some of those refusals, not a verdict calibration chooses thresholds for."""
    settings = Settings(related_answers=False)
    return Engine(None, settings, None, params=VECTOR_ONLY)  # type: ignore[arg-type]


# --- loading sets ---------------------------------------------------------------------------------


def test_load_cases_reads_expectations_and_names_bad_lines(tmp_path: Path) -> None:
    good = tmp_path / "set.jsonl"
    good.write_text(
        '{"id": "a", "question": "Kdo?", "expect": ["x.md", "y"], "tags": ["t"]}\n\n'
        '{"id": "b", "question": "Co?", "expect": "not_found"}\n',
        encoding="utf-8",
    )
    assert load_cases(good) == [Case("a", "Kdo?", ("x.md", "y"), ("t",)), Case("b", "Co?", (), ())]
    for line, message in [
        ('{"id": "a", "question": "Kdo?", "expect": []}', 'write "not_found"'),
        ('{"id": "a", "question": "", "expect": "not_found"}', '"question" must be'),
        ('{"id": "a", "question": "Kdo?", "expect": "x.md"}', '"expect" must be a list'),
        ("[1]", "expected a JSON object"),
        ("{nope", "invalid JSON"),
    ]:
        bad = tmp_path / "bad.jsonl"
        bad.write_text(
            '{"id": "ok", "question": "Q?", "expect": "not_found"}\n' + line + "\n",
            encoding="utf-8",
        )
        with pytest.raises(CorruptInput, match=message) as e:
            load_cases(bad)
        assert f"{bad}:2" in str(e.value)
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "a", "question": "Q?", "expect": "not_found"}\n' * 2, encoding="utf-8")
    with pytest.raises(CorruptInput, match="occurs twice"):
        load_cases(dup)


def test_noanswer_questions_expect_nothing_whatever_relevant_says(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        '{"id": "1", "question": "Wer?", "relevant": ["d1"]}\n'
        '{"id": "2", "question": "Was?", "relevant": []}\n',
        encoding="utf-8",
    )
    assert [c.expect for c in load_questions(q)] == [("d1",), ()]
    assert [c.expect for c in load_questions(q, noanswer=True)] == [(), ()]


def test_questions_are_tagged_by_a_field_of_their_records(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        '{"id": "1", "question": "Praha leží na Vltavě.", "relevant": ["d1"], "answer": "SUPPORTS"}\n'
        '{"id": "2", "question": "Brno leží na Vltavě.", "relevant": ["d1"], "answer": "REFUTES"}\n'
        '{"id": "3", "question": "Plzeň leží na Berounce.", "relevant": []}\n',
        encoding="utf-8",
    )
    assert [c.tags for c in load_questions(q, tag_by="answer")] == [
        ("answer=SUPPORTS",),
        ("answer=REFUTES",),
        ("answer=none",),
    ]
    assert [c.tags for c in load_questions(q, noanswer=True, tag_by="answer")][0] == (
        "no-answer",
        "answer=SUPPORTS",
    )
    assert all(c.tags == () for c in load_questions(q))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "question": "Kde?", "relevant": [], "answer": 3}\n', "utf-8")
    with pytest.raises(CorruptInput, match=r'bad.jsonl:1: "answer" must be a non-empty string'):
        load_questions(bad, tag_by="answer")


# --- metrics ---------------------------------------------------------------------------------------


def test_ranking_counts_each_source_once_and_follows_each_retriever() -> None:
    r = retrieval(
        [cand(1, "z", vec=3), cand(2, "z", fts=2), cand(3, "y", fts=1, vec=1), cand(4, "d", vec=2)]
    )
    assert ranking(r, "hybrid") == ["z", "y", "d"]
    assert ranking(r, "fts") == ["y", "z"]
    assert ranking(r, "vector") == ["y", "d", "z"]


def hand_made() -> tuple[list[Case], list[Retrieval]]:
    """Five answerable and three not_found cases whose metrics are worked out in the test."""
    cases = [
        Case("A", "a?", ("a",), ("x",)),
        Case("B", "b?", ("b",), ("x",)),
        Case("C", "c?", ("c",)),
        Case("D", "d?", ("d1", "d2")),
        Case("E", "e?", ("e",)),
        Case("F", "f?", (), ("x",)),
        Case("G", "g?", ()),
        Case("H", "h?", ()),
    ]
    six = [cand(10 + i, s, vec=i + 1, dist=0.05 + 0.01 * i) for i, s in enumerate("pqrst")]
    rs = [
        retrieval([cand(1, "a", fts=1, vec=2, dist=0.10), cand(2, "x", fts=2, vec=1, dist=0.05)]),
        retrieval(
            [
                cand(1, "x", fts=1, dist=0.5),
                cand(2, "y", fts=2, vec=1, dist=0.15),
                cand(3, "b", fts=3, vec=2, dist=0.3),
            ]
        ),
        retrieval([cand(1, "c", vec=1, dist=0.4)]),
        retrieval([cand(1, "z"), cand(2, "z"), cand(3, "y"), cand(4, "d2", fts=1)]),
        retrieval([*six, cand(20, "e", fts=1, vec=6, dist=0.11)]),  # e is the sixth to pass
        retrieval([cand(1, "x", vec=1, dist=0.1)]),
        retrieval([cand(1, "x", vec=1, dist=0.3)]),
        retrieval([]),
    ]
    return cases, rs


def test_metrics_arithmetic_on_hand_made_cases(engine: Engine) -> None:
    cases, rs = hand_made()
    report = score(engine, "hand", cases, rs, VECTOR_ONLY)
    outcomes = {r.case.id: r.outcome for r in report.results}
    assert outcomes == {
        "A": "recalled",
        "B": "wrong_sources",
        "C": "refused",
        "D": "refused",
        "E": "wrong_sources",
        "F": "false_answer",
        "G": "refused_correctly",
        "H": "refused_correctly",
    }
    assert report.results[4].sources == ["p", "q", "r", "s", "t"]  # at most five sources
    m = retrieval_metrics(report.results)
    # hybrid ranks A1 B3 C1 D3 E6; fts A1 B3 C- D1 E1; vector A2 B2 C1 D- E6
    assert m["hybrid"] == pytest.approx(
        {"hit@1": 2 / 5, "hit@5": 4 / 5, "mrr@10": (1 + 1 / 3 + 1 + 1 / 3 + 1 / 6) / 5}
    )
    assert m["fts"] == pytest.approx(
        {"hit@1": 3 / 5, "hit@5": 4 / 5, "mrr@10": (1 + 1 / 3 + 1 + 1) / 5}
    )
    assert m["vector"] == pytest.approx(
        {"hit@1": 1 / 5, "hit@5": 3 / 5, "mrr@10": (1 / 2 + 1 / 2 + 1 + 1 / 6) / 5}
    )
    f = report.figures
    assert (f.answerable, f.no_answer, f.recalled, f.refused, f.false_answers) == (5, 3, 1, 2, 1)
    assert (f.answer_recall, f.false_answer_rate, f.false_refusal_rate) == (1 / 5, 1 / 3, 2 / 5)
    tag = report.by_tag()["x"]
    assert (tag["cases"], tag["answer_recall"], tag["false_answer_rate"]) == (3, 1 / 2, 1.0)
    assert [r.case.id for r in report.failures] == ["B", "C", "D", "E", "F"]
    gold_evidence = report.failures[0].evidence[0]
    assert (gold_evidence["source_id"], gold_evidence["position"], gold_evidence["passed"]) == (
        "b",
        3,
        False,
    )


def test_a_related_answer_is_counted_apart_from_recall_false_answers_and_refusals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    params = replace(VECTOR_ONLY, answer_window=1)

    def near(question: str, text: str) -> Retrieval:
        """``question`` with one candidate of ``text`` that the vector rule admits."""
        query = query_keys(question, "cs")
        keys = [k for w in query.words for k in w.keys]
        found = set(chunk_keys(text, "cs").keys)
        c = replace(cand(1, "a", fts=1, vec=1, dist=0.1), text=text)
        c.matched_keys = [k for k in keys if k in found]
        return Retrieval(question, query, [c], dict.fromkeys(keys, 2), 100, {})

    how_much = "Kolik stojí oprava čtečky?"
    no_sum = "Opravu čtečky objednává správce skladu."  # the vector admits it, the type refuses
    cases = [
        Case("R", how_much, ("a",), ("x",)),
        Case("S", how_much, (), ("x",)),
        Case("T", how_much, ("a",)),
        Case("U", "Kolik stojí oprava čtečky ZX-4411?", ()),  # the code is missing: not related
        Case("V", how_much, ()),
    ]
    rs = [
        near(how_much, no_sum),
        near(how_much, no_sum),
        near(how_much, "Oprava čtečky stojí 500 Kč."),
        near(cases[3].question, no_sum),
        near(how_much, "Oprava čtečky stojí 500 Kč."),
    ]
    on = Engine(None, Settings(), None, params=params)  # type: ignore[arg-type]
    report = score(on, "near", cases, rs, params)
    results = {r.case.id: (r.status, r.outcome) for r in report.results}
    assert results == {
        "R": ("related", "related"),
        "S": ("related", "related"),
        "T": ("answered", "recalled"),
        "U": ("not_found", "refused_correctly"),
        "V": ("answered", "false_answer"),
    }
    f = report.figures
    assert (f.answerable, f.no_answer, f.recalled, f.refused, f.false_answers) == (2, 3, 1, 0, 1)
    assert (f.related, f.related_no_answer, f.related_listed) == (1, 1, 1)
    assert (f.answer_recall, f.false_answer_rate, f.false_refusal_rate) == (1 / 2, 1 / 3, 0.0)
    # an answerable case answered related did not recall it; a not_found one answered nothing
    assert [r.case.id for r in report.failures] == ["R", "V"]
    assert report.failures[0].evidence[0]["refused_by"] == "type"
    data = report.as_dict()
    assert (data["pipeline"]["related"], data["pipeline"]["related_no_answer"]) == (1, 1)
    assert (data["tags"]["x"]["related"], data["tags"]["x"]["related_no_answer"]) == (1, 1)
    assert [(r["id"], r["sources"]) for r in data["related"]] == [("R", ["a"]), ("S", ["a"])]
    print_report(report, "o", None, 5)
    out = capsys.readouterr().out
    assert "related         1/2 answerable (1 listing an expected source), 1/3 not_found" in out
    assert "related" in out.split("per tag")[1].splitlines()[0]
    assert "refused: type" in out
    # the setting off: the same cases are refused, as before there was a related answer
    off = Engine(None, Settings(related_answers=False), None, params=params)  # type: ignore[arg-type]
    f = score(off, "near", cases, rs, params).figures
    assert (f.recalled, f.refused, f.false_answers, f.related, f.related_no_answer) == (
        1,
        1,
        1,
        0,
        0,
    )


def test_a_related_answer_counts_whether_it_lists_an_expected_source() -> None:
    def related(case_id: str, expect: tuple[str, ...], sources: list[str]) -> CaseResult:
        return CaseResult(
            Case(case_id, "Kolik stojí oprava?", expect), {}, "related", sources, "related"
        )

    f = Figures.of(
        [
            related("A", ("a",), ["b", "a"]),  # the expected source second in the list
            related("B", ("a",), ["b"]),  # another source only
            related("C", (), ["a"]),  # a not_found case lists nothing it expects
        ]
    )
    assert (f.related, f.related_listed, f.related_no_answer) == (2, 1, 1)
    assert (f + f).related_listed == 2


def test_the_extractive_answer_is_checked_for_the_answers_text(engine: Engine) -> None:
    text = "Výdejní sklad v Třebíči otevírá v 7 hodin. V pátek zavírá v poledne."
    gold = [replace(cand(1, "a", vec=1, dist=0.1), text=text)]
    cases = [
        Case("A", "a?", ("a",), (), "v 7 HODIN"),  # compared unaccented, in lower case
        Case("B", "b?", ("a",), (), "v 8 hodin"),
        Case("C", "c?", ("a",), (), "v poledne"),  # refused: no source, so no answer
        Case("D", "d?", ("a",)),  # no answer text: not counted
    ]
    rs = [
        retrieval(gold),
        retrieval(gold),
        retrieval([cand(1, "a", vec=1, dist=0.5)]),
        retrieval(gold),
    ]
    report = score(engine, "x", cases, rs, VECTOR_ONLY)
    assert [r.answer_held for r in report.results] == [True, False, False, None]
    assert report.extractive() == {
        "cases": 3,
        "recalled": 2,
        "held": 1,
        "of_answerable": 1 / 3,
        "of_recalled": 1 / 2,
    }
    assert report.as_dict()["extractive"]["held"] == 1
    assert "extractive" not in score(engine, "x", cases[3:], rs[3:], VECTOR_ONLY).as_dict()


def test_answer_text_is_read_from_the_named_field(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        '{"id": "1", "question": "Kdy?", "relevant": ["d1"], "answer": "v 7 hodin"}\n'
        '{"id": "2", "question": "Kde?", "relevant": ["d1"]}\n',
        encoding="utf-8",
    )
    assert [c.answer for c in load_questions(q, answer_field="answer")] == ["v 7 hodin", None]
    assert [c.answer for c in load_questions(q)] == [None, None]
    assert [c.answer for c in load_questions(q, noanswer=True, answer_field="answer")] == [
        None,
        None,
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "1", "question": "Kdy?", "relevant": ["d1"], "answer": ""}\n', "utf-8")
    with pytest.raises(CorruptInput, match=r'bad.jsonl:1: "answer" must be the answer\'s text'):
        load_questions(bad, answer_field="answer")


def random_set(seed: int, texts: bool = False) -> tuple[list[Case], list[Retrieval]]:
    """Cases with random candidates, distances, word matches and gold positions; with ``texts``
    each candidate's text holds its matched words, one or two to a sentence, so that evidence
    windows of one and two sentences differ."""
    rng = random.Random(seed)
    words = {"lipa": 1, "most": 4, "vrata": 12, "kotel": 0}
    cases, rs = [], []
    for i in range(36):
        cands = []
        for j in range(rng.randint(0, 14)):
            matched = tuple(
                f"{k}:{w if k == 'l' else w[:4]}"
                for w in words
                for k in "lp"
                if rng.random() < 0.25
            )
            dist = None if rng.random() < 0.15 else round(rng.uniform(0.05, 0.4), 3)
            c = cand(
                j + 1, f"s{rng.randint(0, 9)}", fts=j + 1, vec=j + 1, dist=dist, matched=matched
            )
            if texts:
                present = [k[2:] for k in matched if k[0] == "l"]
                rng.shuffle(present)
                sentences = [" a ".join(present[i : i + rng.randint(1, 2)]) for i in (0, 2)]
                c.text = " ".join(f"Tady je {x}." for x in sentences if x) or "Nic tu není."
                # chunks of one source are one document's: the document rule has siblings
                c.document_id = 1000 + int(c.source_id[1:])
            cands.append(c)
        # the gold source is mostly among the candidates, at a random position
        gold = (
            rng.choice(cands).source_id if cands and rng.random() < 0.8 else f"s{rng.randint(0, 9)}"
        )
        cases.append(Case(f"r{i}", "?", (gold,) if i % 3 else ()))
        rs.append(retrieval(cands, dict(rng.sample(sorted(words.items()), rng.randint(1, 4))), 60))
    return cases, rs


ANSWERABILITY_GRID = {
    "answer_window": (1, 2),
    "focus_words": (1, 2),
    "paraphrase_max_distance": (0.0, 0.2),
    "document_rule": (False, True),
}


def test_sweep_counts_agree_with_judging_each_setting_through_the_engine(engine: Engine) -> None:
    cases, rs = random_set(7)
    grid = Grid(
        answer_window=(0,),
        focus_words=(2,),
        vector_max_distance=(0.0, 0.1, 0.15, 0.2, 0.3),
        vector_margin=(0.0, 0.05, 1.0),
        min_coverage=(0.0, 0.3, 0.6, 1.0),
        rare_df=(0.01, 0.1),
        rare_min_chunks=(1, 5),
        prefix_credit=(0.0, 0.5),
        support_max_distance=(0.0, 0.25, 0.35),
        support_min_coverage=(0.3, 1.0),
        topic_max_distance=(0.0, 0.25),
        topic_min_known=(0.5, 1.0),
    )
    off_grid = FilterParams(0.17, 0.03, 0.03, 2, 0.45, "idf", 0.25, 0.22, 0.5, 0.21, 0.6)
    s = sweep(cases, rs, grid, folds=3, also=[off_grid])
    # topic distances join the distance axis, and so does the extra setting's
    assert list(s.distances) == [0.0, 0.1, 0.15, 0.17, 0.2, 0.21, 0.25, 0.3]
    # a rule that is off counts once, not once per value of its second knob
    assert len(s) == 8 * (3 * 4 * 2 * 2 * 2 * 2 * (1 + 2 * 2) * (1 + 2) + 1)
    extra = [i for i in range(len(s) - 8, len(s)) if s.params(i) == off_grid]
    fold0 = [c.id for c in cases if fold_of(c.id, 3) == 0]
    rules = set()
    # random settings, and settings where the known-topic rule alone admits (its threshold on a
    # share some questions have exactly)
    alone = [
        i
        for i in range(len(s))
        if (p := s.params(i)).topic_min_known == 0.5
        and p.topic_max_distance
        and p.vector_max_distance == 0
        and p.min_coverage == 1
        and not p.support_max_distance
        and p.vector_margin == 1
    ]
    recalled, false = s.totals()  # what selection sees, kept for every setting
    for i in random.Random(1).sample(range(len(s)), 150) + alone + extra:
        report = score(engine, "r", cases, rs, s.params(i))
        f = report.figures
        assert s.figures(i).as_dict() == f.as_dict(), s.params(i)
        assert (recalled[i], false[i]) == (f.recalled, f.false_answers), s.params(i)
        held = [r for r in report.results if r.case.id in fold0]
        assert s.figures(i, [0]).recalled == sum(r.outcome == "recalled" for r in held)
        assert s.figures(i, [0]).false_answers == sum(r.outcome == "false_answer" for r in held)
        rules.update(e["rule"] for r in report.results for e in r.evidence if e["rule"])
    assert {"vector", "words", "support", "topic"} <= {p for rule in rules for p in rule.split("+")}
    assert len(extra) == 1


def test_sweep_counts_agree_with_the_engine_on_the_answerability_knobs(
    filter_engine: Engine,
) -> None:
    engine = filter_engine
    cases, rs = random_set(11, texts=True)
    grid = Grid(
        vector_max_distance=(0.0, 0.15, 0.3),
        vector_margin=(0.05, 1.0),
        min_coverage=(0.3, 1.0),
        rare_df=(0.1,),
        rare_min_chunks=(1,),
        prefix_credit=(0.0,),
        support_max_distance=(0.0, 0.3),
        support_min_coverage=(0.3,),
        topic_max_distance=(0.0,),
        **ANSWERABILITY_GRID,  # type: ignore[arg-type]
    )
    s = sweep(cases, rs, grid, folds=3)
    seen: dict[str, set[Any]] = {k: set() for k in ANSWERABILITY_GRID}
    outcomes = set()
    documented = False
    for i in random.Random(2).sample(range(len(s)), 120):
        p = s.params(i)
        report = score(engine, "r", cases, rs, p)
        f = report.figures
        assert s.figures(i).as_dict() == f.as_dict(), p
        documented |= any(e["rule"] == "document" for r in report.results for e in r.evidence)
        for k in seen:
            seen[k].add(getattr(p, k))
        outcomes.add((f.recalled, f.false_answers))
    assert all(len(v) == 2 for v in seen.values()), seen
    assert len(outcomes) > 5  # the knobs change what passes
    assert documented, "no setting admitted a candidate by the document rule"


def test_sweep_counts_the_agreement_further_off_as_the_engine_does(filter_engine: Engine) -> None:
    # the chunk both lists put first passes up to agreement_max_distance where its window answers
    cases, rs = random_set(11, texts=True)
    grid = dict(
        vector_max_distance=(0.0, 0.15),
        vector_margin=(1.0,),
        min_coverage=(1.0,),
        rare_df=(0.1,),
        rare_min_chunks=(1,),
        prefix_credit=(0.0,),
        support_max_distance=(0.0, 0.15),
        support_min_coverage=(0.3,),
        topic_max_distance=(0.0,),
        answer_window=(1, 2),
        focus_words=(1, 2),
        paraphrase_max_distance=(0.0,),
        document_rule=(False, True),
    )
    differ = _counted_as_the_engine_does(
        filter_engine, cases, rs, grid, "agreement_max_distance", 0.3
    )
    assert differ, "the agreement further off changed no setting's figures: the test shows nothing"


def _counted_as_the_engine_does(
    engine: Engine,
    cases: list[Case],
    rs: list[Retrieval],
    grid: dict[str, Any],
    knob: str,
    value: float,
) -> int:
    """Sweeps ``grid`` with ``knob`` at ``value`` and at its default, checks each setting's
    figures with ``value`` against the engine's, and counts the settings ``value`` changes."""
    on = sweep(cases, rs, Grid(**grid, **{knob: value}), folds=3)
    off = sweep(cases, rs, Grid(**grid), folds=3)
    assert len(on) == len(off)
    default = getattr(Grid(), knob)
    differ = 0
    for i in range(len(on)):
        p = on.params(i)
        assert getattr(p, knob) == value and getattr(off.params(i), knob) == default
        f = score(engine, "r", cases, rs, p).figures
        assert on.figures(i).as_dict() == f.as_dict(), p
        differ += on.figures(i).as_dict() != off.figures(i).as_dict()
    return differ


def test_sweep_counts_rarity_over_the_profiles_stats_floor_as_the_engine_does(
    engine: Engine,
) -> None:
    # owners of 8 chunks: with the floor (stats_min_chunks 40) a word in 4 chunks is rare at
    # rare_df 0.1, without it none of the question's words is
    cases, rs = random_set(7)
    rs = [replace(r, chunk_count=8) for r in rs]
    grid = dict(
        answer_window=(0,),
        focus_words=(2,),
        vector_max_distance=(0.0, 0.15, 0.3),
        vector_margin=(1.0,),
        min_coverage=(0.3, 1.0),
        rare_df=(0.1,),
        rare_min_chunks=(1,),
        prefix_credit=(0.0,),
        support_max_distance=(0.0, 0.35),
        support_min_coverage=(0.3, 1.0),
        topic_max_distance=(0.0,),
    )
    differ = _counted_as_the_engine_does(engine, cases, rs, grid, "stats_min_chunks", 40)
    assert differ, "the floor changed no setting's figures: the test shows nothing"


def test_distance_axis_runs_in_fine_steps_from_below_the_closest_best_candidate() -> None:
    rs = [
        retrieval([cand(1, "a", vec=1, dist=0.1234), cand(2, "b", vec=2, dist=0.9)]),
        retrieval([cand(1, "a", vec=1, dist=0.2010)]),
    ]
    axis = distance_axis(rs)
    assert axis[0] == pytest.approx(0.1225) and axis[-1] == pytest.approx(0.2025)
    assert np.allclose(np.diff(axis), 0.0025)
    assert distance_axis([retrieval([cand(1, "a", fts=1)])]) == (-1.0,)


# --- selection, frontier, held-out ---------------------------------------------------------------

BASE = {
    "vector_max_distance": 0.2,
    "vector_margin": 0.02,
    "min_coverage": 0.5,
    "rare_df": 0.02,
    "rare_min_chunks": 3,
    "coverage_mode": 0,
    "prefix_credit": 0.5,
    "support_max_distance": 0.0,
    "support_min_coverage": 0.5,
    "topic_max_distance": 0.0,
    "topic_min_known": 0.6,
    "paraphrase_max_distance": 0.0,
    "focus_words": 2,
    "answer_window": 2,
    "require_answer_type": 1,
    "document_rule": 0,
    "anchor_support": False,  # set per sweep (Sweep.fixed), not per block
    "anchor_min_share": 1.0,
    "paraphrase_min_pull": -2.0,  # set per sweep too (rag calibrate --paraphrase-pull)
    "stats_min_chunks": 1,  # the profile's own, not swept
    "agreement_max_distance": 0.0,  # the profile's own too
}


def hand_sweep(
    rows: list[dict[str, float]],
    recalled: list[list[int]],
    false: list[list[int]],
    answerable: list[int],
    no_answer: list[int],
) -> Sweep:
    """A sweep holding exactly ``rows``; every other (block, distance) pair is useless: it
    recalls nothing and answers every not_found case."""
    full = [{**BASE, **r} for r in rows]
    others = [k for k, _ in KNOBS if k != "vector_max_distance"]
    dists = sorted({f["vector_max_distance"] for f in full})
    keys = list(dict.fromkeys(tuple(f[k] for k in others) for f in full))
    shape = (len(dists), len(answerable))
    rec = [np.zeros(shape, dtype=np.int32) for _ in keys]
    fa = [np.tile(np.array(no_answer, dtype=np.int32), (len(dists), 1)) for _ in keys]
    for f, r, x in zip(full, recalled, false, strict=True):
        b, d = keys.index(tuple(f[k] for k in others)), dists.index(f["vector_max_distance"])
        rec[b][d], fa[b][d] = r, x
    blocks = {k: np.array([key[i] for key in keys], dtype=float) for i, k in enumerate(others)}
    return Sweep(
        blocks,
        np.arange(len(keys)),
        np.array(dists),
        np.stack(rec),
        np.stack(fa),
        np.array(answerable),
        np.array(no_answer),
    )


def chosen(s: Sweep, i: int | None) -> dict[str, float]:
    assert i is not None
    p = s.params(i).as_dict()
    p["coverage_mode"] = MODES.index(p["coverage_mode"])
    return {k: v for k, v in p.items() if v != BASE[k]}


def test_select_maximizes_recall_under_the_ceiling_then_prefers_fewer_false_answers() -> None:
    s = hand_sweep(
        [
            {"vector_max_distance": 0.35},
            {"vector_max_distance": 0.20, "vector_margin": 0.01},
            {"vector_max_distance": 0.30},
            {"vector_max_distance": 0.25, "vector_margin": 0.05},
            {"vector_max_distance": 0.25, "vector_margin": 0.01},
        ],
        recalled=[[9], [8], [8], [8], [8]],
        false=[[3], [2], [1], [1], [1]],
        answerable=[10],
        no_answer=[20],
    )
    best = {"vector_max_distance": 0.25, "vector_margin": 0.01}
    assert chosen(s, select(s, 0.10)) == best  # 9 recalled needs 3 false answers > 2 allowed
    assert chosen(s, select(s, 0.15)) == {"vector_max_distance": 0.35}
    assert select(s, 0.0) is None
    assert [chosen(s, i) for i in frontier(s)] == [best, {"vector_max_distance": 0.35}]


def test_select_keeps_the_recall_floor_and_refuses_when_no_setting_keeps_both() -> None:
    s = hand_sweep(
        [{"vector_max_distance": 0.22}, {"vector_max_distance": 0.3}],
        recalled=[[6], [9]],
        false=[[1], [3]],
        answerable=[10],
        no_answer=[20],
    )
    assert chosen(s, select(s, 0.10, floor=0.6)) == {"vector_max_distance": 0.22}
    # the floor rules out what the ceiling alone would take, and nothing is left
    assert select(s, 0.10, floor=0.7) is None
    assert chosen(s, select(s, 0.15, floor=0.9)) == {"vector_max_distance": 0.3}


@pytest.mark.parametrize(
    ("knob", "low", "high", "winner"),
    [
        ("vector_max_distance", 0.15, 0.2, "low"),
        ("support_max_distance", 0.0, 0.15, "low"),
        ("topic_max_distance", 0.0, 0.15, "low"),
        ("vector_margin", 0.0, 0.02, "low"),
        ("min_coverage", 0.4, 0.6, "high"),
        ("support_min_coverage", 0.45, 0.6, "high"),
        ("topic_min_known", 0.5, 0.8, "high"),
        ("rare_df", 0.01, 0.05, "low"),
        ("rare_min_chunks", 1, 5, "low"),
        ("coverage_mode", MODES.index("count"), MODES.index("idf"), "low"),
        ("prefix_credit", 0.0, 1.0, "low"),
    ],
)
def test_ties_go_to_the_simpler_more_conservative_setting(
    knob: str, low: float, high: float, winner: str
) -> None:
    for first, second in ((low, high), (high, low)):
        s = hand_sweep([{knob: first}, {knob: second}], [[5], [5]], [[1], [1]], [10], [10])
        want = low if winner == "low" else high
        i = select(s, 0.1)
        assert i is not None and s.params(i).as_dict()[knob] == (
            MODES[int(want)] if knob == "coverage_mode" else want
        )


def test_earlier_knobs_outrank_later_ones_in_the_tie_break() -> None:
    s = hand_sweep(
        [
            {"vector_max_distance": 0.2, "min_coverage": 0.9},
            {"vector_max_distance": 0.1, "min_coverage": 0.3},
        ],
        [[5], [5]],
        [[0], [0]],
        [10],
        [10],
    )
    assert chosen(s, select(s, 0.1)) == {"vector_max_distance": 0.1, "min_coverage": 0.3}


def test_held_out_scores_each_fold_with_a_setting_chosen_without_it() -> None:
    # Both settings recall 6 of 10 overall, but each is good on one fold only.
    s = hand_sweep(
        [{"vector_max_distance": 0.1}, {"vector_max_distance": 0.2}],
        recalled=[[5, 1], [2, 4]],
        false=[[0, 0], [0, 0]],
        answerable=[5, 5],
        no_answer=[4, 4],
    )
    ho = held_out(s, 0.0)
    assert [f["params"]["vector_max_distance"] for f in ho.folds] == [0.2, 0.1]
    assert [f["test"]["recalled"] for f in ho.folds] == [2, 1]
    assert (ho.pooled.recalled, ho.pooled.answerable, ho.pooled.no_answer) == (3, 10, 8)
    assert s.figures(select(s, 0.0) or 0).recalled == 6  # in-sample looks twice as good
    assert ho.as_dict()["method"].startswith("2-fold")


def test_held_out_falls_back_to_fewest_false_answers_when_no_setting_is_feasible() -> None:
    s = hand_sweep(
        [{"vector_max_distance": 0.1}, {"vector_max_distance": 0.2}],
        recalled=[[3, 3], [5, 5]],
        false=[[1, 1], [2, 2]],
        answerable=[5, 5],
        no_answer=[4, 4],
    )
    ho = held_out(s, 0.0)
    assert [f["feasible"] for f in ho.folds] == [False, False]
    assert ho.pooled.false_answers == 2 and ho.pooled.recalled == 6


def test_fold_is_sha1_of_the_case_id() -> None:
    assert [fold_of(i) for i in ("a", "cs-001", "q2", "q4")] == [2, 1, 3, 4]
    assert [fold_of(i, 2) for i in ("a", "cs-001")] == [0, 1]


def test_plot_writes_a_png(tmp_path: Path) -> None:
    s = hand_sweep(
        [{"vector_max_distance": d} for d in (0.1, 0.15, 0.2)],
        [[2], [5], [8]],
        [[0], [1], [4]],
        [10],
        [10],
    )
    out = tmp_path / "deep" / "curve.png"
    plot(s, 1, 0.1, out, "hand-made", held=[(0.1, 0.4), (0.3, 0.6)])
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


# --- commands on a real database ------------------------------------------------------------------

DOCS = {
    "d-kolo": "Služební kola se půjčují na vrátnici. Každé kolo má zámek a přilbu v brašně.",
    "d-sauna": "Firemní sauna v suterénu je otevřená v úterý a ve čtvrtek od šestnácti hodin.",
    "d-tiskarna": "Barevná tiskárna ve třetím patře tiskne jen po přihlášení kartou zaměstnance.",
    "d-akvarium": "O akvárium v hale se stará paní Horáková. Rybičky se krmí jednou denně ráno.",
    "d-kava": "Kávovar v kuchyňce se odvápňuje každý pátek. Zrnkovou kávu objednává asistentka.",
    "d-parkoviste": "Na parkovišti za budovou jsou čtyři místa vyhrazená pro elektromobily.",
}
CASES = [
    ("q1", "Kde si půjčím služební kolo?", ["d-kolo"]),
    ("q2", "Kdy je otevřená firemní sauna?", ["d-sauna"]),
    ("q3", "Jak tisknout na barevné tiskárně?", ["d-tiskarna"]),
    ("q4", "Kdo se stará o akvárium s rybičkami?", ["d-akvarium"]),
    ("q5", "Kdy se odvápňuje kávovar?", ["d-kava"]),
    ("q6", "Kolik míst mají elektromobily na parkovišti?", ["d-parkoviste"]),
    ("n1", "Jaký je recept na bramborový guláš?", "not_found"),
    ("n2", "Kdo vyhrál loňský maraton v Berlíně?", "not_found"),
    ("n3", "Jak vysoká je hora Sněžka?", "not_found"),
    ("n4", "Kolik měsíců obíhá kolem Jupiteru?", "not_found"),
    # the topic is there, the fact is not: reported, not counted by default
    ("m1", "Kolik stojí půjčení služebního kola na víkend?", "not_found", ["near-topic"]),
]
WORDS_ONLY = FilterParams(
    vector_max_distance=-1.0,
    vector_margin=0.0,
    rare_df=0.5,
    rare_min_chunks=3,
    min_coverage=0.3,
    coverage_mode="count",
    answer_window=2,  # the answerability stage on, as shipped: near-topic cases count
)
ANSWERS_ALL = FilterParams(
    vector_max_distance=2.0,
    vector_margin=2.0,
    rare_df=0.5,
    rare_min_chunks=3,
    min_coverage=1.0,
    coverage_mode="count",
)


@pytest.fixture
def small_set(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "kancelar.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"id": k, "text": v, "lang": "cs"}, ensure_ascii=False) + "\n"
            for k, v in DOCS.items()
        ),
        encoding="utf-8",
    )
    cases = tmp_path / "kancelar_cases.jsonl"
    cases.write_text(
        "".join(
            json.dumps(
                {
                    "id": c[0],
                    "question": c[1],
                    "expect": c[2],
                    "tags": list(c[3]) if len(c) > 3 else [],
                },
                ensure_ascii=False,
            )
            + "\n"
            for c in CASES
        ),
        encoding="utf-8",
    )
    return cases, corpus


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


def test_eval_reports_every_figure(settings: Settings, small_set: tuple[Path, Path]) -> None:
    cases, corpus = small_set
    code, out, err = run(settings, "eval", "--set", str(cases), "--corpus", str(corpus), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["cases"] == 11 and data["owner"].startswith("eval:kancelar_cases:")
    assert set(data["retrieval"]) == {"fts", "vector", "hybrid"}
    assert data["retrieval"]["fts"]["hit@1"] == 1.0, data["retrieval"]
    p = data["pipeline"]
    assert (p["answerable"], p["no_answer"]) == (6, 5)  # eval counts every not_found case
    assert len(data["failures"]) == 6 - p["recalled"] + p["false_answers"]
    code, text, _ = run(settings, "eval", "--set", str(cases), "--corpus", str(corpus))
    assert code == 0
    assert {"related", "related_no_answer"} <= set(p)
    for needle in (
        "hit@1",
        "answer recall",
        "false answers",
        "false refusals",
        "related",
        "failed cases",
    ):
        assert needle in text


def test_the_corpus_is_ingested_once_and_reused_until_it_changes(
    settings: Settings,
    db: Database,
    small_set: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases, corpus = small_set
    embedder = make_embedder(settings)
    evalset = evaluate.regression_set(cases, corpus)
    name, oid = evaluate.corpus_owner(db, settings, embedder, evalset, progress=False)

    def no_ingestion(*args: object, **kwargs: object) -> None:
        raise AssertionError("an unchanged corpus was ingested again")

    monkeypatch.setattr(evaluate, "Ingestor", no_ingestion)
    assert evaluate.corpus_owner(db, settings, embedder, evalset, progress=False) == (name, oid)
    monkeypatch.undo()
    corpus.write_text(
        corpus.read_text(encoding="utf-8").replace("pátek", "čtvrtek"), encoding="utf-8"
    )
    other, other_id = evaluate.corpus_owner(db, settings, embedder, evalset, progress=False)
    assert other != name and other_id != oid


def test_calibrate_writes_a_profile_that_loads_for_its_model_only(
    settings: Settings,
    small_set: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    cases, corpus = small_set
    png = tmp_path / "curve.png"
    code, out, err = run(
        settings,
        "calibrate",
        "--set",
        str(cases),
        "--corpus",
        str(corpus),
        "--plot",
        str(png),
        "--folds",
        "2",
    )
    assert code == 0, err
    assert "frontier" in out and "held out (2-fold CV)" in out
    path = settings.data_dir / "profiles" / "fake_64.json"
    assert f"profile written: {path}" in out
    profile = json.loads(path.read_text(encoding="utf-8"))
    assert profile["model_id"] == "fake/64" and profile["set"] == "kancelar_cases"
    assert profile["figures"]["false_answer_rate"] <= 0.05
    assert profile["held_out"]["pooled"]["answerable"] == 6
    assert profile["figures"]["no_answer"] == 5 and profile["ungated"]["not_found"] == 0
    params, loaded_from = filter_params(settings, "fake/64")
    assert loaded_from == path and params.as_dict() == profile["params"]
    assert filter_params(settings, "other/8") == (FilterParams.from_settings(settings), None)
    with pytest.raises(ConfigError, match="not other/8"):
        filter_params(settings.replace(profile=str(path)), "other/8")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_calibrate_reports_held_out_sets_for_the_choice_and_along_the_frontier(
    settings: Settings,
    small_set: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    cases, corpus = small_set
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "docs.jsonl").write_text(
        json.dumps({"id": "k-ryby", "text": DOCS["d-akvarium"], "lang": "cs"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    (kb / "questions.jsonl").write_text(
        json.dumps({"id": "k1", "question": "Kdo krmí rybičky?", "relevant": ["k-ryby"]})
        + "\n"
        + json.dumps({"id": "k2", "question": "Kdo vyhrál maraton?", "relevant": []})
        + "\n",
        encoding="utf-8",
    )
    output = tmp_path / "p.json"
    common = ["calibrate", "--set", str(cases), "--corpus", str(corpus), "--folds", "2"]
    code, out, err = run(settings, *common, "--holdout", str(kb), "--output", str(output))
    assert code == 0, err
    assert "held-out recall" in out and "held-out sets (no part in the choice)" in out
    assert "kb " in out and "all pooled" in out, out
    held = json.loads(output.read_text(encoding="utf-8"))["held_out_sets"]
    assert [h["set"] for h in held["sets"]] == ["kb"]
    assert (held["pooled"]["answerable"], held["pooled"]["no_answer"]) == (1, 1)
    # a floor no setting under the ceiling reaches: nothing is chosen or written
    again = tmp_path / "q.json"
    code, out, err = run(
        settings,
        *common,
        "--max-false-answer",
        "0",
        "--min-answer-recall",
        "1",
        "--output",
        str(again),
    )
    if code == 0:  # a setting recalls every case without a false answer: the floor held
        assert json.loads(again.read_text(encoding="utf-8"))["figures"]["answer_recall"] == 1.0
    else:
        assert code == 1 and "answer recall at or above 100.0%" in err, err
        assert not again.exists()
    missing = tmp_path / "empty"
    missing.mkdir()
    code, _, err = run(settings, *common, "--holdout", str(missing))
    assert code != 0 and "holds docs.jsonl and questions.jsonl" in err, err


def test_check_passes_fails_and_names_the_regressed_cases(
    settings: Settings,
    small_set: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    cases, corpus = small_set
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    write_profile(good, "fake/64", WORDS_ONLY, {})
    write_profile(bad, "fake/64", ANSWERS_ALL, {"failed_cases": ["n1"]})
    common = ["calibrate", "--check", "--set", str(cases), "--corpus", str(corpus)]
    # the words-only profile recalls 5 of the set's 6 answerable cases: under the gate's 0.92
    code, out, err = run(settings, *common, "--profile", str(good))
    assert code == 1 and "answer recall 0.833 < 0.92" in out, out + err
    code, out, err = run(settings, *common, "--profile", str(good), "--min-answer-recall", "0.8")
    assert code == 0, out + err
    assert "ok: the floors hold" in out
    code, out, _ = run(settings, *common, "--profile", str(bad))
    assert code == 1
    assert "false-answer rate 1.000 > 0.05" in out
    regressed = out.split("regressed since calibration")[1].split("failing at calibration too")[0]
    assert all(f"n{i} false_answer" in regressed for i in (2, 3, 4)) and "n1 " not in regressed


@pytest.mark.parametrize("lines", [[], [("q1", "Kde si půjčím služební kolo?", ["d-kolo"])]])
def test_check_refuses_to_pass_on_an_empty_or_one_sided_set(
    settings: Settings,
    small_set: tuple[Path, Path],
    tmp_path: Path,
    lines: list[tuple[str, str, list[str]]],
) -> None:
    _, corpus = small_set
    cases = tmp_path / "thin.jsonl"
    cases.write_text(
        "".join(
            json.dumps({"id": i, "question": q, "expect": e}, ensure_ascii=False) + "\n"
            for i, q, e in lines
        ),
        encoding="utf-8",
    )
    good = tmp_path / "good.json"
    write_profile(good, "fake/64", WORDS_ONLY, {})
    code, out, err = run(
        settings,
        "calibrate",
        "--check",
        "--set",
        str(cases),
        "--corpus",
        str(corpus),
        "--profile",
        str(good),
    )
    assert code == 1
    assert "refuses to pass on nothing" in err and "ok" not in out


def test_check_counts_near_topic_cases_unless_told_not_to(
    settings: Settings,
    small_set: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    cases, corpus = small_set
    good = tmp_path / "good.json"
    # the words rule alone, without the answerability stage that would refuse the near-topic case
    write_profile(good, "fake/64", dataclasses.replace(WORDS_ONLY, answer_window=0), {})
    common = [
        "calibrate",
        "--check",
        "--set",
        str(cases),
        "--corpus",
        str(corpus),
        "--profile",
        str(good),
    ]
    # every not_found case counts unless told otherwise
    code, out, _ = run(settings, *common)
    assert code == 1
    assert "false-answer rate 0.200 > 0.05" in out and "m1 false_answer" in out
    code, out, err = run(settings, *common, "--ungated-tag", "near-topic")
    assert code == 0, out + err
    assert "not counted (near-topic): 1 of 1 not_found cases got sources" in out
