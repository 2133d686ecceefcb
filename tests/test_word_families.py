"""Word families, name stems and question classes: tables confirmed against the libraries' output."""

from __future__ import annotations

import re

import pytest

from rag.language.derivation import (
    agent_families,
    agentive_verbs,
    families,
    finite_verb,
    held_families,
    participle_verb,
    place_families,
    verbs_named,
    written,
)
from rag.language.keys import analyze, form_of, search_keys, unaccent
from rag.language.lemmas import conjugated_lemma, lemma_candidates
from rag.language.names import adjective_name_keys, name_key, name_keys, relational_keys
from rag.language.question_classes import asks_for_something, contact_tokens, definitional


def _joined(a: str, b: str, lang: str = "cs") -> bool:
    """Whether question word ``a`` meets passage word ``b`` by their families, either way."""
    return bool(set(families(a, lang)) & set(held_families(b, lang))) or bool(
        set(families(b, lang)) & set(held_families(a, lang))
    )


@pytest.mark.parametrize(
    ("question_word", "passage_word"),
    [
        ("zažádám", "žádost"),  # a perfective verb, unknown to the dictionary, and the noun
        ("požádat", "žádosti"),
        ("požáru", "požární"),  # noun and relational adjective
        ("parkovat", "parkování"),  # verb and verbal noun
        ("objednávka", "objednat"),  # action noun and its verb
        ("rezervace", "rezervovat"),
        ("registrace", "registrační"),
        ("platba", "platit"),
        ("oprava", "opravit"),
        ("ubytovat", "ubytování"),
        ("zkouší", "zkouška"),  # an action noun in -ka
        ("zažaloval", "žalobu"),  # the noun in -oba of an -ovat verb
        ("bezpečné", "bezpečnosti"),  # an -ost noun of an adjective in -ný keeps its root
        ("možné", "možnost"),
        ("povinnosti", "povinný"),
        ("úspěšnost", "úspěchu"),
        ("bezpečnostní", "bezpečně"),
        ("obhajuje", "obhajoba"),
        ("přihlásit", "přihláška"),  # the root's last consonant alternates (s / š)
        ("nahlásit", "hlášení"),
        ("žádost", "zažádat"),  # the unprefixed word meets the prefixed one, both ways
        ("platba", "předplatit"),  # před- is a prefix of its own, not pře- and "dplatit"
        ("platit", "předplatit"),
        ("ztratil", "ztrátě"),  # a root's vowel lengthens in the noun
        ("otevřeno", "otevírací"),  # the imperfective's -ír- of a -řít verb, and its participle
        ("zavřená", "zavírá"),
        ("týdně", "týdenní"),  # an adverb in -ě, and the mobile "e" of týden / týdne
        ("pronájmu", "pronajmout"),
        ("hotově", "hotovosti"),
        ("zapnout", "zapnutí"),  # verbal nouns in -tí
        ("použít", "použití"),
        ("přehřeje", "přehřátí"),  # an unknown finite verb in -eje
        ("pohotovost", "pohotovostní"),  # the relational adjective of an -ost noun
        ("praskne", "prasklé"),  # the adjective of a -nout verb's l-participle
        ("zamrzne", "zamrzlou"),
        ("vrátíte", "vracejte"),  # a -tit verb's "t" is "c" in its imperfective and verbal noun
        ("hodnotit", "hodnocení"),
        ("zaplatit", "placení"),
        ("vrátit", "vrácený"),  # and in its passive participle
        # a -dit verb's "d" is "z" there, where the dictionary knows the verb in -dit
        ("vyřídit", "vyřízení"),
        ("poškodit", "poškozený"),
        ("zobrazit", "zobrazení"),  # a -zit verb keeps its own "z"
        ("ukončit", "ukončení"),  # a verb's "č" is its own, no "t"
        ("doručíme", "doručení"),
        ("zranil", "zranění"),  # the participle in -ěný and the noun in -ění of -nit verbs
        ("změnit", "změněný"),
        ("posunout", "posunutý"),  # a participle in -tý
        # a -hnout or -knout verb's velar is "ž" or "č" there, its vowel long or short
        ("dosáhnout", "dosažení"),
        ("navrhnout", "navržený"),
        ("obléknout", "oblečený"),  # and a participle has no mobile "e"
        ("snížit", "snížení"),  # a verb's "ž" is its own
        # a prefixed verb's root as its verb's, whose -hnout verb the dictionary may know alone
        ("podržíte", "držíme"),
        ("zadržet", "držet"),
        ("použít", "použitý"),
        # the prefixed verbs of motion and their nouns of the iterative stem
        ("odjet", "odjezdu"),
        ("přijedete", "příjezdem"),
        ("vyjet", "výjezd"),
        ("přišel", "příchodu"),
        ("odejdete", "odchodu"),
        ("vejít", "vchodem"),
        ("jezdí", "odjede"),  # the iterative itself meets a prefixed verb's stem
        # the verbs whose stem alternates: the imperfectives of vést, nést, vézt, the nouns of
        # the iterative stem, and the -jmout verbs' imperfective, verbal noun and participle
        ("přivést", "přivádějte"),
        ("převést", "převodu"),
        ("přinést", "přinášejte"),
        ("odvézt", "odvoz"),
        ("dovezete", "dovážíme"),
        ("přijato", "přijetí"),
        ("přijmout", "přijímací"),
        ("pronajímáte", "pronájmu"),
        # and the -mknout verbs' imperfective, whose stem has a vowel the perfective lacks
        ("zamyká", "zamkněte"),
        ("odemykáte", "odemknout"),
        # and those whose "u" is "ou" in one aspect or in their noun
        ("koupím", "kupujete"),
        ("domluvím", "domlouváte"),
        ("smlouvu", "smluvní"),
        # a noun of a prefixed verb with the prefix's vowel long holds the verb's root, and
        # the -dej nouns of dát's compounds theirs
        ("měnit", "výměnu"),
        ("vyměníme", "výměna"),
        ("zakázat", "zákaz"),
        ("prodávat", "prodeje"),
        ("vydáváme", "výdej"),
        # an adverb in -ně holds its adjective's root, and an adjective in -šný its noun's "ch"
        ("bezpečný", "bezpečně"),
        ("hlavní", "hlavně"),
        # a noun in -ně is no adverb, though its genitive plural ends as an adjective would
        # (kuchyní, snídaní): it meets its own relational adjective
        ("kuchyně", "kuchyňský"),
        ("snídaně", "snídaňový"),
        ("jeskyně", "jeskynní"),
        ("úspěch", "úspěšně"),
        ("strach", "strašný"),
        # an adjective of purpose and a participle of an -ovat verb keep the verb's root
        ("zaparkovat", "parkovacích"),
        ("rezervovat", "rezervovaný"),
        ("hlasování", "hlasovací"),
        ("jmenovat", "jmenovaná"),
        # a fee named after what it pays for
        ("škola", "školné"),
        ("pošta", "poštovné"),
        ("nájem", "nájemné"),
    ],
)
def test_a_verb_its_noun_and_its_adjective_are_one_family(
    question_word: str, passage_word: str
) -> None:
    assert _joined(question_word, passage_word), (
        families(question_word, "cs"),
        families(passage_word, "cs"),
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("knihovny", "kniha"),  # a place names another thing than its base
        ("žádost", "zadat"),  # one root unaccented, two words accented
        ("požár", "žárovka"),  # a noun keeps its prefix
        ("matka", "matný"),  # "-ka" leaves a root of four letters or more
        ("školka", "školení"),  # a noun's "-ka" derivative (školka of škola) is no action
        # two prefixes make two verbs: to earn, a department; to register, to report; to order, to
        # discuss
        ("vydělává", "oddělení"),
        ("přihlásit", "nahlásit"),
        ("objednat", "projednat"),
        ("položit", "předložit"),  # to put down, to present
        # "-lý" ends adjectives that come from no verb as well
        ("svět", "světlý"),
        ("tep", "teplé"),
        # a noun's "c" is its own, and "-ovat" keeps it
        ("práce", "prát"),
        ("pracovat", "pratelný"),
        # the nouns of motion that name another thing: a toilet, a shop, a march
        ("zajít", "záchod"),
        ("obejít", "obchodu"),
        ("pojít", "pochod"),
        ("přijet", "příchod"),  # arriving by car and on foot are two stems
        # nouns of an alternating stem that name another thing than their verb's action: a race,
        # a ferry, a benefit; and the unprefixed word of another verb (management, a defect)
        ("zavést", "závod"),
        ("přivézt", "přívoz"),
        ("přinést", "přínos"),
        ("vedení", "převést"),
        ("vada", "přivádět"),
        ("zajímat", "přijímat"),
        ("zamykat", "odemknout"),  # to lock, to unlock
        ("koupit", "koupání"),  # to buy, bathing
        # a long prefix without a verb of the dictionary (zákon is no zakonání), and a noun of a
        # short prefix, which names another thing than its verb (a shop)
        ("konat", "zákon"),
        ("chodit", "obchod"),
        # the "ob" of podoba is the root's, not the suffix -oba (a likeness, no submission)
        ("podat", "podoba"),
    ],
)
def test_derivations_naming_another_thing_stay_apart(a: str, b: str) -> None:
    assert not _joined(a, b), (families(a, "cs"), families(b, "cs"))


