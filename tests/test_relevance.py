"""The relevance filter's arithmetic on hand-made retrievals: coverage in count and idf modes,
prefix credit, the rare-word limit, the supported-vector and known-topic rules. Pure; no database
(the same rules against a real database are in tests/test_hybrid.py)."""

from __future__ import annotations

import pytest

from rag.language.question_keys import QueryKeys, QueryWord, query_keys
from rag.search.relevance import FilterParams, idf, judge
from rag.search.retrieve import Candidate, Retrieval

# Words only: no vector can pass (distance threshold below any real distance).
WORDS_ONLY = FilterParams(
    vector_max_distance=-1.0,
    vector_margin=0.0,
    rare_df=0.02,
    rare_min_chunks=3,
    min_coverage=0.5,
    coverage_mode="count",
)


def test_hummingbird_stopwords_and_content_words_are_pinned() -> None:
    q = query_keys("Čím se v Litomyšli živí zelený kolibřík?", "cs")
    assert [w.surface for w in q.words] == ["Litomyšli", "živí", "zelený", "kolibřík"]
    for interrogative in ("Odkud", "jaký", "kolik", "čím", "koho", "Kdo", "proc"):
        assert query_keys(f"{interrogative} Litomyšl", "cs").words[0].surface == "Litomyšl"


def _retrieval(words: list[tuple[str, int]], found: dict[str, str], n: int) -> Retrieval:
    """A hand-made retrieval: question words with their df, one candidate matching ``found``."""
    qwords = tuple(QueryWord(w, w, (f"l:{w}", f"p:{w[:4]}"), False) for w, _ in words)
    matched = [f"l:{w}" if how == "lemma" else f"p:{w[:4]}" for w, how in found.items()]
    cand = Candidate(1, 1, "x", None, "", "cs", 1, 1.0, None, None, 0.016, matched)
    return Retrieval(
        "q", QueryKeys("cs", qwords, qwords), [cand], {f"l:{w}": df for w, df in words}, n, {}
    )


def test_coverage_arithmetic_count_mode() -> None:
    r = _retrieval(
        [("litomysl", 1), ("zeleny", 2), ("zivit", 0), ("kolibrik", 0)],
        {"litomysl": "lemma", "zeleny": "lemma"},
        100,
    )
    j = judge(r, WORDS_ONLY)[0]
    assert j.coverage == pytest.approx(0.5) and not j.passed  # two of four is not MORE than half
    r = _retrieval(
        [("litomysl", 1), ("zeleny", 2), ("dum", 1)], {"litomysl": "lemma", "zeleny": "lemma"}, 100
    )
    assert judge(r, WORDS_ONLY)[0].coverage == pytest.approx(2 / 3)
    # a prefix-only match earns half credit: (1 + 0.5) / 3
    r = _retrieval(
        [("litomysl", 1), ("zeleny", 2), ("dum", 1)], {"litomysl": "lemma", "zeleny": "prefix"}, 100
    )
    j = judge(r, WORDS_ONLY)[0]
    assert j.coverage == pytest.approx(0.5) and not j.passed
    # a common word (df 50 of 100 > 2 %) does not count as evidence
    r = _retrieval([("litomysl", 1), ("firma", 50)], {"litomysl": "lemma", "firma": "lemma"}, 100)
    assert judge(r, WORDS_ONLY)[0].coverage == pytest.approx(0.5)


def test_coverage_arithmetic_idf_mode() -> None:
    params = FilterParams(-1.0, 0.0, 0.02, 3, 0.5, "idf", 0.5)
    r = _retrieval(
        [("litomysl", 1), ("zeleny", 2), ("kolibrik", 0)],
        {"litomysl": "lemma", "zeleny": "lemma"},
        100,
    )
    j = judge(r, params)[0]
    expected = (idf(1, 100) + idf(2, 100)) / (idf(1, 100) + idf(2, 100) + idf(0, 100))
    assert j.coverage == pytest.approx(expected)
    assert idf(0, 100) > idf(1, 100) > idf(2, 100)
    assert j.passed  # two rare words of three, the absent one weighing most, still exceed half


