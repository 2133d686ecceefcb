"""A question's words weighed against a candidate's keys (rag.search.word_evidence): the order
of the kinds of match, their credit, the shares, and one weighing per pattern of matches. Pure."""

from __future__ import annotations

import random

import pytest

from rag.search.word_evidence import QuestionWords, Word, idf

N = 1000
PREFIX_CREDIT = 0.5


def _word(surface: str, df: int, keys: tuple[str, ...] | None = None) -> Word:
    keys = keys or (f"l:{surface}", f"s:{surface[:5]}", f"p:{surface[:4]}", f"f:{surface[:3]}")
    return Word(surface, keys, df, df <= 5, idf(df, N))


@pytest.mark.parametrize(
    ("df", "matched", "by", "credit"),
    [
        (3, {"l:zelený", "s:zelen", "p:zele", "f:zel"}, "lemma", 1.0),
        (3, {"s:zelen", "p:zele", "f:zel"}, "stem", 1.0),
        (3, {"p:zele", "f:zel"}, "prefix", PREFIX_CREDIT),
        (3, {"f:zel"}, "family", PREFIX_CREDIT),
        # a word the corpus lacks is never "almost" there by its prefix, but its family counts
        (0, {"p:zele"}, None, 0.0),
        (0, {"p:zele", "f:zel"}, "family", PREFIX_CREDIT),
        (3, {"l:zelená", "n:zele"}, None, 0.0),  # no key of the word's
        (3, set(), None, 0.0),
    ],
)
def test_a_word_matches_by_its_best_kind_of_key(
    df: int, matched: set[str], by: str | None, credit: float
) -> None:
    words = QuestionWords([_word("zelený", df)], N, PREFIX_CREDIT)
    [evidence], _, _ = words.evidence(matched)
    assert (evidence.matched_by, evidence.credit) == (by, credit)


def test_a_relational_adjective_meets_its_name_as_a_family() -> None:
    # "brněnské", in no chunk, asks for the first letters of "Brně" (names.relational_keys)
    word = Word("brněnské", ("l:brnensky", "s:brnensk", "p:brne", "n:brne"), 0, True, 1.0)
    words = QuestionWords([word], N, PREFIX_CREDIT)
    assert [(e.matched_by, e.credit) for e in words.evidence({"n:brne"})[0]] == [
        ("family", PREFIX_CREDIT)
    ]
    assert words.evidence({"p:brne"})[0][0].matched_by is None  # a prefix alone: no


def test_coverage_counts_rare_words_and_support_every_word_by_idf() -> None:
    rare, common = _word("kolibřík", 2), _word("zelený", 400)
    words = QuestionWords([rare, common], N, PREFIX_CREDIT)
    _, coverage, support = words.evidence({"p:koli", "l:zelený"})
    assert coverage == pytest.approx(PREFIX_CREDIT * rare.weight / (rare.weight + common.weight))
    expected = (PREFIX_CREDIT * idf(2, N) + idf(400, N)) / (idf(2, N) + idf(400, N))
    assert support == pytest.approx(expected)


def test_candidates_with_one_pattern_of_matches_share_one_weighing() -> None:
    words = QuestionWords([_word("kolibřík", 2), _word("zelený", 400)], N, PREFIX_CREDIT)
    first, _, _ = words.evidence({"l:kolibřík", "l:jiný"})
    again, _, _ = words.evidence({"s:kolib", "p:zele", "l:dům"}, None)
    same, _, _ = words.evidence({"l:kolibřík"})
    assert [e.matched_by for e in again] == ["stem", "prefix"]
    assert all(a is b for a, b in zip(first, same, strict=True))
    assert first is not same  # each judgement gets a list of its own


def _compared(word: Word, matched: set[str], prefix_credit: float) -> tuple[str | None, float]:
    """A word's match as the filter read it before the index: every key against ``matched``."""
    kinds = [("l", "lemma"), ("s", "stem"), ("p", "prefix"), ("f", "family")]
    for kind, by in kinds:
        # a relational adjective's name ("n:") is met as a family is
        of_kind = [k for k in word.keys if k[0] == kind or (kind == "f" and k[:2] == "n:")]
        if (kind != "p" or word.df > 0) and any(k in matched for k in of_kind):
            return by, 1.0 if kind in "ls" else prefix_credit
    return None, 0.0


def test_the_index_agrees_with_comparing_every_key() -> None:
    rng = random.Random(25)
    pool = [f"{kind}:{stem}" for kind in "lspfnN" for stem in ("ab", "cd", "ef", "gh", "ij")]
    for _ in range(300):
        words = [
            Word(
                f"w{i}", tuple(rng.sample(pool, rng.randint(1, 6))), rng.choice((0, 1, 9)), True, 1
            )
            for i in range(rng.randint(1, 5))
        ]
        weighed = QuestionWords(words, N, 0.25)
        for _ in range(5):
            matched = set(rng.sample(pool, rng.randint(0, len(pool))))
            evidence, _, _ = weighed.evidence(matched)
            expected = [_compared(w, matched, 0.25) for w in words]
            assert [(e.matched_by, e.credit) for e in evidence] == expected


def test_an_optional_word_counts_only_where_held_and_never_against_the_candidate() -> None:
    rare = Word("věž", ("l:vez",), 1, True, 2.0)
    measure = Word("vysoká", ("l:vysoky",), 1, True, 2.0, optional=True)
    common = Word("vysoká", ("l:vysoky",), 30, False, 0.1, optional=True)
    held = QuestionWords([rare, measure], 40, 0.5)
    assert held.evidence({"l:vez", "l:vysoky"})[1:] == (1.0, 1.0)
    assert held.evidence({"l:vez"})[1:] == (1.0, 1.0)  # absent: no lack
    assert held.evidence({"l:vysoky"})[1] == 0.5  # held, it is half the evidence
    # a common word held adds to support, and coverage (of rare words) stays what it was
    diluted = QuestionWords([rare, common], 40, 0.5)
    assert diluted.evidence({"l:vez", "l:vysoky"})[1] == 1.0
    assert diluted.evidence({"l:vez"})[1:] == (1.0, 1.0)


def test_the_unmatched_families_are_those_of_the_words_no_key_met() -> None:
    # "n:" keys (a relational adjective's name) count as families as "f:" keys do
    relational = Word("brněnské", ("l:brnensky", "n:brne"), 3, True, 1.0)
    words = QuestionWords([_word("zelený", 3), _word("kolibřík", 3), relational], N, 0.5)
    ranks = words.ranks({"l:zelený"})
    assert words.unmatched_families(ranks) == {"f:kol", "n:brne"}
    assert words.unmatched_families(words.ranks(set())) == {"f:zel", "f:kol", "n:brne"}
    # the same pattern gives the same set, computed once
    assert words.unmatched_families(ranks) is words.unmatched_families(ranks)