def test_a_roots_spellings_bound_the_words_that_hold_it() -> None:
    # the refusals without a window look for a family in the chunk's unaccented text
    assert {"otevr", "otevir"} <= set(written("f:otevr"))  # otevřít, otevírat
    assert written("f:-ztrat") == ("ztrat", "ztrac")  # ztratit, ztráta, ztrácet
    assert written("f:-plan") == ("plan",)
    assert "tyden" in written("f:tydn")  # týdně, týden: the mobile "e"
    for word in (
        *("otevírací", "otevřeno", "ztrátě", "týden", "pronájem", "týdně", "vracejte"),
        *("odjedete", "odjel", "přijde", "přišla", "odešel", "vejděte", "vyšli"),
        *("přivádějte", "přívod", "přinášíme", "odvoz", "odvážíme", "přijetí", "přijat"),
        *("vyřízení", "poškozený", "vrácený", "ukončení", "zranění", "dosažení", "zamčený"),
        *("zadržený", "podržte"),
    ):
        root = held_families(word, "cs")[0]
        assert any(spelled in unaccent(word) for spelled in written(root)), (word, root)


@pytest.mark.parametrize(
    ("a", "b", "joined"),
    [
        ("победителем", "победила", True),  # an agent noun and its verb
        ("создания", "создать", True),  # a verbal noun and its verb
        ("организация", "организовать", True),
        ("построили", "строить", True),  # a prefixed verb and its unprefixed one
        ("бедой", "победить", False),  # no prefix: "бедить" is no verb
    ],
)
def test_russian_words_of_one_family_meet(a: str, b: str, joined: bool) -> None:
    assert _joined(a, b, "ru") is joined, (families(a, "ru"), held_families(b, "ru"))


