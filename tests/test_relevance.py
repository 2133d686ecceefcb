"""The relevance filter's arithmetic on hand-made retrievals: coverage in count and idf modes,
prefix credit, the rare-word limit, the supported-vector and known-topic rules. Pure; no database
(the same rules against a real database are in tests/test_hybrid.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.language.keys import analyze, search_keys
from rag.language.question_keys import QueryKeys, QueryWord, query_keys
from rag.search.relevance import FilterParams, content_words, idf, judge
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


def test_pronominal_adverbs_prepositions_and_degree_adverbs_are_no_content_words() -> None:
    q = query_keys("Varuje Čína ohledně zbraní nijak zcela dříve uvnitř?", "cs")
    assert [w.surface for w in q.words] == ["Varuje", "Čína", "zbraní"]
    # the prepositions whose unaccented form is also a content word stay words
    q = query_keys("Kde nechám kolo mimo pracovní dobu s pomocí vedoucího?", "cs")
    assert [w.surface for w in q.words] == [
        "nechám",
        "kolo",
        "mimo",
        "pracovní",
        "dobu",
        "pomocí",
        "vedoucího",
    ]


@pytest.mark.parametrize(
    ("question", "words"),
    [
        # the interrogative's measure word says what kind of answer is asked for
        ("Jak daleko je to na vlak?", ["vlak"]),
        ("Jak velká je záloha?", ["záloha"]),
        # but only in the interrogative phrase, and a surname stays a name
        ("Kde je daleko do lesa?", ["daleko", "lesa"]),
        ("Kolik let je Janu Dlouhému?", ["let", "Janu", "Dlouhému"]),
    ],
)
def test_an_interrogatives_words_are_no_content_words(question: str, words: list[str]) -> None:
    q = query_keys(question, "cs")
    r = Retrieval(question, q, [], {}, 10, {})
    assert [w.surface for w in content_words(r)[0]] == words


def _judged(question: str, text: str) -> tuple[float, float]:
    q = query_keys(question, "cs")
    keys = list(dict.fromkeys(k for t in analyze(text, "cs") for k in search_keys(t)))
    cand = Candidate(1, 1, "x", None, text, "cs", 1, 1.0, None, None, 0.016, keys)
    key_df = {k: 1 for w in q.words for k in w.keys}
    (j,) = judge(Retrieval(question, q, [cand], key_df, 40, {}), WORDS_ONLY)
    return j.coverage, j.support


def test_an_interrogatives_word_counts_where_the_passage_holds_it() -> None:
    # "vysoká 24 metrů" holds the measure; "deset minut pěšky" lacks it and loses nothing
    assert _judged("Jak vysoká je věž?", "Věž je vysoká 24 metrů.") == (1.0, 1.0)
    assert _judged("Jak daleko je to na vlak?", "Vlak staví deset minut pěšky.") == (1.0, 1.0)
    coverage, _ = _judged("Jak daleko je to na vlak?", "Autobus staví deset minut pěšky.")
    assert coverage == 0.0


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
    r = _retrieval([("litomysl", 1), ("sklad", 50)], {"litomysl": "lemma", "sklad": "lemma"}, 100)
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


# The document rule. A manual of our own: the chunk that names the device and the chunk on its
# battery are two chunks of one document.
MANUAL_INTRO = (
    "Čtečka KOS 7 slouží k evidenci palet ve skladu. Před prvním použitím ji nechte nabít a "
    "připojte ji k síti skladu."
)
MANUAL_BATTERY = (
    "Plně nabitá baterie vydrží asi osm hodin provozu. Nabíjení v držáku trvá dvě hodiny. "
    "Kontakty čtečky otírejte suchým hadříkem."
)
DOCUMENT_RULE = FilterParams(
    vector_max_distance=0.12,
    vector_margin=0.05,
    rare_df=0.5,
    rare_min_chunks=1,
    min_coverage=0.99,
    answer_window=2,
    focus_words=1,
    document_rule=True,
)


TITLES = {1: "Návod ke čtečce KOS 7", 2: "Poznámky ke čtečce KOS 7"}


def _chunks_retrieval(question: str, chunks: list[tuple[int, str, float]]) -> Retrieval:
    """A retrieval over hand-written chunks (document id, text, distance) with their documents'
    titles, keyed as the database keys them: a candidate's matched keys are the question's keys
    its text holds, and a key's df counts the chunks holding it."""
    q = query_keys(question, "cs")
    held = [{k for t in analyze(text, "cs") for k in search_keys(t)} for _, text, _ in chunks]
    asked = {k for w in q.all_words for k in w.keys}
    cands = [
        Candidate(
            i, doc, f"doc{doc}", TITLES[doc], text, "cs", i, 1.0, i, dist, 0.0, sorted(asked & keys)
        )
        for i, ((doc, text, dist), keys) in enumerate(zip(chunks, held, strict=True), 1)
    ]
    key_df = {k: sum(k in keys for keys in held) for k in asked}
    return Retrieval(question, q, cands, key_df, len(chunks), {})


