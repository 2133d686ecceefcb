"""Attributive modifiers: an adjective is held for its noun only in the noun's phrase."""

from __future__ import annotations

import pytest

from rag.language import attachment
from rag.language.keys import analyze, analyze_question, search_keys, stopword_forms
from rag.language.question_keys import query_keys
from rag.search.answerability import QuestionNeeds, assess, question_needs


def _words(text: str, question: bool = True) -> list[attachment.Word]:
    tokens = (analyze_question if question else analyze)(text, "cs")
    stops = stopword_forms("cs")
    return [attachment.Word(t.surface, t.lemmas, t.form in stops) for t in tokens]


def _needs(question: str) -> QuestionNeeds:
    q = query_keys(question, "cs")
    key_df = {k: 1 for w in q.words for k in w.keys}
    return question_needs(q, {}, key_df, 50, 2)


@pytest.mark.parametrize(
    ("question", "phrases"),
    [
        ("Kolik stojí roční členství?", [("roční", "členství")]),
        ("Kdy se koná zimní firemní slavnost?", [("zimní", "slavnost"), ("firemní", "slavnost")]),
        ("Jaká je spoluúčast u havarijního pojištění?", [("havarijního", "pojištění")]),
        ("Kdy je zápis do základní školy?", [("základní", "školy")]),
        ("Kdo vede školicí středisko v Litomyšli?", [("školicí", "středisko")]),
        (
            "Kolik stojí letní a zimní pneumatiky?",
            [("letní", "pneumatiky"), ("zimní", "pneumatiky")],
        ),
        # a verbal noun in -ení is no adjective, nor an interrogative, nor a noun in -ou
        ("Kolik stojí pojištění zavazadel?", []),
        ("Jaká je cena?", []),
        ("Můžu platit kartou?", []),
        # a name is no noun phrase of this kind
        ("Kde je Nová Ves?", []),
        # the adjective stands before a verb: a predicate, no attribute
        ("Je hlavní vchod bezbariérový?", [("hlavní", "vchod")]),
        ("Je vstup bezbariérový?", []),
        # a noun in -ům is a dative: an adjective in -ého does not qualify it
        ("Kolik dává firemního příspěvku zaměstnancům?", [("firemního", "příspěvku")]),
    ],
)
def test_a_questions_attributive_adjectives_and_their_nouns(
    question: str, phrases: list[tuple[str, str]]
) -> None:
    words = _words(question)
    found = attachment.question_phrases(words, "cs")
    assert [(words[m].surface, words[h].surface) for m, h in found] == phrases


@pytest.mark.parametrize(
    ("word", "adjective"),
    [
        ("roční", True),
        ("havarijního", True),
        ("mateřské", True),
        ("repasovaných", True),  # unknown to the dictionary, an ending no noun has
        ("vyšší", True),
        ("školicí", True),
        ("ročně", False),
        ("pojištění", False),
        ("čtení", False),
        ("kartou", False),
        ("slavnost", False),
    ],
)
def test_adjectives_are_told_by_ending_and_lemma(word: str, adjective: bool) -> None:
    assert attachment.adjectival(_words(word, question=False)[0], "cs") is adjective