def test_short_words_and_other_languages_have_no_family() -> None:
    assert families("kolo", "cs") == ()
    assert families("Bestellung", "de") == ()
    assert families("E17", "cs") == ()


def test_an_unknown_finite_verb_is_a_verb() -> None:
    assert finite_verb("zažádám", "cs")
    assert not finite_verb("dovolenou", "cs")


@pytest.mark.parametrize(
    ("form", "known"),
    [
        ("nabíjí", "nabíjet"),  # prosí / prosit, trpí / trpět, sází / sázet: the first one known
        ("nabíjejte", "nabíjet"),  # an imperative
        ("nabírá", "nabírat"),  # dělá / dělat
        ("spekuluje", "spekulovat"),  # kupuje / kupovat
        ("rezervovanou", "rezervovat"),  # a passive participle
        ("nedostala", "dostala"),  # a negated form: its verb's
        ("nepřihlásil", "přihlásil"),
        ("nezvětšuje", "zvětšuje"),
        ("nejezte", "jíst"),  # the irregular "jíst": listed
        ("jíte", "jíst"),
        ("Nejezte", "jíst"),  # an imperative opens its sentence
        ("domlouvejte", "domlouvat"),  # dělej, dělejte: the imperative of the dělat class
        ("Domlouvejte", "domlouvat"),  # capitalized in -te: opening its sentence
        ("Nepoužívejte", "používat"),
        ("Zapůjčíte", "zapůjčit"),
        ("zablokuje", "zablokovat"),  # simplemma guesses "zablokout", no word of its dictionary
        ("odevzdejte", "odevzdat"),  # guessed "odevzdát"
        ("vyjíždějí", "vyjíždět"),  # guessed "vyjíždít"
        ("převezte", "převézt"),  # veze / vézt: the imperative
        ("odneste", "odnést"),  # nese / nést
    ],
)
def test_a_verb_form_the_dictionary_lacks_gets_its_verbs_lemma(form: str, known: str) -> None:
    # the lemma the dictionary gives the infinitive (or the plain form) itself: the two meet
    assert conjugated_lemma(form.lower(), "cs") == lemma_candidates(known, "cs", False)[0]
    assert analyze(form, "cs")[0].lemmas == analyze(known, "cs")[0].lemmas