def test_the_document_rule_admits_the_chunk_that_answers_beside_the_one_that_names() -> None:
    question = "Jak dlouho vydrží baterie čtečky KOS 7?"
    r = _chunks_retrieval(question, [(1, MANUAL_INTRO, 0.10), (1, MANUAL_BATTERY, 0.16)])
    intro, battery = judge(r, DOCUMENT_RULE)
    # the close chunk names the device but holds no duration; the battery chunk is too far off
    # for any rule of its own, and its window answers (the title names the device)
    assert intro.rule == "vector" and not intro.passed and intro.answer.reason in ("type", "focus")
    assert battery.passed and battery.rule == "document"
    assert battery.answer is not None and battery.answer.answers
    # off, the far chunk stays out; a search judges it alike without every window
    assert not judge(r, replace(DOCUMENT_RULE, document_rule=False))[1].passed
    lazy = judge(r, DOCUMENT_RULE, complete=False)
    assert [(j.passed, j.rule) for j in lazy] == [(j.passed, j.rule) for j in (intro, battery)]
    # and with the same evidence: the window's words, not the whole chunk's
    assert lazy[1].window_checked and lazy[1].as_dict() == battery.as_dict()


def test_the_document_rule_needs_the_same_document_and_an_answering_window() -> None:
    question = "Jak dlouho vydrží baterie čtečky KOS 7?"
    # the battery chunk in another document: its window answers (that title names the device
    # too), but no rule admits a chunk of that document
    r = _chunks_retrieval(question, [(1, MANUAL_INTRO, 0.10), (2, MANUAL_BATTERY, 0.16)])
    intro, battery = judge(r, DOCUMENT_RULE)
    assert battery.answer is not None and battery.answer.answers
    assert (intro.passed, battery.passed) == (False, False)
    # the right document, but a question whose focus word no window holds
    asked = "Jak dlouho vydrží baterie čtečky KOS 7 v mrazáku?"
    r = _chunks_retrieval(asked, [(1, MANUAL_INTRO, 0.10), (1, MANUAL_BATTERY, 0.16)])
    assert [j.passed for j in judge(r, DOCUMENT_RULE)] == [False, False]
    # no chunk of the document admitted by a rule: none stands for the other
    r = _chunks_retrieval(question, [(1, MANUAL_INTRO, 0.2), (1, MANUAL_BATTERY, 0.16)])
    assert [j.passed for j in judge(r, DOCUMENT_RULE)] == [False, False]


CONTACT = "Zákaznická linka 585 222 333 je k dispozici v pracovní dny. Pište na info@hrnek.cz."
DELIVERY = "Zboží odesíláme do 24 hodin. Doprava na výdejní místo stojí 79 Kč."