@pytest.mark.parametrize(
    ("sentence", "modifier", "head", "held"),
    [
        ("Roční členství stojí 8 900 Kč.", "roční", "členství", True),
        ("Cena ročního členství je 8 900 Kč.", "roční", "členství", True),
        ("Letní a zimní slavnost se konají v parku.", "zimní", "slavnost", True),
        ("Pojištění havarijní i povinné ručení sjednáte u nás.", "havarijní", "pojištění", True),
        # in a dependent of the head, and over nouns joined to the one it stands before
        ("Hrad pořádá slavnosti s rytířskými souboji.", "rytířský", "slavnost", True),
        ("Barmští poslanci za opoziční stranu složili přísahu.", "opoziční", "poslanec", True),
        ("Odpad, jako je starý nábytek nebo matrace, odevzdáte zdarma.", "starý", "matrace", True),
        # the noun left out: the context supplies it
        ("Členství nabízíme měsíční nebo roční.", "roční", "členství", True),
        # another class in the head's sentence: given the benefit
        ("Členství se platí ročně předem.", "roční", "členství", True),
        # the adjective qualifies another noun
        ("Na zimní firemní setkání a na letní slavnost vaří jídelna.", "zimní", "slavnost", False),
        ("Zimní provoz začíná v listopadu, slavnost je v červnu.", "zimní", "slavnost", False),
        # another class in a sentence without the head
        ("Zmrazit ho můžete jednou ročně.", "roční", "členství", False),
    ],
)
def test_a_modifier_is_held_in_its_nouns_phrase(
    sentence: str, modifier: str, head: str, held: bool
) -> None:
    words = _words(sentence, question=False)
    tokens = analyze(sentence, "cs")
    mine = set(search_keys(analyze_question(modifier, "cs")[0]))
    noun = {k for k in search_keys(analyze_question(head, "cs")[0]) if k[0] in "ls"}
    keys = [set(search_keys(t)) for t in tokens]
    is_head = [bool(noun & k) for k in keys]
    at = [i for i, k in enumerate(keys) if mine & k and not is_head[i]]
    assert at, "the sentence holds the modifier"
    assert (
        any(
            attachment.attached(words, i, is_head, "cs", attachment.adjectival(words[i], "cs"))
            for i in at
        )
        is held
    )


GYM = (
    "Měsíční členství bez omezení vstupů stojí 890 Kč.\n\n"
    "Zmrazit ho můžete jednou ročně až na čtyři týdny. Doplatek za solárium je 40 Kč."
)


def test_a_modifier_held_only_outside_its_nouns_phrase_is_lacking() -> None:
    needs = _needs("Kolik stojí roční členství?")
    assert [(p.modifier,) for p in needs.phrases] == [("roční",)]
    a = assess(GYM, "cs", needs, 2, True)
    assert not a.answers
    assert a.reason == "focus"
    assert {f["word"]: f["matched_by"] for f in a.focus}["roční"] is None
    assert not any(k.startswith("s:rocn") for k in a.window_keys)


def test_a_modifier_in_its_nouns_phrase_is_held() -> None:
    needs = _needs("Kolik stojí roční členství?")
    a = assess("Roční členství stojí 8 900 Kč, měsíční 890 Kč.", "cs", needs, 2, True)
    assert a.answers


def test_a_modifier_where_its_noun_is_nowhere_is_held_as_before() -> None:
    needs = _needs("Kolik stojí roční členství?")
    a = assess("Jednou ročně zaplatíte 500 Kč za skříňku.", "cs", needs, 2, True)
    assert {f["word"]: f["matched_by"] for f in a.focus}["roční"] is not None


def test_a_modifier_of_another_noun_is_lacking() -> None:
    needs = _needs("Kdy se koná zimní firemní slavnost?")
    text = "Na zimní firemní setkání a na letní slavnost v pátek 21. června vaří jídelna."
    a = assess(text, "cs", needs, 2, True)
    assert {f["word"]: f["matched_by"] for f in a.focus} == {"zimní": None, "firemní": None}
    assert not a.answers
    # the same adjectives before the noun they ask about hold
    a = assess("Zimní firemní slavnost se koná v pátek 12. prosince.", "cs", needs, 2, True)
    assert a.answers


@pytest.mark.parametrize("verb", ["učí", "vyváží", "prodloužím"])
def test_a_verb_in_i_is_no_adjective(verb: str) -> None:
    assert not attachment.adjectival(_words(verb, question=False)[0], "cs")


def test_a_modifier_elsewhere_is_held_where_the_noun_is_restricted_by_no_other_adjective() -> None:
    needs = _needs("Potřebuju vlastní ručník?")
    text = "Vezměte si čistý ručník na podložení. Skříňky se zamykají vlastním zámkem."
    a = assess(text, "cs", needs, 2, False)
    assert {f["word"]: f["matched_by"] for f in a.focus}["vlastní"] is None
    text = "Vezměte si ručník na podložení. Skříňky se zamykají vlastním zámkem."
    a = assess(text, "cs", needs, 2, False)
    assert a.answers