@pytest.mark.parametrize(
    ("word", "lemma"),
    [
        ("výdej", "výdej"),  # bare "-ej" also ends nouns: not read as dělej / dělat
        ("Dante", "Dante"),  # in -te, but no infinitive of its class the dictionary knows
    ],
)
def test_a_noun_or_a_name_in_a_verbs_ending_keeps_its_lemma(word: str, lemma: str) -> None:
    assert lemma_candidates(word, "cs", False)[0] == lemma


@pytest.mark.parametrize(
    "word",
    [
        "dovolenou",  # known to the dictionary: its own lemma stands
        "Pospíšil",  # capitalized: maybe a surname, never a verb's past form
        "přehřeje",  # no infinitive of its class ("přehřát") the dictionary knows
        "zdarma",  # no verb ending
        "quadriennale",
        "jez",  # a weir, not the imperative of "jíst"
        "pleste",  # in -este, but what precedes is too short for a verb's root
    ],
)
def test_a_word_is_no_verb_form_without_the_dictionarys_infinitive(word: str) -> None:
    assert conjugated_lemma(word, "cs") is None
    assert conjugated_lemma("nabíjí", "sk") is None  # Czech classes only


@pytest.mark.parametrize(
    ("lang", "inflected", "base"),
    [
        ("cs", "Marchionneho", "Marchionne"),
        ("cs", "Marchionnemu", "Marchionne"),
        ("cs", "Kaczyńského", "Kaczyński"),
        ("cs", "Zulawského", "Zulawski"),
        ("cs", "Novákovi", "Novák"),
        ("cs", "Brně", "Brno"),
        ("sk", "Marchionneho", "Marchionne"),
        ("pl", "Kaczyńskiego", "Kaczyński"),
    ],
)
def test_an_inflected_name_meets_its_base_form(lang: str, inflected: str, base: str) -> None:
    assert name_key(inflected, lang) == name_key(base, lang) is not None


@pytest.mark.parametrize(
    ("inflected", "base"),
    [
        ("Prodiho", "Prodi"),
        ("Sarkozymu", "Sarkozy"),
        ("Montim", "Monti"),
        ("Jiřího", "Jiří"),
        ("Krejčímu", "Krejčí"),
    ],
)
def test_a_name_declined_by_added_endings_meets_its_nominative(inflected: str, base: str) -> None:
    # the adjective's endings added to a nominative in a vowel: taking one ending off each
    # form leaves two stems ("prodi", "prod"); the nominative's is among the inflected form's
    assert name_key(inflected, "cs") != name_key(base, "cs")
    assert set(name_keys(base, "cs")) <= set(name_keys(inflected, "cs"))
    # a name of the ordinary paradigm gets no second stem ("Novákem", "Adam")
    assert len(name_keys("Novákem", "cs")) == len(name_keys("Adam", "cs")) == 1


def test_a_relational_adjective_asks_for_the_first_letters_of_its_name() -> None:
    def keys(word: str) -> tuple[str, ...]:
        prefixes = [k for t in analyze(word, "cs") for k in search_keys(t) if k[0] == "p"]
        return relational_keys(word, prefixes, 0, "cs")

    assert keys("brněnské") == ("n:brne",)  # Brno, Brně
    assert keys("pražští") == ("n:praz",)  # Praha, Praze
    # other adjectives derive from no name; a capitalized word is a name of its own
    assert keys("obchodní") == keys("zelený") == keys("Brněnské") == ()
    # an adjective the corpus holds meets itself
    assert relational_keys("brněnské", ["p:brne"], 3, "cs") == ()