def test_a_question_of_its_kind_alone_is_answered_by_the_nearest_passage_holding_one() -> None:
    # "Jaký máte e-mail?" has no content word: the knowledge base's own e-mail is asked for
    question = "Jaký máte e-mail?"
    params = replace(DOCUMENT_RULE, support_max_distance=0.1725, agreement_max_distance=0.2)
    r = _chunks_retrieval(question, [(1, CONTACT, 0.16), (2, DELIVERY, 0.17)])
    for c in r.candidates:
        c.fts_rank = None  # no word to search by: the full-text list is empty
    contact, delivery = judge(r, params)
    assert contact.passed and contact.rule == "kind", contact.as_dict()
    assert not delivery.passed
    lazy = judge(r, params, complete=False)
    assert [(j.passed, j.rule) for j in lazy] == [(True, "kind"), (False, None)]
    # the nearest passage holds no e-mail: the next one that does answers (the knowledge
    # base's contact may stand in a chunk of its own), alike without every window
    r = _chunks_retrieval(question, [(2, DELIVERY, 0.16), (1, CONTACT, 0.165)])
    for c in r.candidates:
        c.fts_rank = None
    assert [(j.passed, j.rule) for j in judge(r, params)] == [(False, None), (True, "kind")]
    lazy = judge(r, params, complete=False)
    assert [(j.passed, j.rule) for j in lazy] == [(False, None), (True, "kind")]
    # only the first that holds one: a second contact further down is not a source
    r = _chunks_retrieval(question, [(1, CONTACT, 0.16), (2, CONTACT, 0.17)])
    for c in r.candidates:
        c.fts_rank = None
    assert [j.passed for j in judge(r, params)] == [True, False]
    # a short question lies far from every passage: the vector list's first place within the
    # distance both lists' first is held to, not only the word rules' vectors
    r = _chunks_retrieval(question, [(1, CONTACT, 0.19)])
    assert judge(r, params)[0].passed
    # too far off for the rule
    r = _chunks_retrieval(question, [(1, CONTACT, 0.25)])
    assert not judge(r, params)[0].passed
    # a passage that names the kind asked for holds the question's word as well
    named = CONTACT.replace("Pište na", "E-mail:")
    (j,) = judge(_chunks_retrieval(question, [(1, named, 0.16)]), params)
    assert j.passed and j.coverage == 1.0, j.as_dict()
    # a question with a word of its own is held to its words: no passage names a warehouse
    r = _chunks_retrieval("Jaký je e-mail na sklad?", [(1, CONTACT, 0.16)])
    assert not judge(r, params)[0].passed


def test_a_question_of_its_kind_alone_takes_the_contact_its_text_gives_as_a_persons() -> None:
    # a one-document knowledge base gives its contact as its manager's: a question of no word
    # but its kind names no one whose contact another's could be
    rules = "Odpad si každý vykládá sám. Psi musejí zůstat ve vozidle."
    contact = "Za provoz odpovídá vedoucí dvora Radek Holub, tel. 731 482 906."
    params = replace(DOCUMENT_RULE, support_max_distance=0.1725, agreement_max_distance=0.2)
    r = _chunks_retrieval("Na jaké číslo můžu zavolat?", [(1, rules, 0.18), (1, contact, 0.19)])
    for c in r.candidates:
        c.fts_rank = None
    first, second = judge(r, params)
    assert not first.passed and second.passed and second.rule == "kind", second.as_dict()
    assert second.answer is not None and second.answer.type_token == "731482906"
    # a question naming whose contact it asks for is still held to it: the manager is no
    # warehouse keeper
    r = _chunks_retrieval("Jaké je číslo na skladníka?", [(1, contact, 0.16)])
    assert not judge(r, params)[0].passed