def _vector_retrieval(words: list[tuple[str, int]], found: set[str], distance: float) -> Retrieval:
    qwords = tuple(QueryWord(w, w, (f"l:{w}",), False) for w, _ in words)
    cand = Candidate(
        1, 1, "x", None, "", "cs", None, None, 1, distance, 0.016, [f"l:{w}" for w in found]
    )
    return Retrieval(
        "q", QueryKeys("cs", qwords, qwords), [cand], {f"l:{w}": df for w, df in words}, 100, {}
    )


def test_supported_vector_rule_needs_both_distance_and_words() -> None:
    params = FilterParams(
        0.10, 0.05, 0.02, 3, 0.5, "idf", 0.5, support_max_distance=0.18, support_min_coverage=0.5
    )
    common = [("dovolena", 6), ("rok", 18), ("den", 22)]  # no rare word: the word rule cannot fire
    j = judge(_vector_retrieval(common, {"dovolena", "rok", "den"}, 0.15), params)[0]
    assert j.support == pytest.approx(1.0) and j.coverage == 0.0
    assert j.rule == "support"
    assert not judge(_vector_retrieval(common, {"den"}, 0.15), params)[0].passed  # too few words
    assert not judge(_vector_retrieval(common, {"dovolena", "rok", "den"}, 0.19), params)[0].passed


def test_known_topic_rule_separates_paraphrase_from_off_topic() -> None:
    params = FilterParams(
        0.10, 0.05, 0.02, 3, 0.5, "idf", 0.5, topic_max_distance=0.16, topic_min_known=0.6
    )
    paraphrase = [("prace", 19), ("privest", 1), ("mazlicek", 0)]  # 2 of 3 known in the corpus
    off_topic = [("pocasi", 0), ("mars", 0), ("dnes", 4)]  # 1 of 3
    j = judge(_vector_retrieval(paraphrase, set(), 0.15), params)[0]
    assert j.known == pytest.approx(2 / 3) and j.rule == "topic"
    j = judge(_vector_retrieval(off_topic, set(), 0.15), params)[0]
    assert j.known == pytest.approx(1 / 3) and not j.passed
    assert not judge(_vector_retrieval(paraphrase, set(), 0.17), params)[0].passed


def _two_candidates(first: float, second: float) -> Retrieval:
    qwords = (QueryWord("sklad", "sklad", ("l:sklad",), False),)
    cands = [
        Candidate(i, i, f"d{i}", None, "", "cs", None, None, i, dist, 0.016, [])
        for i, dist in ((1, first), (2, second))
    ]
    return Retrieval("q", QueryKeys("cs", qwords, qwords), cands, {"l:sklad": 50}, 100, {})


@pytest.mark.parametrize(
    ("first", "second", "max_distance", "margin", "passed"),
    [
        (0.10, 0.12, 0.15, 0.05, (True, True)),  # both close, second within the margin
        (0.10, 0.16, 0.15, 0.05, (True, False)),  # second beyond the distance
        (0.10, 0.14, 0.15, 0.01, (True, False)),  # second close but outside the margin
        (0.16, 0.17, 0.15, 1.00, (False, False)),  # nothing close enough
        (0.15, 0.15, 0.15, 0.00, (True, True)),  # the bounds are inclusive
    ],
)
def test_close_vector_rule_table(
    first: float, second: float, max_distance: float, margin: float, passed: tuple[bool, bool]
) -> None:
    params = FilterParams(max_distance, margin, 0.02, 3, 1.0, "count", 0.5)
    judged = judge(_two_candidates(first, second), params)
    assert tuple(j.passed for j in judged) == passed
    assert all(j.rule == "vector" for j in judged if j.passed)
    assert judged[1].margin == pytest.approx(second - first)