def test_a_relational_adjective_gives_the_first_letters_of_its_name() -> None:
    assert adjective_name_keys("Barmští", "cs") == ("r:barm",)  # Barma
    assert adjective_name_keys("eritrejská", "cs") == ("r:erit",)  # Eritrea
    # -cký of a name in -k: the name's "k" as well (Irák, Iráku)
    assert adjective_name_keys("iráckého", "cs") == ("r:irac", "r:irak")
    assert adjective_name_keys("iráčtí", "cs") == ("r:irac", "r:irak")
    assert adjective_name_keys("americký", "cs") == ("r:amer",)
    assert adjective_name_keys("zelený", "cs") == adjective_name_keys("Barman", "cs") == ()
    assert adjective_name_keys("irácký", "de") == ()


def test_name_stems_are_for_capitalized_words_and_keep_names_apart() -> None:
    assert name_key("novák", "cs") is None
    assert name_key("Ostrava", "cs") != name_key("Ostrov", "cs")
    assert name_key("Marchionne", "de") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Pište na podpora@lipka.cz nebo volejte.", "podpora@lipka.cz"),
        ("Recepce: +420 602 123 456.", "420602123456"),
        ("Poruchy hlaste na linku 2222.", "2222"),
    ],
)
def test_a_sentence_holds_a_contact(text: str, expected: str) -> None:
    from rag.language.keys import analyze

    tokens = analyze(text, "cs")
    lemmas = [lemma for t in tokens for lemma in t.lemmas]
    numbers = [t.form for t in tokens if t.form.isdigit()]
    assert expected in contact_tokens(text, lemmas, numbers, "cs")["contact"]


@pytest.mark.parametrize(
    "text",
    [
        "Klíče jsou u vrat číslo 3 v hale B.",  # a gate's number: "číslo" is no telephone
        "Do vývoje hledáme dva programátory se zkušeností s mobilními aplikacemi.",
        "Telefonicky na zákaznické lince v pracovní dny od 8:00 do 17:00.",
        "Od dubna 2024 předává pohotovostní telefon služba v pátek.",
    ],
)
def test_a_number_beside_a_telephone_word_is_no_line_unless_it_is_one(text: str) -> None:
    from rag.language.keys import analyze

    tokens = analyze(text, "cs")
    lemmas = [lemma for t in tokens for lemma in t.lemmas]
    numbers = [t.form for t in tokens if t.form.isdigit()]
    assert contact_tokens(text, lemmas, numbers, "cs") == {}


def test_an_address_and_a_telephone_number_are_contacts_of_their_kinds() -> None:
    text = "Pište na podpora@lipka.cz, volejte 602 123 456."
    found = contact_tokens(text, [], [], "cs")
    assert found == {
        "email": ("podpora@lipka.cz",),
        "phone": ("602123456",),
        "contact": ("podpora@lipka.cz", "602123456"),
    }


def test_a_number_without_a_contact_cue_is_no_contact() -> None:
    assert (
        contact_tokens("Oběd stojí 95 Kč a sklad má 2222 palet.", ["obed"], ["95", "2222"], "cs")
        == {}
    )


@pytest.mark.parametrize(
    ("forms", "named", "expected"),
    [
        (["kdo", "je", "novak"], [False, False, True], True),
        (["kdo", "je", "jan", "novak"], [False, False, True, True], True),
        (["kdo", "je", "vedouci", "skladu"], [False, False, False, False], False),
        (["kdo", "vede", "novak"], [False, False, True], False),
    ],
)
def test_who_is_a_name_is_definitional(forms: list[str], named: list[bool], expected: bool) -> None:
    assert definitional(forms, named, "cs") is expected


@pytest.mark.parametrize(
    ("forms", "named", "expected"),
    [
        # "кто такие" defines whoever follows, names or not
        (["kto", "takie", "rukovoditeli", "stroitelstva"], [False, False, False, False], True),
        (["kto", "takoi", "marchionne"], [False, False, True], True),
        (["kto", "vozglavil", "komitet"], [False, False, False], False),
    ],
)
def test_russian_who_such_is_definitional(
    forms: list[str], named: list[bool], expected: bool
) -> None:
    assert definitional(forms, named, "ru") is expected


