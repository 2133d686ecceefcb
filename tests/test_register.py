"""A spoken word of a question asks for the written words a document says it in
(rag.language.register)."""

from __future__ import annotations

import pytest

from rag.language.question_keys import query_keys
from rag.language.register import event_families, written_keys, written_words
from rag.search.answerability import QuestionNeeds, assess, question_needs


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("šéf", "vedoucí"),
        ("šéfa", "vedoucí"),  # by its lemma
        ("šéfuje", "vést"),
        ("bráchovi", "bratr"),  # by its stem: the dictionary lacks the form
        ("zadarmo", "zdarma"),
        ("pití", "nápoj"),
        ("lístku", "jízdenka"),
        ("dovolenku", "dovolená"),
        ("mobilu", "telefon"),
        ("služebce", "cesta"),  # by its stem: "služební cesta" said in one word
        ("fotit", "fotografovat"),
        ("fotí", "fotografovat"),  # by its lemma
        ("kubíky", "krychlový"),  # by its stem: "metr krychlový" said in one word
    ],
)
def test_a_spoken_word_asks_for_its_written_word(spoken: str, written: str) -> None:
    assert written in written_words(spoken, "cs")


@pytest.mark.parametrize(
    "word",
    [
        "vedoucí",  # written words ask for nothing more
        "dovolit",  # the dictionary reads "dovolenka" as its form: no holiday asked for
        "mít",  # "máma" has a stem of three letters, which "mít" shares
        "prach",  # a spoken word of two common senses is no row ("prachy")
        "guma",
        "je",
    ],
)
def test_a_written_word_or_one_of_two_senses_asks_for_nothing(word: str) -> None:
    assert written_words(word, "cs") == ()
    assert written_keys(word, "cs") == ()


def test_other_languages_have_no_table() -> None:
    assert written_words("Chef", "de") == ()


def test_a_participle_among_the_written_words_asks_for_its_verb_too() -> None:
    # "Kdo je šéf účtárny?" over "Účtárnu vede Hana Marešová."
    assert {"l:vedouci", "l:vest"} <= set(written_keys("šéf", "cs"))


def _needs(question: str) -> QuestionNeeds:
    q = query_keys(question, "cs")
    key_df = {k: 1 for w in q.words for k in w.keys}
    key_df.update({k: 0 for w in q.words if w.form in ("sef", "sefuje", "zadarmo") for k in w.keys})
    return question_needs(q, {}, key_df, 50, 2)


def test_a_window_saying_the_written_word_answers_the_spoken_question() -> None:
    a = assess("Vedoucí IT je Ing. Petr Havlík.", "cs", _needs("Kdo je šéf IT?"), 2, True)
    assert a.answers, a
    assert {"word": "šéf", "df": 0, "matched_by": "spoken", "verb": False} in a.focus
    lunch = assess("První oběd je zdarma.", "cs", _needs("Je první den oběd zadarmo?"), 2, True)
    assert lunch.answers, lunch


def test_a_window_without_the_written_word_does_not() -> None:
    a = assess("Helpdesk volejte na lince 2222.", "cs", _needs("Kdo je šéf IT?"), 2, True)
    assert not a.answers


def test_the_written_word_is_no_answer_to_its_own_question() -> None:
    # the position the question asks about, named without the person who holds it
    text = "Výjimku schvaluje vedoucí IT provozu písemně."
    a = assess(text, "cs", _needs("Kdo šéfuje IT provozu?"), 2, True)
    assert not a.answers and a.reason == "type", a


@pytest.mark.parametrize(
    ("verb", "noun"),
    [("hoří", "požár"), ("hořelo", "požár"), ("prší", "déšť"), ("sněží", "sníh")],
)
def test_a_verb_of_an_event_of_nature_asks_for_the_event_s_noun(verb: str, noun: str) -> None:
    assert noun in written_words(verb, "cs")


def test_the_event_s_family_stands_for_it_and_no_other_word_has_one() -> None:
    assert "f:požar" in event_families("hoří", "cs")
    assert event_families("šéf", "cs") == ()  # a spoken word asks for its written word only
    assert event_families("požár", "cs") == ()  # the noun asks for nothing more


def test_a_window_naming_the_event_answers_the_question_of_its_verb() -> None:
    q = query_keys("Co mám dělat, když ve skladu hoří?", "cs")
    key_df = {k: 0 if w.form == "hori" else 1 for w in q.words for k in w.keys}
    needs = question_needs(q, {}, key_df, 50, 2)
    for text in (
        "Při požáru opusťte sklad nejbližším východem.",
        "Požární poplach ve skladu ohlásí siréna; opusťte budovu.",
    ):
        a = assess(text, "cs", needs, 2, True)
        assert a.answers, a.as_dict()
    assert not assess("Ve skladu se nekouří.", "cs", needs, 2, True).answers
