"""Language-independent anchors: identifiers, numbers and names matched across languages and
scripts, and the supported-vector rule that counts them for an other-language threshold set."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.answer.engine import Engine
from rag.eval.relation_fit import Group, fit
from rag.eval.sets import Case
from rag.eval.sweep import Grid
from rag.language.keys import unaccent
from rag.language.question_keys import query_keys
from rag.search.anchors import _word_matches, evidence, question_anchors, skeleton
from rag.search.relevance import FilterParams, judge
from rag.search.retrieve import Candidate, Retrieval
from rag.settings import Settings

RU_GOLD = (
    "Команда Пэнтерс пропустила всего 308 мячей и заняла шестое место в таблице. "
    "Матч в Берлине посмотрели 70 000 зрителей."
)
RU_OTHER = "Погода в горах меняется быстро, и туристы берут с собой тёплую одежду."


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Panthers", "Пэнтерс"),
        ("Schwarzenegger", "Шварценеггер"),
        ("Hamburg", "Гамбург"),
        ("Denver", "Денвер"),
        ("Tschaikowski", "Чайковский"),
    ],
)
def test_names_reduce_to_one_skeleton_across_scripts(a: str, b: str) -> None:
    assert skeleton(unaccent(a)) == skeleton(unaccent(b))
    assert _word_matches(unaccent(a), unaccent(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Velké", "величину"),
        ("Letňanech", "летний"),
        ("Náchodska", "находящихся"),
        ("Maria", "Mauer"),
    ],
)
def test_words_that_only_share_a_few_consonants_do_not_match(a: str, b: str) -> None:
    assert not _word_matches(unaccent(a), unaccent(b))


def test_a_questions_anchors_are_its_codes_numbers_and_names() -> None:
    ru = question_anchors(query_keys("Сколько мячей пропустила команда Пэнтерс в 2015 году?", "ru"))
    assert [(a.surface, a.kind) for a in ru] == [("Пэнтерс", "name"), ("2015", "number")]
    # German capitalizes every noun: inside the question a capital makes a soft anchor only
    de = question_anchors(query_keys("Wie viele Tore kassierte die Mannschaft der Panthers?", "de"))
    assert {a.surface: a.kind for a in de} == {
        "Tore": "soft",
        "Mannschaft": "soft",
        "Panthers": "soft",
    }
    assert question_anchors(query_keys("Kdo vede sklad ZX-4411?", "cs"))[0].kind == "identifier"


def test_a_numeral_compound_anchors_its_number() -> None:
    q = query_keys("Кто пробежал 2-метровый круг в 70-х?", "ru")
    assert [(a.surface, a.kind, a.form) for a in question_anchors(q)] == [
        ("2-метровый", "number", "2"),
        ("70-х", "number", "70s"),
    ]
    held = evidence(
        "In den 1970ern lief Novak 2 Meter weit.", "de", question_anchors(q), 1, None, frozenset()
    )
    assert set(held.held) == {"2-метровый", "70-х"}, held


def test_a_window_holds_anchors_in_another_script_and_inflected() -> None:
    q = query_keys("Wie viele Tore kassierte die Mannschaft der Panthers in Berlin?", "de")
    held = evidence(RU_GOLD, "ru", question_anchors(q), 2, "number", frozenset())
    assert set(held.held) == {"Panthers", "Berlin"} and held.typed
    assert held.share == 1.0 and held.complete  # soft anchors missing do not count against
    none = evidence(RU_OTHER, "ru", question_anchors(q), 2, "number", frozenset())
    assert none.held == () and none.share == 0.0 and not none.complete
    # a number must be the same number; one window of one sentence cannot hold both names
    ru = query_keys("Сколько мячей пропустили Пэнтерс в 309 играх?", "ru")
    wrong = evidence(RU_GOLD, "ru", question_anchors(ru), 1, None, frozenset())
    assert wrong.held == ("Пэнтерс",) and wrong.strict == 2 and not wrong.complete


def _retrieval(question: str, lang: str, texts: list[tuple[str, float]]) -> Retrieval:
    cands = [
        Candidate(i, i, f"d{i}", None, text, "ru", None, None, i, dist, 0.0, [])
        for i, (text, dist) in enumerate(texts, 1)
    ]
    return Retrieval(question, query_keys(question, lang), cands, {}, 240, {}, (("ru", 240),))


def test_anchors_admit_a_further_vector_that_words_cannot() -> None:
    # German over Russian: no question word meets a Russian key, so word support is 0
    r = _retrieval(
        "Wie viele Tore kassierte die Mannschaft der Panthers?",
        "de",
        [(RU_GOLD, 0.20), (RU_OTHER, 0.205)],
    )
    words = FilterParams(
        0.15, 0.01, 0.1, 1, 1.0, support_max_distance=0.25, support_min_coverage=0.5
    )
    assert not any(j.passed for j in judge(r, words))
    anchored = replace(words, anchor_support=True)
    gold, other = judge(r, anchored)
    assert gold.passed and gold.rule == "anchors" and gold.support == 1.0
    assert gold.as_dict()["anchors"] == ["Panthers"]
    assert not other.passed and other.support == 0.0
    # beyond the calibrated looser distance anchors do not help
    assert not judge(r, replace(anchored, support_max_distance=0.19))[0].passed


def test_anchors_stand_in_for_a_name_the_keys_miss_across_scripts() -> None:
    # Russian over German: "Пэнтерс" has no key in the German text ("penters" vs "panthers"),
    # so the answerability stage calls it absent; the anchors find it
    text = "Die Mannschaft der Panthers kassierte nur 308 Tore und wurde Sechste der Tabelle."
    r = _retrieval("Сколько мячей пропустила команда Пэнтерс?", "ru", [(text, 0.2)])
    r = replace(r, owner_langs=(("de", 240),), candidates=[replace(r.candidates[0], lang="de")])
    staged = FilterParams(0.25, 0.01, 0.1, 1, 1.0, answer_window=2, focus_words=0)
    [plain] = judge(r, staged)
    assert plain.answer is not None and plain.answer.reason == "absent" and not plain.passed
    [anchored] = judge(r, replace(staged, anchor_support=True))
    assert anchored.passed and anchored.answer is not None and anchored.answer.answers


def test_the_document_rule_reads_anchors_alike_in_a_live_search_and_in_evaluation() -> None:
    # Russian over German, one document in two chunks: the close one names the team but holds
    # no number; the far one holds the number, and the type alone (share 0) stands in for the
    # name the keys miss in another script
    intro = "Die Mannschaft der Panthers spielt in Charlotte. Ihr Trainer ist Ron Rivera."
    score = "Die Mannschaft kassierte nur 308 Tore und wurde Sechste der Tabelle."
    r = _retrieval("Сколько мячей пропустила команда Пэнтерс?", "ru", [(intro, 0.2), (score, 0.3)])
    r = replace(
        r,
        owner_langs=(("de", 240),),
        candidates=[replace(c, lang="de", document_id=1) for c in r.candidates],
    )
    params = FilterParams(
        0.25,
        0.01,
        0.1,
        1,
        1.0,
        answer_window=2,
        focus_words=0,
        anchor_support=True,
        anchor_min_share=0.0,
        document_rule=True,
    )
    complete = judge(r, params)
    live = judge(r, params, complete=False)
    assert [(j.passed, j.rule) for j in complete] == [(False, "vector"), (True, "document")]
    assert [(j.passed, j.rule) for j in live] == [(j.passed, j.rule) for j in complete]
    assert live[1].as_dict() == complete[1].as_dict()
    assert not judge(r, replace(params, document_rule=False))[1].passed


def test_calibration_turns_anchor_support_on_only_where_it_recalls_more() -> None:
    # Answerable German questions 0.30 from a Russian paragraph that names their team; off-topic
    # ones 0.281 from paragraphs without their names: no distance alone parts them
    asked = "Wie viele Tore kassierte die Mannschaft der Panthers?"
    off = "Wie viele Tore schoss der Verein Bayern?"
    pairs = []
    for i in range(4):
        r = _retrieval(asked, "de", [(RU_GOLD, 0.30), (RU_OTHER, 0.40)])
        pairs.append((Case(f"a{i}", asked, ("d1",)), r))
        pairs.append((Case(f"n{i}", off, ()), _retrieval(off, "de", [(RU_GOLD, 0.2812)])))
    g = Group("de>ru", [c for c, _ in pairs], [r for _, r in pairs], [])
    engine = Engine(None, Settings(), None, params=FilterParams(0.1, 0.01, 0.1, 1, 1.0))  # type: ignore[arg-type]
    grid = Grid(
        vector_margin=(1.0,),
        min_coverage=(1.0,),
        rare_df=(0.1,),
        rare_min_chunks=(1,),
        coverage_mode=("count",),
        prefix_credit=(0.0,),
        support_max_distance=(0.0, 0.35),
        support_min_coverage=(1.0,),
        topic_max_distance=(0.0,),
        answer_window=(0,),
        focus_words=(0,),
    )
    f = fit(engine, "de>ru", g, 0.0, 2, None, contrasts=(0.0,), grid=grid)
    assert f.params.anchor_support and f.params.support_max_distance == 0.35
    assert f.anchors_swept == (None, 1.0, 0.5, 0.0)
    assert f.report is not None and f.report.figures.recalled == 4
    assert f.report.figures.false_answers == 0
    words = fit(engine, "de>ru", g, 0.0, 2, None, contrasts=(0.0,), grid=grid, anchors=(None,))
    assert not words.params.anchor_support and (
        words.report is None or not words.report.figures.recalled
    )


def test_a_set_may_require_only_part_of_the_anchors_where_names_are_translated() -> None:
    # "Суперкубок" is "Super Bowl" in the German text: translated, not transliterated
    text = "Im Super Bowl kassierte die Mannschaft der Panthers nur 308 Tore."
    r = _retrieval("Сколько мячей пропустила команда Пэнтерс в Суперкубке?", "ru", [(text, 0.2)])
    r = replace(r, owner_langs=(("de", 240),), candidates=[replace(r.candidates[0], lang="de")])
    staged = FilterParams(
        0.25, 0.01, 0.1, 1, 1.0, answer_window=2, focus_words=0, anchor_support=True
    )
    [all_of_them] = judge(r, staged)
    assert all_of_them.anchors is not None and all_of_them.anchors.share == 0.5
    assert not all_of_them.passed
    [half] = judge(r, replace(staged, anchor_min_share=0.5))
    assert half.passed
    # the type alone: no anchor need be held, but a number must be offered
    [typed] = judge(
        replace(r, candidates=[replace(r.candidates[0], text="Die Panther.")]),
        replace(staged, anchor_min_share=0.0),
    )
    assert not typed.passed