@pytest.mark.parametrize(
    ("question", "lang", "expected"),
    [
        ("Kdy trénuje přípravka?", "cs", True),
        ("V kolik hodin otevírá sklad?", "cs", True),
        ("Do kdy se hlásí partneři?", "cs", True),
        ("Jaká je otevírací doba skladu?", "cs", True),
        ("Je muzeum otevřené v pondělí?", "cs", False),
        ("Smím vzít psa do kanceláře?", "cs", False),
        # a statement to verify, with a relative "kdy" further in
        ("Verdi zemřel v době, kdy psal operu.", "cs", False),
        ("Wann öffnet das Lager?", "de", True),
        ("Ist das Lager am Samstag offen?", "de", False),
        ("До каких пор гугеноты говорили по-французски?", "ru", True),
        ("Открыт ли музей в понедельник?", "ru", False),
        # a soft sign leaves no mark in a word's form
        ("Сколько стоит билет?", "ru", True),
        ("Чьи это ключи?", "ru", True),
    ],
)
def test_a_question_for_something_opens_with_an_interrogative(
    question: str, lang: str, expected: bool
) -> None:
    forms = [form_of(w) for w in re.findall(r"[^\W\d_]+", question)]
    assert asks_for_something(forms, lang) is expected


@pytest.mark.parametrize(
    ("verb", "place"),
    [
        ("zaparkovat", "parkoviště"),
        ("shromáždíme", "shromaždišti"),  # a case the dictionary lacks
        ("koupat", "koupaliště"),
        ("letět", "letišti"),
    ],
)
def test_a_question_for_a_place_meets_the_place_of_its_action(verb: str, place: str) -> None:
    assert set(place_families(verb, "cs")) & set(held_families(place, "cs"))
    # and any question meets it by the action's root ("Jak zaplatím parkovné?" over "Parkoviště
    # ... stojí 20 Kč"), where a question for a place asks for the place's mark
    assert _joined(verb, place)


@pytest.mark.parametrize(
    ("word", "agent"),
    [
        ("mluví", "mluvčího"),  # -čí, in a case
        ("provozuje", "provozovatel"),  # -tel of an -ovat verb
        ("dodává", "dodavatel"),  # the verb's vowel long, the noun's short
        ("pořádá", "pořadatelka"),  # the feminine
        ("hlídá", "hlídač"),
        ("uklízí", "uklízečka"),
        ("spravuje", "správce"),  # -ce: the noun's vowel long
        ("prodej", "prodejce"),  # -ce of an action noun
        ("pracuje", "pracovníkovi"),
        ("opravuje", "opravář"),
        ("organizuje", "organizátor"),
        ("kontroluje", "kontrolora"),
        ("trénuje", "trenér"),
        ("kupuje", "kupující"),
        # a short form of a longer verb asks by its verb: velí of velet, řídí of řídit
        ("velí", "velitelem"),
        ("řídí", "řidič"),
    ],
)
def test_a_question_for_a_person_meets_the_one_who_acts(word: str, agent: str) -> None:
    assert set(agent_families(word, "cs")) & set(held_families(agent, "cs"))
    # the agent is another thing than the action: no question but one for a person asks for it
    assert not set(families(word, "cs")) & set(held_families(agent, "cs"))
    assert not set(place_families(word, "cs")) & set(held_families(agent, "cs"))


@pytest.mark.parametrize(
    ("asked", "held"),
    [
        # two agent nouns of one verb name one doer, in any question
        ("prodavač", "prodejce"),
        ("prodejce", "prodávající"),
        ("správce", "spravující"),
        ("řidič", "řídící"),
    ],
)
def test_an_agent_noun_meets_another_agent_noun_of_its_verb(asked: str, held: str) -> None:
    assert set(families(asked, "cs")) & set(held_families(held, "cs"))


def test_an_agent_noun_does_not_meet_its_action() -> None:
    # the seller is not the selling: only the agent's marked root is shared
    assert not set(families("prodavač", "cs")) & set(held_families("prodávání", "cs"))
    assert not set(families("prodávání", "cs")) & set(held_families("prodavač", "cs"))