def test_a_participle_of_the_window_holds_the_questions_verb_as_word_evidence() -> None:
    # "Kdo vede kroužek?" over "Vedoucí kroužku je ...": full text indexes "vedoucí", not "vést";
    # the window's participle names the verb, so both words are held and coverage admits it
    question = "Kdo vede kroužek?"
    text = "Členy přijímáme od patnácti let. Vedoucí kroužku je Lucie Barošová."
    r = _chunks_retrieval(question, [(1, text, 0.3)])
    assert "l:vest" not in r.candidates[0].matched_keys
    (j,) = judge(r, DOCUMENT_RULE)
    assert j.coverage == 1.0 and j.passed and j.rule == "words", j.as_dict()
    # a search that skips windows nothing could admit reads this one, to the same verdict
    (lazy,) = judge(r, DOCUMENT_RULE, complete=False)
    assert lazy.window_checked and lazy.as_dict() == j.as_dict()
    # a window with the club and no one leading it lacks the verb
    other = "Členy přijímáme od patnácti let. Kroužek se schází v úterý."
    (j,) = judge(_chunks_retrieval(question, [(1, other, 0.3)]), DOCUMENT_RULE)
    assert j.coverage < 1.0 and not j.passed, j.as_dict()


COACHES = "Volejbalovou mládež trénuje Martina Hrubá, bývalá hráčka první ligy."
TRAININGS = "Volejbal: přípravka v pondělí a ve středu 16:00–17:00."
AGREEMENT = replace(
    DOCUMENT_RULE,
    vector_max_distance=0.10,
    support_max_distance=0.13,
    support_min_coverage=0.99,
    document_rule=False,
)


def test_the_chunk_both_lists_put_second_agrees_where_the_first_does_not_answer() -> None:
    question = "Kdy trénuje volejbalová přípravka?"
    r = _chunks_retrieval(question, [(1, COACHES, 0.115), (2, TRAININGS, 0.121)])
    coaches, trainings = judge(r, AGREEMENT)
    # the first in both lists names the coach, no time: it does not answer
    assert coaches.rule == "agreement" and not coaches.passed
    assert trainings.passed and trainings.rule == "agreement", trainings.as_dict()
    # a search judges it alike without every window
    lazy = judge(r, AGREEMENT, complete=False)
    assert [(j.passed, j.rule) for j in lazy] == [(False, "agreement"), (True, "agreement")]
    # where the first answers, it is the agreement, and the second is no one's
    other = TRAININGS.replace("16:00–17:00", "15:00–16:00")
    r = _chunks_retrieval(question, [(1, TRAININGS, 0.115), (2, other, 0.121)])
    assert [(j.passed, j.rule) for j in judge(r, AGREEMENT)] == [(True, "agreement"), (False, None)]
    # second in one list and third in the other is no agreement
    r = _chunks_retrieval(question, [(1, COACHES, 0.115), (2, TRAININGS, 0.121)])
    r.candidates[1].vector_rank = 3
    assert [j.passed for j in judge(r, AGREEMENT)] == [False, False]


def test_the_chunk_both_lists_put_first_agrees_further_off_where_its_window_answers() -> None:
    question = "Kdy trénuje volejbalová přípravka?"
    far = replace(AGREEMENT, agreement_max_distance=0.2)
    # 0.19 away, beyond the support distance (0.13), first in both lists
    r = _chunks_retrieval(question, [(1, TRAININGS, 0.19), (2, COACHES, 0.2)])
    trainings, coaches = judge(r, far)
    assert trainings.passed and trainings.rule == "agreement", trainings.as_dict()
    assert not coaches.passed
    lazy = judge(r, far, complete=False)
    assert [(j.passed, j.rule) for j in lazy] == [(True, "agreement"), (False, None)]
    # not without the knob, nor beyond it
    assert not judge(r, AGREEMENT)[0].passed
    r.candidates[0].distance = 0.21
    assert not judge(r, far)[0].passed
    # a window without the time asked for: refused, not left to the middle outcome
    r = _chunks_retrieval(question, [(1, COACHES, 0.19), (2, TRAININGS, 0.2)])
    assert [(j.passed, j.rule) for j in judge(r, far)] == [(False, None), (False, None)]
    # first in one list only
    r = _chunks_retrieval(question, [(1, TRAININGS, 0.19)])
    r.candidates[0].fts_rank = 2
    assert [(j.passed, j.rule) for j in judge(r, far)] == [(False, None)]