@pytest.mark.parametrize(
    ("question", "restricted"),
    [
        ("Kolik stojí kurz plavání pro kojence?", [("kojence", "plavání")]),
        ("Kolik stojí ISIC pro učitele?", [("učitele", "ISIC")]),
        ("Kolik stojí vstupné pro malé děti?", [("malé", "vstupné"), ("děti", "vstupné")]),
        # after no noun, whom it is for is what the question asks
        ("Je ten kurz vhodný pro děti?", []),
        # a verbal noun says what for, not for whom
        ("Kolik stojí kurz pro vrácení řidičáku?", []),
        # a pronoun or a quantifier is no one in particular
        ("Je sauna pro vás?", []),
        ("Je sauna pro všechny?", []),
    ],
)
def test_whom_a_thing_is_meant_for(question: str, restricted: list[tuple[str, str]]) -> None:
    words = _words(question)
    found = attachment.beneficiaries(words, "cs")
    assert [(words[k].surface, words[h].surface) for k, h in found] == restricted


SAUNA = "Sauna pro muže je otevřena v úterý a ve čtvrtek od 16 do 21 hodin."


@pytest.mark.parametrize(
    ("question", "text", "paraphrase"),
    [
        # the passage means the thing for another: no vector tells the two apart
        ("Kdy je otevřená sauna pro ženy?", SAUNA, False),
        # the noun bare, or meant for anyone: it may be the one asked for, said in other words
        ("Kdy je otevřená sauna pro ženy?", SAUNA.replace(" pro muže", ""), True),
        ("Kdy je otevřená sauna pro ženy?", SAUNA.replace("muže", "všechny"), True),
        # whether it is meant for them is answered by the passage: no, for men
        ("Je sauna pro ženy otevřená v úterý?", SAUNA, True),
        # an adjective restricts in many ways at once ("velkou chatku" over "Zahradní chatka"):
        # the vector may still stand in for it
        (
            "Kolik stojí pronájem velkého sálu?",
            "Pronájem malého sálu stojí 1 500 Kč na den.",
            True,
        ),
    ],
)
def test_no_vector_stands_in_for_whom_a_thing_is_meant_where_the_passage_means_it_for_another(
    question: str, text: str, paraphrase: bool
) -> None:
    q = query_keys(question, "cs")
    key_df = {k: 1 for w in q.words for k in w.keys}
    a = assess(text, "cs", question_needs(q, {}, key_df, 50, 3), 2, True)
    assert a.reason == "focus" and a.paraphrase is paraphrase, a.as_dict()


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("Kolik uprchlíků má Německo přijmout podle bavorského premiéra?", ["bavorského", "premiéra"]),
        ("O kolik stupňů se smí oteplit planeta podle nové dohody?", ["nové", "dohody"]),
        ("Kolik lidí podle policie zemřelo?", ["policie"]),
        # a pronoun is no source, and "podle" asks nothing of the words before it
        ("Podle čeho poznám padělek?", []),
        ("Kolik stojí jízdenka?", []),
    ],
)  # fmt: skip
def test_the_source_of_a_statement(question: str, source: list[str]) -> None:
    words = _words(question)
    assert [words[i].surface for i in attachment.attributions(words, "cs")] == source


_REPORT = (
    "Německo bude muset i v budoucnu přijmout mnoho běženců. Zmínil jsem počet 200.000 "
    "uprchlíků ročně. Odpovídá to naší hospodářské síle. Ale až bude toto číslo dosaženo, "
    "budeme muset lidi na hranicích odmítat, řekl {}."
)


def test_a_statements_source_is_no_focus_word() -> None:
    needs = _needs("Kolik podle bavorského premiéra přijme Německo uprchlíků ročně?")
    focus = {f.surface for f in needs.focus}
    assert not focus & {"bavorského", "premiéra"}, focus
    # the premier is named two sentences after the figure, as a report names its speaker:
    # the figure's window answers
    a = assess(_REPORT.format("bavorský premiér"), "cs", needs, 2, True)
    assert a.answers, a.as_dict()
    # the source still counts among the chunk's words
    assert {w for w, _, _ in needs.content} >= {"bavorského", "premiéra"}