@pytest.mark.parametrize(
    ("short", "word"),
    [
        ("škol", "školní"),  # the genitive plural without an ending: návštěvy škol, školní třída
        ("míst", "místní"),
        ("cest", "cestu"),
        ("tříd", "třídní"),
    ],
)
def test_a_short_form_of_a_longer_lemma_holds_its_family(short: str, word: str) -> None:
    assert _joined(short, word), (families(short, "cs"), held_families(word, "cs"))


@pytest.mark.parametrize(
    ("noun", "word"),
    [
        ("osoba", "osobní"),  # a vowel before "-ba": the "b" is the root's own
        ("chyba", "chybný"),
        ("podoba", "podobný"),
        ("stavba", "stavební"),  # after a consonant "-ba" is the suffix: stav-ba, stav-ební
        ("služba", "služební"),
        ("platba", "platit"),
    ],
)
def test_a_noun_in_ba_meets_its_adjective(noun: str, word: str) -> None:
    assert _joined(noun, word), (families(noun, "cs"), held_families(word, "cs"))


@pytest.mark.parametrize("word", ["hoří", "volá", "krmí"])
def test_a_short_form_asks_for_no_family_but_its_agents_and_places(word: str) -> None:
    # a root of three letters is too short to stand for a family on its own ("hoř" of hořet
    # and of horní, "vol" of volat and of volný): only the agent and the place ask by it
    assert families(word, "cs") == ()
    assert agent_families(word, "cs") and place_families(word, "cs")


@pytest.mark.parametrize(
    "word",
    ["konec", "tanec", "ulice", "kancelář", "telefonní", "manažer", "práce", "věc", "měsíc"],
)
def test_a_word_with_an_agents_ending_and_no_verb_is_no_agent(word: str) -> None:
    # "-ec", "-ář", "-er" and "-ce" end many words that name no one's action: without a verb (or
    # an action noun) of the dictionary behind them they hold no agent's root
    assert not any(k.startswith("f:%") for k in held_families(word, "cs"))
    assert agent_families("mluví", "de") == ()


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("řidičák", "řidičský"),  # řidičský průkaz
        ("řidičáku", "řidičském"),  # in a case
        ("služebku", "služební"),  # služební cesta
        ("služebce", "služební"),  # the locative's "c"
        ("techničák", "technického"),  # the stem's "č" is the adjective's "c"
        ("zimáku", "zimním"),  # zimní stadion
        ("permanentku", "permanentní"),  # permanentní vstupenka
        ("penzijko", "penzijní"),  # penzijní spoření, a neuter in -ko
        ("životkem", "životním"),  # životní pojištění
    ],
)
def test_a_spoken_univerbation_asks_for_its_adjective(spoken: str, written: str) -> None:
    assert set(families(spoken, "cs")) & set(held_families(written, "cs"))


@pytest.mark.parametrize(
    "word", ["matku", "sporák", "známku", "školka", "tramvajku", "jablko", "středisko"]
)
def test_a_word_the_dictionary_knows_or_without_an_adjective_is_no_univerbation(
    word: str,
) -> None:
    # a written word keeps its own meaning (matka is no "matný", sporák no "sporný"), and an
    # unknown word whose stem makes no adjective of the dictionary asks only for its own root
    assert families(word, "cs") == families(word, "cs")[:2]
    assert families("řidičák", "de") == ()


@pytest.mark.parametrize(
    ("adjective", "noun"),
    [
        ("bezlepkové", "lepku"),  # bezlepkový: bez lepku, the noun's mobile "e" (lepek)
        ("bezbariérový", "bariéry"),
        ("bezhotovostní", "hotovosti"),  # of an -ost noun
        ("bezplatně", "platit"),  # the adverb as its adjective
        ("bezkontaktní", "kontaktu"),
    ],
)
def test_an_adjective_in_bez_says_without_its_noun(adjective: str, noun: str) -> None:
    # either way: a passage's adjective meets the question's noun, and the other way round
    assert set(families(noun, "cs")) & set(held_families(adjective, "cs"))
    assert set(families(adjective, "cs")) & set(held_families(noun, "cs"))


@pytest.mark.parametrize(
    ("adjective", "word"),
    [
        ("bezpečnostní", "bezpečnost"),  # of bezpečnost: no noun "pečnost"
        ("bezpečný", "pečení"),  # a rest of three letters
        ("bezvadný", "vadit"),
    ],
)
def test_an_adjective_in_bez_without_a_noun_of_four_letters_keeps_its_own_root(
    adjective: str, word: str
) -> None:
    assert len(held_families(adjective, "cs")) == 1, held_families(adjective, "cs")
    assert not _joined(adjective, word) or word.startswith("bez")


@pytest.mark.parametrize(
    ("participle", "verb"),
    [
        ("vedoucí", "l:vest"),  # vedou-cí
        ("vedoucího", "l:vest"),
        ("cestující", "l:cestovat"),  # cestují-cí
        ("hořící", "l:horet"),
        ("budoucí", None),  # budou is a stopword's form: no key of a passage
        ("obchodní", None),  # an adjective in -ní
        ("nejbližší", None),
    ],
)
def test_a_present_participle_names_its_verb(participle: str, verb: str | None) -> None:
    assert participle_verb(participle, "cs") == verb
    assert participle_verb(participle, "de") is None


@pytest.mark.parametrize(
    ("text", "verbs"),
    [
        ("Účtárna má čtyři pracovnice pod vedením Hany Marešové.", {"l:vest"}),
        ("pod vedenim Hany Maresove", {"l:vest"}),  # typed without accents
        ("Jednotka zasahovala pod velením Karla Duba.", {"l:velet"}),
        ("Úřad pracuje pod řízením ministerstva.", {"l:ridit"}),
        ("Jednalo se pod předsednictvím starosty.", {"l:predsedat"}),
        ("Oddělení tvoří tři lidé v čele s Evou Malou.", {"l:vest"}),
        ("V čele týmu stojí Eva Malá.", {"l:vest"}),
        # the verbal noun alone is the body that leads; the preposition must be the phrase's
        ("Za pomoc poděkovalo vedení.", set()),
        ("Porada vedení se koná v úterý.", set()),
        ("S vedením jsme se dohodli.", set()),
        ("Dopis leží pod čelem stolu a v řízení.", set()),
    ],
)
def test_a_phrase_of_heading_names_its_verb(text: str, verbs: set[str]) -> None:
    assert agentive_verbs(text, "cs") == verbs
    assert agentive_verbs(text, "sk") == frozenset()
    assert verbs <= verbs_named(text, "cs")
    assert verbs <= verbs_named(
        text, "cs", frozenset({"l:vest", "l:velet", "l:ridit", "l:predsedat"})
    )
    # a question asking for no verb of heading does not read a text for its phrases
    assert verbs_named(text, "cs", frozenset({"l:platit"})).isdisjoint(verbs)


@pytest.mark.parametrize(
    ("question_word", "passage_word"),
    [
        ("uklidit", "úklid"),  # simplemma reads the perfective as its imperfective, uklízet
        ("uklízí", "úklid"),
        ("sklízet", "sklidit"),
    ],
)
def test_a_long_voweled_imperfective_keeps_its_verbs_d(
    question_word: str, passage_word: str
) -> None:
    assert _joined(question_word, passage_word)


@pytest.mark.parametrize("word", ["velice", "silnice", "nemocnice", "dálnice"])
def test_a_noun_in_ce_of_a_verb_form_is_no_agent(word: str) -> None:
    # "velice" is no one who "velí", a silnice no one who "sílí": the -ce agent's noun must be
    # a word of its own (prodejce: prodej), not another's form
    assert not any(k.startswith("f:%") for k in held_families(word, "cs"))


@pytest.mark.parametrize(
    ("question_word", "passage_word"),
    [
        ("zjistit", "zjištění"),  # "st" iotates to "šť"
        ("čistit", "čištění"),
        ("jezdit", "ježdění"),  # "zd" to "žď"
        ("myslet", "myšlení"),  # "sl" to "šl"
        ("pojistit", "pojištění"),
    ],
)
def test_a_cluster_iotates_whole(question_word: str, passage_word: str) -> None:
    assert _joined(question_word, passage_word)


def test_a_cluster_iotates_only_where_the_dictionary_knows_the_plain_verb() -> None:
    # no verb "nemyslit" or "nemyslet" the dictionary knows: the "šl" stays the word's own
    assert held_families("nemyšlený", "cs") == ("f:nemyšl",)
