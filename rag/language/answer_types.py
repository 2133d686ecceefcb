"""What a question asks for, and what a sentence holds: the per-language tables of answerability.

Frame words only frame a question ("jak se jmenuje", "co znamená", "how is X made"): a passage
need not contain them. They are lemmas (simplemma's, unaccented, as key bodies), so every
inflected form ("dělá", "udělal", "jmenuje") is caught through the word's lemma keys; a form the
dictionary reads as another word is listed as a form ("stanu" of "stát se", read as "stan", a
tent). Verbs of knowing and of procedure frame a question as "zjistit" does: "Jak poznám
úpal?" asks for its signs, "Jak postupovat, když ..." what to do. The general nouns of persons
("člověk", whose plural is "lidé", and "osoba") frame a question as a pronoun would: "Kolik lidí
přišlo ..." counts what a passage counts as voters or visitors. So do the honorifics ("pan",
"paní", "slečna"): "Kdo zastupuje paní doktorku?" is about the doctor, whom a passage names.
The light verbs of taking and the verbs of writing frame a question as "dát" and "říct" do:
"Berete karty?" asks whether a passage's "platit kartou" holds, "Komu mám napsat reklamaci?"
who handles complaints.

Expected answer types come from the interrogative: a phrase of unaccented question words, the
longest match winning ("v kolik hodin" before "kolik"). A price cue ("stojí", "cena", "cost")
turns a number into an amount, which needs a currency as well.

Token classes of a sentence: numbers (digits, number words by their lemma, numeral compounds
such as "5-Zylinder" or "10letý"), amounts (a number and a currency), dates (a year, a day and
month, a decade such as "70ern", a month or weekday name, a time word), times ("7:30", "15
hodin"), durations (a number and a unit of time, "10letý", a span of years such as "von 1870 bis
1939"), names (a capitalized word inside the sentence, or an all-caps one), places and persons (a
name, or a cue lemma: "budova", "recepce"; "ředitel", "oddělení"). German capitalizes every noun,
so there a capital letter proves nothing about names. A code has letters that are not a word
("ZX-4411", "E17", "5G"); a number joined to a word part is a numeral compound, not a code.

Every table is written as spelled and compared as a word's form (:func:`rag.language.keys.form_of`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.language.keys import form_of, stopword_forms, tokenize, unaccent
from rag.language.lemmas import dictionary_words, lemma_candidates, snowball_stem, typed_lower_name
from rag.language.question_classes import (
    asks_for_something,
    contact_question,
    contact_tokens,
    is_contact_word,
)

_NUMBERED = re.compile(r"[#*\s-]*\d{1,3}[.)]\s")
_CURRENCY_WORDS = frozenset({"kc", "czk", "eur", "usd", "gbp", "pln", "chf"})
AnswerType = Literal[
    "number",
    "amount",
    "date",
    "time",
    "duration",
    "person",
    "place",
    "name",
    "contact",
    "email",
    "phone",
]
CONTACT_TYPES = frozenset({"contact", "email", "phone"})
TokenClass = Literal[
    "number",
    "amount",
    "date",
    "time",
    "duration",
    "name",
    "person",
    "place",
    "identifier",
    "contact",
    "email",
    "phone",
]


def _table(words: str) -> frozenset[str]:
    return frozenset(form_of(w) for w in words.split())


def _among(table: frozenset[str], lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word is one of ``table``'s, by its unaccented form or a lemma."""
    return form in table or not table.isdisjoint(lemmas)


# Lemmas that frame a question rather than carry its content: the light verbs, the verbs by
# which a question cites its document ("Kdo je v textu uveden jako tvůrce metody?", "Jaké
# aplikace článek vyjmenovává?": the passage states the thing, not that it states it), the
# verbs of bringing ("Musíme si vézt ručníky?" asks whether towels are provided), a phrasal
# verb's "zpět" ("dostat zálohu zpátky": the passage says "vracíme"), "nejbližší", which is
# nearest to the asker, a place no passage can know, "jet" as "jít" ("když jedu na dovolenou"),
# the imperfective of a listed light verb as the verb ("Kolik mi firma dává na stravenky?"),
# the "ceně" of "v ceně" (included: "Jsou učebnice v ceně?" over "Učebnice si studenti
# kupují sami"), and the verbs of measure beside "stát" and "trvat": what a thing holds,
# weighs or measures ("Kolik lidí se vejde do sálu?") a passage states as the measure ("sál do
# 50 osob", "taška 12 kg", "věž vysoká 24 metrů"), not by the verb; and "podat" of a filing, a
# support verb as "dát" is ("Dokdy musím podat přihlášku?": the noun says what is filed, and a
# passage says "přihlášku odevzdáte"), and so the verbs of sending it ("Dokdy musím poslat
# žádost?" over "O pokoj se žádá ... do 31. května"); the verbs of getting a thing beside
# "dostat" and "získat" ("Dá se u vás sehnat kompost?" over "si občané mohou odebrat kompost",
# "Kde si vyzvednu lék v neděli?" over the pharmacy open on Sundays).
_FRAMES: dict[str, str] = {
    "cs": """být mít dělat udělat dělá jmenovat znamenat existovat fungovat stát stojit činit trvat
        najít najít moci muset smět chtít potřebovat vědět říci říct zjistit dostat dostávat
        získat získávat dát dávat provést probíhat probíhá platit používat jít starost obrátit
        spojit poznat postupovat stanu staneš stane staneme stanete stanou člověk osoba pan paní
        slečna napsat psát brát vzít nést přinést donést nosit vézt přivézt zpět zpátky nejbližší
        jet ceně uvést uvádět uvedený zmínit zmiňovat zmíněný popsat popisovat popsaný
        vyjmenovat vyjmenovaný nazvat nazývat nazvaný označovat označovaný vejít pojmout vážit
        měřit podat podávat poslat posílat zaslat zasílat odeslat odesílat sehnat shánět
        obstarat vyzvednout vyzvedávat""",
    "sk": """byť mať robiť urobiť volať menovať znamenať existovať fungovať stáť nájsť môcť
        musieť smieť chcieť potrebovať vedieť povedať zistiť dostať získať dať prebiehať""",
    "pl": """być mieć robić zrobić nazywać znaczyć istnieć działać kosztować znaleźć móc
        musieć chcieć potrzebować wiedzieć powiedzieć dostać otrzymać dać odbywać""",
    "de": """sein haben machen heißen bedeuten existieren funktionieren kosten finden können
        müssen dürfen wollen sollen mögen brauchen wissen sagen bekommen erhalten geben geschehen
        stattfinden passieren tun""",
    "ru": """быть иметь делать сделать называться называть означать существовать работать
        стоить найти мочь должен хотеть нужно надо знать сказать получить дать происходить""",
    "en": """be have make do call name mean exist work cost find get give happen take
        know say tell need want called named""",
}
FRAME_WORDS: dict[str, frozenset[str]] = {lang: _table(words) for lang, words in _FRAMES.items()}
# ... and as written: unaccented, "byt" (a flat) is "být" (to be) and "pán" (a master) "pan"
FRAME_WRITTEN: dict[str, frozenset[str]] = {
    lang: frozenset(words.lower().split()) for lang, words in _FRAMES.items()
}

# Interrogative phrases (unaccented word sequences) and the answer type they expect.
_QUESTION_PHRASES: dict[str, tuple[tuple[str, AnswerType], ...]] = {
    "cs": (
        ("jak se jmenuje", "name"),
        ("jak se jmenují", "name"),
        ("jak starý", "number"),
        ("jak stará", "number"),
        ("jak staré", "number"),
        ("jak se jmenoval", "name"),
        ("jak se jmenovala", "name"),
        ("v kolik hodin", "time"),
        # "v kolik" alone asks for a clock time ("V kolik zavírá sklad?"); "od kolika" and "do
        # kolika" also ask for an age ("Od kolika let ...?")
        ("v kolik", "time"),
        ("od kolika hodin", "time"),
        ("do kolika hodin", "time"),
        ("jak dlouho", "duration"),
        ("jak daleko", "number"),  # a distance: "5 kilometrů"
        ("na jak dlouho", "duration"),
        # a measure asked by "jak" and its adjective ("jak dlouhá je záruka", "jak široká role"):
        # the adjective is the interrogative's, not a word the passage must repeat
        ("jak dlouhý", "number"),
        ("jak dlouhá", "number"),
        ("jak dlouhé", "number"),
        ("jak široký", "number"),
        ("jak široká", "number"),
        ("jak široké", "number"),
        # the level of a sum or a limit ("Do jaké výše jsou pojištěné šperky?", "Jaká je výše
        # nájemného?"): a number, a sum where a price cue says so
        ("do jaké výše", "number"),
        ("jaká je výše", "number"),
        ("v jaké výši", "number"),
        # the other measures of size ("Jak velká je záloha?", "jak vysoký", "jak těžký", "jak
        # hluboký"): a number the passage gives ("30 %", "2 metry")
        ("jak velký", "number"),
        ("jak velká", "number"),
        ("jak velké", "number"),
        ("jak vysoký", "number"),
        ("jak vysoká", "number"),
        ("jak vysoké", "number"),
        ("jak těžký", "number"),
        ("jak těžká", "number"),
        ("jak těžké", "number"),
        ("jak hluboký", "number"),
        ("jak hluboká", "number"),
        ("jak hluboké", "number"),
        ("jak rychle", "number"),
        ("jak rychlý", "number"),
        ("jak rychlá", "number"),
        ("jak rychlé", "number"),
        ("jak teplý", "number"),
        ("jak teplá", "number"),
        ("jak teplé", "number"),
        # the same measures in the accusative, where the measured noun is the object ("Jak velkou
        # zálohu musím zaplatit?", "Jak dlouhou záruku máte?")
        ("jak starou", "number"),
        ("jak dlouhou", "number"),
        ("jak širokou", "number"),
        ("jak velkou", "number"),
        ("jak vysokou", "number"),
        ("jak těžkou", "number"),
        ("jak hlubokou", "number"),
        ("jak rychlou", "number"),
        ("jak teplou", "number"),
        # the time ahead of something ("S jakým předstihem se objednat?", "Jak dlouho dopředu
        # mám objednat dort?"): "tři dny předem"
        ("s jakým předstihem", "duration"),
        ("jak dlouho dopředu", "duration"),
        ("jak dlouho předem", "duration"),
        ("jak moc dopředu", "duration"),
        ("jak moc předem", "duration"),
        # the currency of "how much" ("kolik korun"): a passage writes "Kč"
        ("kolik korun", "number"),
        ("kolik", "number"),
        ("kolika", "number"),
        ("kolikrát", "number"),
        ("kdy", "date"),
        # the year asked for by a phrase of its own ("v kterém roce", "kterého roku")
        ("v kterém roce", "date"),
        ("ve kterém roce", "date"),
        ("v jakém roce", "date"),
        ("kterého roku", "date"),
        # the day asked for by a phrase of its own ("Ve které dny rozvážíte?", "Který den je
        # trh?"): a passage names the days ("od úterý do soboty")
        ("ve které dny", "date"),
        ("v které dny", "date"),
        ("v jaké dny", "date"),
        ("které dny", "date"),
        ("jaké dny", "date"),
        ("ve který den", "date"),
        ("v který den", "date"),
        ("v jaký den", "date"),
        ("který den", "date"),
        ("kterého dne", "date"),
        ("dokdy", "date"),
        ("odkdy", "date"),
        ("kdo", "person"),
        ("koho", "person"),
        ("komu", "person"),
        ("kým", "person"),
        ("kde", "place"),
        ("kam", "place"),
        ("odkud", "place"),
    ),
    "sk": (
        ("ako sa volá", "name"),
        ("ako sa menuje", "name"),
        ("o koľkej", "time"),
        ("ako dlho", "duration"),
        ("aký starý", "number"),
        ("aká stará", "number"),
        ("koľko", "number"),
        ("kedy", "date"),
        ("v ktorom roku", "date"),
        ("ktorého roku", "date"),
        ("kto", "person"),
        ("koho", "person"),
        ("komu", "person"),
        ("kde", "place"),
        ("kam", "place"),
        ("odkiaľ", "place"),
    ),
    "pl": (
        ("jak się nazywa", "name"),
        ("o której", "time"),
        ("o której godzinie", "time"),
        ("jak długo", "duration"),
        ("ile", "number"),
        ("kiedy", "date"),
        ("w którym roku", "date"),
        ("kto", "person"),
        ("komu", "person"),
        ("kogo", "person"),
        ("gdzie", "place"),
        ("dokąd", "place"),
        ("skąd", "place"),
    ),
    "de": (
        ("wie heißt", "name"),
        ("um wie viel uhr", "time"),
        ("um wieviel uhr", "time"),
        ("wie lange", "duration"),
        ("wie alt", "number"),
        ("wie viel", "number"),
        ("wie viele", "number"),
        ("wieviel", "number"),
        ("wann", "date"),
        ("in welchem jahr", "date"),
        ("seit wann", "date"),
        ("wer", "person"),
        ("wem", "person"),
        ("wen", "person"),
        ("wo", "place"),
        ("wohin", "place"),
        ("woher", "place"),
    ),
    "ru": (
        ("как зовут", "name"),
        # not "как называется": Russian writes the terms it asks for in lower case
        # ("называется фотосинтезом"), so a name's capital cannot tell the answer
        ("во сколько", "time"),
        ("в котором часу", "time"),
        ("как долго", "duration"),
        ("сколько времени", "duration"),
        ("сколько", "number"),
        ("когда", "date"),
        ("в каком году", "date"),
        ("кто", "person"),
        ("кому", "person"),
        ("кого", "person"),
        ("где", "place"),
        ("куда", "place"),
        ("откуда", "place"),
    ),
    "en": (
        ("what is the name", "name"),
        ("what was the name", "name"),
        ("at what time", "time"),
        ("what time", "time"),
        ("how long", "duration"),
        ("how old", "number"),
        ("how many", "number"),
        ("how much", "number"),
        ("when", "date"),
        ("what year", "date"),
        ("which year", "date"),
        ("who", "person"),
        ("whom", "person"),
        ("where", "place"),
    ),
}
# Interrogatives that set no type ("co", "what", "что"): a question opening with one uses a
# typed word after it only in a clause of its own ("Что происходит, когда лёд тает?", "What is
# the man called who ...?"), which sets no type either.
_UNTYPED_INTERROGATIVES = {
    "cs": "co jak proč který která které kteří jaký jaká jaké čí",
    "sk": "čo ako prečo ktorý ktorá ktoré aký aká aké",
    "pl": "co jak dlaczego który która które jaki jaka jakie",
    "de": "was wie warum weshalb wozu welche welcher welches welchen welchem",
    "ru": "что как почему зачем какой какая какое какие который которая которое которые",
    "en": "what how why which whose",
}
UNTYPED_INTERROGATIVES: dict[str, frozenset[str]] = {
    lang: _table(words) for lang, words in _UNTYPED_INTERROGATIVES.items()
}
QUESTION_TYPES: dict[str, tuple[tuple[tuple[str, ...], AnswerType], ...]] = {
    lang: tuple(
        sorted(
            ((tuple(form_of(w) for w in phrase.split()), kind) for phrase, kind in rows),
            key=lambda row: -len(row[0]),
        )
    )
    for lang, rows in _QUESTION_PHRASES.items()
}

# The same phrases by their first word, each word's longest first: a question is scanned once,
# not once per phrase.
_PHRASES_BY_FIRST_WORD: dict[str, dict[str, tuple[tuple[tuple[str, ...], AnswerType], ...]]] = {
    lang: {
        first: tuple(row for row in rows if row[0][0] == first)
        for first in dict.fromkeys(row[0][0] for row in rows)
    }
    for lang, rows in QUESTION_TYPES.items()
}

# Lemmas (or forms) that make a "how much" question ask for a sum of money.
PRICE_CUES: dict[str, frozenset[str]] = {
    "cs": _table("stát stojit zaplatit platit cena činit koruna kč peníze peněz částka"),
    "sk": _table("stáť zaplatiť platiť cena koruna euro peniaze suma"),
    "pl": _table("kosztować zapłacić płacić cena złoty pieniądze kwota"),
    "de": _table("kosten zahlen bezahlen preis euro geld betrag"),
    "ru": _table("стоить платить заплатить цена рубль деньги сумма"),
    "en": _table("cost costs pay paid price money sum"),
}

# Words of earning: "kolik" beside one asks a sum of money too ("Kolik vydělává vedoucí skladu?"),
# but the earning is what the question is about, not only the kind of answer: they stay in its
# focus, where a price word and a purchase leave it.
_EARNING: dict[str, frozenset[str]] = {
    "cs": _table("vydělávat vydělat výdělek plat mzda"),
    "sk": _table("zarábať zarobiť plat mzda"),
    "pl": _table("zarabiać zarobić pensja wynagrodzenie"),
    "de": _table("verdienen gehalt lohn"),
    "ru": _table("зарабатывать заработать зарплата"),
    "en": _table("earn earns earned salary wage"),
}

# Verbs of buying and selling: "kolik" beside one asks a price ("Za kolik si můžu koupit oběd?"),
# and there they restate what the price is of, as the price cues do; a passage writes "oběd
# stojí 95 Kč".
_PURCHASE: dict[str, frozenset[str]] = {
    "cs": _table("koupit kupovat nakoupit pořídit prodat prodávat"),
    "sk": _table("kúpiť kupovať predať predávať"),
    "pl": _table("kupić kupować sprzedać sprzedawać"),
    "de": _table("kaufen verkaufen"),
    "ru": _table("купить покупать продать продавать"),
    "en": _table("buy bought sell sold"),
}


# The nouns of a sum charged or paid ("Kolik je příspěvek do fondu oprav?"): the sum is the
# answer, and the noun says what it is for, so a passage holds it as it holds the thing bought.
_CHARGES: dict[str, frozenset[str]] = {
    "cs": _table(
        """poplatek příspěvek nájem nájemné doplatek příplatek pokuta školné stravné jízdné
        vstupné poštovné kauce úplata odměna"""
    ),
    "sk": _table("poplatok príspevok nájom nájomné doplatok príplatok pokuta vstupné"),
    "pl": _table("opłata składka czynsz dopłata kara"),
    "de": _table("gebühr beitrag miete zuschlag strafe"),
    "ru": _table("плата взнос аренда доплата штраф"),
    "en": _table("fee charge rent surcharge fine"),
}

# What makes "kolik" ask for a sum of money: a price cue, a purchase, an earning or a charge.
_SUM_CUES = {
    lang: cues
    | _PURCHASE.get(lang, frozenset())
    | _EARNING.get(lang, frozenset())
    | _CHARGES.get(lang, frozenset())
    for lang, cues in PRICE_CUES.items()
}


# The words a price question need not find in a passage: the price cues and the purchases.
_PRICE_WORDS = {lang: cues | _PURCHASE.get(lang, frozenset()) for lang, cues in PRICE_CUES.items()}


# Money named as such ("Dostanu peníze zpátky?", "Kdy mi pošlete peníze?", "Bekomme ich mein Geld
# zurück?") and the paying of it ("Zaplatíte mi odtah?"): words of the whole class, which a passage
# says by what the money is, a sum in a currency, a price, a payment, a fee or a wage ("jízdné vám
# vrátíme", "vrátíme vám 80 % ceny", "Odtah ... hradíme"), as it says a season by its months. Not
# "platit", which is also to be valid ("Platí jízdenka i v noci?").
MONEY = _table("peníze pieniądze peniaze geld деньги money")
PAYING = _table(
    """zaplatit proplatit proplácet uhradit hradit vyplatit vyplácet zapłacić zaplatiť bezahlen
    erstatten заплатить оплатить pay refund"""
)
# What money is, as a passage says it: a price, a sum, a currency, a payment and the paying.
_PRICES_AND_PAYMENTS: dict[str, frozenset[str]] = {
    "cs": _table(
        """cena částka koruna kč euro platba platit zaplatit vyplatit vyplácet proplatit
        proplácet doplatit doplácet splatit splácet splátka výplata uhradit hradit úhrada
        refundace záloha"""
    ),
    "sk": _table("cena suma koruna euro platba platiť zaplatiť vyplatiť úhrada záloha"),
    "pl": _table("cena kwota złoty płatność płacić zapłacić wypłacić zwrot zaliczka"),
    "de": _table(
        """preis betrag euro zahlung zahlen bezahlen auszahlen erstatten erstattung
        rückerstattung kaution"""
    ),
    "ru": _table(
        "цена сумма рубль оплата платить заплатить выплата выплатить выплачивать компенсация"
    ),
    "en": _table("price sum amount payment pay paid refund reimburse deposit"),
}
_MONEY_SAID = {
    lang: paying | _CHARGES.get(lang, frozenset()) | _EARNING.get(lang, frozenset())
    for lang, paying in _PRICES_AND_PAYMENTS.items()
}
# Czech names a fee by a neuter adjective made a noun, which the dictionary lists as a word of its
# own in -né after a consonant (jízdné, vstupné, nájemné, kurzovné, školné, výživné), where an
# adjective's -né is a form of its -ný ("zelené": zelený).
_FEE_FORM = re.compile(r"\w+(?:né|ného|nému|ným)", re.I)
_FEE_LEMMA = re.compile(r"[^aeiouyáéěíóúůý]né")


# The words that state a price of nothing ("Věrnostní kartu dostanete zdarma"): a question for
# a sum ("Kolik stojí věrnostní karta?") is answered by them as by an amount, as lemma keys of a
# sentence. Not English "free", whose other senses ("free seats", "free time") are as common.
FREE_OF_CHARGE = frozenset(
    f"l:{w}"
    for w in _table("zdarma zadarmo bezplatně bezplatný kostenlos gratis umsonst бесплатный")
)


def names_money(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names money as such (:data:`MONEY`)."""
    return _among(MONEY, lemmas, form)


def names_paying(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names the paying of money (:data:`PAYING`)."""
    return _among(PAYING, lemmas, form)


_MONEY_KEYS = {
    lang: tuple(sorted(f"l:{word}" for word in said)) for lang, said in _MONEY_SAID.items()
}


def money_keys(lang: str) -> tuple[str, ...]:
    """The lemma keys by which a passage says money (:func:`speaks_of_money` without its sums
    and fees' names, which are no keys)."""
    return _MONEY_KEYS.get(lang, ())


@lru_cache(maxsize=4096)
def fee_noun(surface: str) -> bool:
    """Whether a Czech word is the name of a fee ("jízdného": jízdné)."""
    lemma = lemma_candidates(surface.lower(), "cs", False)[0]
    return len(lemma) > 3 and _FEE_LEMMA.fullmatch(lemma[-3:]) is not None


def speaks_of_money(text: str, keys: Iterable[str], amount: bool, lang: str) -> bool:
    """Whether a sentence says money in what it is: a sum in a currency (``amount``, its token
    class), a price, a payment, a fee or a wage, by a lemma key (``l:cena``) of
    :data:`_PRICES_AND_PAYMENTS`, :data:`_CHARGES` or :data:`_EARNING`, or a Czech fee's name
    (:func:`fee_noun`)."""
    if amount:
        return True
    said = _MONEY_SAID.get(lang, frozenset())
    if any(k[:2] == "l:" and k[2:] in said for k in keys):
        return True
    return lang == "cs" and any(fee_noun(m.group(0)) for m in _FEE_FORM.finditer(text))


def is_price_word(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a word of a question asking a price names the kind of answer ("cena", "částka",
    "zaplatit") or the purchase it is the price of ("koupit"), as "telefonní číslo" does in a
    contact question: the passage gives the amount, not these words."""
    return _among(_PRICE_WORDS.get(lang, frozenset()), lemmas, form)


# Opening and closing: in a question for a time ("Kdy má úřad ve čtvrtek otevřeno?", "V kolik
# zavírá sklad?") they name what the time is of, the hours, which a passage gives as "čtvrtek
# 8–12" without the word, as it gives a price without "stojí". Lemmas, and the forms the
# lemmatizer leaves as they are.
_OPENING: dict[str, frozenset[str]] = {
    "cs": _table("otevřít otevírat otevřený otevřeno zavřít zavírat zavřený zavřeno"),
    "sk": _table("otvoriť otvárať otvorený otvorené zatvoriť zatvárať zatvorený zatvorené"),
    "pl": _table("otworzyć otwierać otwarty zamknąć zamykać zamknięty"),
    "de": _table("öffnen geöffnet offen schließen geschlossen"),
    "ru": _table("открыть открывать открыт открытый закрыть закрывать закрыт закрытый"),
    "en": _table("open opens opened close closes closed"),
}


# Being somewhere: in a question for a place ("Kde sídlí klinika?") they name what the place is
# of, which a passage gives as an address ("Nádražní 31, Písek") without the verb.
_LOCATING: dict[str, frozenset[str]] = {
    "cs": _table("sídlit nacházet nalézat ležet bydlet umístit umístěný"),
    "sk": _table("sídliť nachádzať ležať bývať"),
    "pl": _table("mieścić znajdować leżeć mieszkać"),
    "de": _table("befinden liegen wohnen sitzen"),
    "ru": _table("находиться располагаться лежать жить"),
    "en": _table("located situated lie lies live lives"),
}


# Shell nouns: abstract nouns that name the relation a question asks about, not its topic.
# "Jaký je důvod, proč se používají GPU?" asks what "Proč se používají GPU?" asks, and a
# passage gives the reason ("protože", "díky") without the noun, as it gives a price without
# "cena"; so with "cíl", "výhoda", "rozdíl", "princip". Where a passage has the noun, it is
# evidence. Czech, where it was measured.
_SHELLS: dict[str, frozenset[str]] = {
    "cs": _table(
        """důvod příčina cíl účel smysl princip podstata výhoda nevýhoda přínos rozdíl vztah
        vliv význam motiv"""
    ),
}
# ... and the adjectives that rank what a shell noun names ("hlavní důvod", "nejdůležitější
# výhoda"): the question asks the passage to choose, the passage need not rank
_RANKING: dict[str, frozenset[str]] = {
    "cs": _table("hlavní základní důležitý klíčový zásadní podstatný primární"),
}


def is_shell(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a question word is a shell noun (``_SHELLS``)."""
    return _among(_SHELLS.get(lang, frozenset()), lemmas, form)


def asks_through_a_shell(forms: Sequence[str], lemmas: Sequence[Iterable[str]], lang: str) -> bool:
    """Whether a question for something has a shell noun ("Jaký je hlavní důvod ...?" asks what
    "Proč ...?" asks): :func:`names_the_answer`'s ``shelled``.

    Args:
        forms: every word of the question, unaccented, in order.
        lemmas: each word's lemmas, in the same order.
    """
    return asks_for_something(forms, lang) and any(
        is_shell(word_lemmas, form, lang) for form, word_lemmas in zip(forms, lemmas, strict=True)
    )


def names_the_answer(
    kind: AnswerType | None,
    lemmas: Iterable[str],
    form: str,
    lang: str,
    timed: bool = False,
    shelled: bool = False,
) -> bool:
    """Whether a question word names the kind of answer its question expects, so that a passage
    need not hold it: "telefonní číslo" of a contact question, "cena" or "koupit" of a price
    question, "otevřeno" of a question for a time or at a time (``timed``: a question whether
    "Máte otevřeno v sobotu?" is answered by the hours), "sídlí" of a question for a place (as
    "dlouho" of "jak dlouho" is no content word) and, in a question for something that has a
    shell noun (``shelled``: "Jaký je hlavní důvod ...?"), the shell noun and an adjective that
    ranks ("hlavní"). A statement to verify says what it says with them ("Horko má vliv na
    ..."), and so does a question whether."""
    lemmas = tuple(lemmas)
    if shelled and (
        is_shell(lemmas, form, lang) or _among(_RANKING.get(lang, frozenset()), lemmas, form)
    ):
        return True
    if kind in CONTACT_TYPES:
        return is_contact_word(lemmas, form, lang)
    if kind in ("date", "time") or (kind is None and timed):
        return _among(_OPENING.get(lang, frozenset()), lemmas, form)
    if kind == "place":
        return _among(_LOCATING.get(lang, frozenset()), lemmas, form)
    return kind == "amount" and is_price_word(lemmas, form, lang)


# "How many" asks for a count of things, never a sum, whatever else the question says ("How
# many days of paid leave ...?"); Czech "kolik", Russian "сколько" and Polish "ile" ask for
# either, so there the price cues decide. A sum answers a count too (its token is a number).
COUNT_PHRASES: dict[str, frozenset[tuple[str, ...]]] = {
    "en": frozenset({("how", "many")}),
    "de": frozenset({("wie", "viele")}),
}

_NUMBER_WORDS = _table(
    """
    jeden jedna jedno jednoho jedné jednomu jednom jedním jednu jedni jedny jedněch jedněm
    jedněmi dva dvě dvou dvěma tři tří třech třemi čtyři čtyř čtyřech
    pět pěti šest šesti sedm sedmi osm osmi devět devíti deset deseti jedenáct dvanáct třináct
    čtrnáct patnáct dvacet dvaceti třicet čtyřicet padesát sto sta set tisíc tisíce milion
    půl polovina čtvrt pětadvacet pětadvaceti osmnáct osmnácti devatenáct šestnáct sedmnáct
    dvakrát třikrát jednou
    štyri päť šesť sedem osem deväť desať dvadsať sto tisíc
    dwa dwie trzy cztery pięć sześć siedem osiem dziewięć dziesięć sto tysiąc
    eins zwei drei vier fünf sechs sieben acht neun zehn zwölf zwanzig hundert tausend
    один одна два две три четыре пять шесть семь восемь девять десять сто тысяча
    one two three four five six seven eight nine ten twelve twenty hundred thousand million
    """
)
# Words that multiply the number before them ("11 tisíc", "2,5 milionu", "3 mld."): word
# beginnings (every inflected form) and abbreviations (exact), as spelled.
_MULTIPLIERS: dict[str, tuple[tuple[str, int], ...]] = {
    "cs": (("tisíc", 10**3), ("milion", 10**6), ("miliard", 10**9), ("bilion", 10**12)),
    "sk": (("tisíc", 10**3), ("milión", 10**6), ("milion", 10**6), ("miliard", 10**9)),
    "pl": (("tysiąc", 10**3), ("tysięc", 10**3), ("milion", 10**6), ("miliard", 10**9)),
    "de": (("tausend", 10**3), ("million", 10**6), ("milliarde", 10**9), ("billion", 10**12)),
    "ru": (("тысяч", 10**3), ("миллион", 10**6), ("миллиард", 10**9)),
    "en": (("thousand", 10**3), ("million", 10**6), ("billion", 10**9), ("trillion", 10**12)),
}
_MULTIPLIER_ABBREVIATIONS: dict[str, tuple[tuple[str, int], ...]] = {
    "cs": (("tis", 10**3), ("mil", 10**6), ("mld", 10**9)),
    "sk": (("tis", 10**3), ("mil", 10**6), ("mld", 10**9)),
    "pl": (("tys", 10**3), ("mln", 10**6), ("mld", 10**9)),
    "de": (("tsd", 10**3), ("mio", 10**6), ("mrd", 10**9)),
    "ru": (("тыс", 10**3), ("млн", 10**6), ("млрд", 10**9)),
    "en": (("k", 10**3), ("mn", 10**6), ("bn", 10**9)),
}
MULTIPLIERS = {lang: tuple((form_of(w), v) for w, v in rows) for lang, rows in _MULTIPLIERS.items()}
MULTIPLIER_ABBREVIATIONS = {
    lang: {form_of(w): v for w, v in rows} for lang, rows in _MULTIPLIER_ABBREVIATIONS.items()
}
# How digits are grouped and where the decimals start: English "11,000.5", elsewhere "11 000,5"
# or "11.000,5" (a thin or no-break space too).
_DECIMAL_COMMA = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:([ \u00a0\u202f.])\d{3}(?:\2\d{3})*)|\d+)(?:,(\d+))?(?![\d]|[.,]\d)"
)
_DECIMAL_POINT = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:([ \u00a0\u202f,])\d{3}(?:\2\d{3})*)|\d+)(?:\.(\d+))?(?![\d]|[.,]\d)"
)
_NEXT_WORD = re.compile(r"[ \u00a0\u202f]?([^\W\d_]+)")


def multiplier(word: str, lang: str) -> int | None:
    """The value a word multiplies the number before it by ("milionu" -> 10**6), or None."""
    form = form_of(word)
    if form in MULTIPLIER_ABBREVIATIONS.get(lang, {}):
        return MULTIPLIER_ABBREVIATIONS[lang][form]
    for stem, value in MULTIPLIERS.get(lang, ()):
        if form.startswith(stem):
            return value
    return None


def number_values(text: str, lang: str) -> list[tuple[str, int]]:
    """Numbers written with digit groups or a multiplier word, each with its integer value.

    "11 000", "11.000", "11 tisíc" and "11 tis." are all 11000 in Czech; "2,5 milionu" is
    2500000; English groups with commas ("11,000") and writes decimals with a point. A plain
    number ("11") and a value that is not whole ("2,5") are left out: their digits are their key.

    Returns:
        (the expression as written, its value) in the order of the text.
    """
    pattern = _DECIMAL_POINT if lang == "en" else _DECIMAL_COMMA
    out = []
    for m in pattern.finditer(text):
        whole, grouped, decimals = m.group(1), m.group(2), m.group(3) or ""
        digits = re.sub(r"\D", "", whole)
        end = m.end()
        factor = 1
        word = _NEXT_WORD.match(text, end)
        if word and (by := multiplier(word.group(1), lang)):
            factor, end = by, word.end()
        if factor == 1 and not grouped:
            continue
        scaled = int(digits + decimals) * factor
        value, rest = divmod(scaled, 10 ** len(decimals))
        if rest == 0:
            out.append((text[m.start() : end], value))
    return out


# Number words (lemmas, as spelled) with the value a digit writes: "4" of a question is "vier"
# or "čtyřech" of a passage. Cardinals from two (one is also an article or a pronoun: "ein",
# "jeden", "one"), counted on from the first, then the tens and a hundred with their values
# ("osmdesát=80"), and ordinals ("2. světová válka" is "druhá světová válka"); "second" is a
# unit of time as well.
_VALUED_WORDS: dict[str, str] = {
    "cs": """dva tři čtyři pět šest sedm osm devět deset jedenáct dvanáct třináct čtrnáct
        patnáct šestnáct sedmnáct osmnáct devatenáct dvacet=20 třicet=30 čtyřicet=40 padesát=50 šedesát=60 sedmdesát=70 osmdesát=80
        devadesát=90 sto=100
        první:1 druhý:2 třetí:3 čtvrtý:4 pátý:5 šestý:6 sedmý:7 osmý:8 devátý:9 desátý:10
        jedenáctý:11 dvanáctý:12 třináctý:13 čtrnáctý:14 patnáctý:15 šestnáctý:16
        sedmnáctý:17 osmnáctý:18 devatenáctý:19 dvacátý:20 třicátý:30 čtyřicátý:40
        padesátý:50 šedesátý:60 sedmdesátý:70 osmdesátý:80 devadesátý:90 stý:100""",
    "sk": """dva tri štyri päť šesť sedem osem deväť desať jedenásť dvanásť
        dvadsať=20 tridsať=30 štyridsať=40 päťdesiat=50 šesťdesiat=60 sedemdesiat=70
        osemdesiat=80 deväťdesiat=90 sto=100
        prvý:1 druhý:2 tretí:3 štvrtý:4 piaty:5 šiesty:6 siedmy:7 ôsmy:8 deviaty:9 desiaty:10""",
    "pl": """dwa trzy cztery pięć sześć siedem osiem dziewięć dziesięć jedenaście dwanaście
        dwadzieścia=20 trzydzieści=30 czterdzieści=40 pięćdziesiąt=50 sześćdziesiąt=60
        siedemdziesiąt=70 osiemdziesiąt=80 dziewięćdziesiąt=90 sto=100
        pierwszy:1 drugi:2 trzeci:3 czwarty:4 piąty:5 szósty:6 siódmy:7 ósmy:8""",
    "de": """zwei drei vier fünf sechs sieben acht neun zehn elf zwölf
        zwanzig=20 dreißig=30 vierzig=40 fünfzig=50 sechzig=60 siebzig=70 achtzig=80
        neunzig=90 hundert=100
        erst:1 zweit:2 dritter:3 dritt:3 viert:4 fünft:5 sechst:6 siebt:7 acht:8 neunt:9
        zehnter:10 zehnt:10""",
    "ru": """два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать
        двадцать=20 тридцать=30 сорок=40 пятьдесят=50 шестьдесят=60 семьдесят=70
        восемьдесят=80 девяносто=90 сто=100
        первый:1 второй:2 третий:3 четвертый:4 пятый:5 шестой:6 седьмой:7 восьмой:8
        девятый:9 десятый:10""",
    "en": """two three four five six seven eight nine ten eleven twelve
        twenty=20 thirty=30 forty=40 fifty=50 sixty=60 seventy=70 eighty=80 ninety=90
        hundred=100
        first:1 third:3 fourth:4 fifth:5 sixth:6 seventh:7 eighth:8 ninth:9 tenth:10""",
}


def _valued(words: str, ordinals: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    cardinal = 2
    for entry in words.split():
        word, ordinal, value = entry.partition(":")  # "druhý:2" is an ordinal
        if not ordinal:
            word, valued, value = entry.partition("=")  # "osmdesát=80": a cardinal's value
            if not valued:
                value, cardinal = str(cardinal), cardinal + 1
        if bool(ordinal) is ordinals:
            out[form_of(word)] = value
    return out


# lemma -> its value in digits; an ordinal holds a number for a key, but no reader counts it as
# the answer to "how many" ("druhý" is also "other")
CARDINAL_VALUES = {lang: _valued(words, False) for lang, words in _VALUED_WORDS.items()}
ORDINAL_VALUES = {lang: _valued(words, True) for lang, words in _VALUED_WORDS.items()}


def cardinal_value(lemmas: Iterable[str], lang: str) -> str | None:
    """The value, in digits, of a cardinal number word ("osmdesát" -> "80"), or None: a
    question's number word meets the passage's digits. Not an ordinal's: "druhý" is also
    "other"."""
    table = CARDINAL_VALUES.get(lang, {})
    return next((table[lemma] for lemma in lemmas if lemma in table), None)


def ordinal_value(lemmas: Iterable[str], lang: str) -> str | None:
    """The value, in digits, of an ordinal above ten ("šedesátých" of "v šedesátých letech" ->
    "60"), or None: those name nothing else, where "druhý" is also "other" and "první" also
    "first ever"."""
    table = ORDINAL_VALUES.get(lang, {})
    return next((table[lemma] for lemma in lemmas if int(table.get(lemma, 0)) > 10), None)


# An age or a span in years said by one adjective: Czech compounds a numeral's genitive with
# "-letý" ("desetiletý syn", "pětiletá záruka", "10letý"), German a numeral with "-jährig"
# ("zehnjährige Tochter"). It says so many years as "10 let" does, which a passage's range of
# years holds ("Do vířivky nesmějí děti do 12 let"; rag.language.ranges).
_AGED = {
    # not "-letí": "století" and "desetiletí" are the nouns of a century and a decade
    "cs": (re.compile(r"(?P<n>\w+?)-?let(?:ý|á|é|ého|ému|ém|ým|ých|ými|ou)"), "let"),
    "de": (re.compile(r"(?P<n>\w+?)-?jährig(?:e|er|en|es|em)?"), "Jahre"),
}


def aged(surface: str, lang: str) -> tuple[int, str] | None:
    """The number of years an adjective of age or span names ("desetiletého": 10) and the word
    for years in its language, or None."""
    pattern, unit = _AGED.get(lang, (None, ""))
    m = pattern.fullmatch(surface.lower()) if pattern is not None else None
    if m is None:
        return None
    number = m.group("n")
    if number.isdigit():
        value: str | None = number
    else:
        value = cardinal_value([unaccent(x) for x in lemma_candidates(number, lang, False)], lang)
    return (int(value), unit) if value and 0 < int(value) <= 150 else None


# A multiplicative numeral is a cardinal's stem and a suffix that says "times": Czech and
# Slovak "šestkrát", "dvakrát", German "sechsmal", "zwanzigmal". It answers "kolikrát" /
# "wie oft" as its cardinal answers "kolik".
_TIMES = {"cs": "krat", "sk": "krat", "de": "mal"}


def multiplicative(form: str, lang: str) -> str | None:
    """The value, in digits, of a multiplicative numeral given its unaccented form
    ("sestkrat" -> "6", "dreimal" -> "3"), or None."""
    suffix = _TIMES.get(lang)
    if suffix is None or not form.endswith(suffix):
        return None
    return CARDINAL_VALUES.get(lang, {}).get(form[: -len(suffix)])


def word_number(lemmas: Iterable[str], lang: str) -> str | None:
    """The value, in digits, of a number word given its lemmas ("čtyřech" -> "4", "druhé" ->
    "2"), or None."""
    for table in (CARDINAL_VALUES.get(lang, {}), ORDINAL_VALUES.get(lang, {})):
        for lemma in lemmas:
            if lemma in table:
                return table[lemma]
    return None


# A span of years is a duration ("how long") as well as a date: a preposition pair around two
# years, a year word ("roku", "Jahr", "года", "гг.") or two allowed between ("od roku 1870 do
# roku 1939", "von 1870 bis 1939", "с 1870 по 1939 год", "from 1870 to 1939"), or a dash between
# two years, the second one possibly shortened to its last two digits ("1922–26", "1620—21").
_SPAN_WORDS: dict[str, tuple[tuple[str, str], ...]] = {
    "cs": (("od", "do"), ("mezi", "a"), ("v letech", "až"), ("v letech", "a")),
    "sk": (("od", "do"), ("medzi", "a"), ("v rokoch", "až"), ("v rokoch", "a")),
    "pl": (("od", "do"), ("między", "a"), ("w latach", "a")),
    "de": (("von", "bis"), ("zwischen", "und"), ("ab", "bis"), ("seit", "bis")),
    "ru": (("с", "по"), ("с", "до"), ("от", "до"), ("между", "и")),
    "en": (("from", "to"), ("from", "until"), ("from", "till"), ("between", "and")),
}
_SPAN_YEAR = r"1[0-9]{3}|20[0-9]{2}"
_SPAN_FILLER = r"(?:[^\W\d_]{1,6}\.?\s+){0,2}"  # "roku", "dem Jahr", "года", "гг."


def _span_pattern(pairs: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    alternatives = [
        rf"{re.escape(a)}\s+{_SPAN_FILLER}(?P<a{i}>{_SPAN_YEAR})(?![\d,.]\d)\s+{_SPAN_FILLER}"
        rf"{re.escape(b)}\s+{_SPAN_FILLER}(?P<b{i}>{_SPAN_YEAR})(?!\d)"
        for i, (a, b) in enumerate(pairs)
    ]
    return re.compile(r"(?i)(?<!\w)(?:" + "|".join(alternatives) + ")")


_SPANS = {lang: _span_pattern(pairs) for lang, pairs in _SPAN_WORDS.items()}
_DASH_SPAN = re.compile(
    r"(?<![\d,.])(1[0-9]{3}|20[0-9]{2})\s?[-\u2010-\u2015]\s?(\d{4}|\d{2})(?![\d]|[,.]\d)"
)


def year_spans(text: str, lang: str) -> list[tuple[str, int, int]]:
    """Spans of years in ``text``: (the span as written, its first year, its last year).

    The last year comes after the first; a shortened one takes the first's century
    ("1922–26" -> 1922, 1926). A dash between two numbers that are no such years (a score
    "20-18", a page range "112-118") is no span.
    """
    out = []
    pattern = _SPANS.get(lang)
    for m in pattern.finditer(text) if pattern is not None else ():
        first, last = (int(v) for k, v in m.groupdict().items() if v is not None)
        if last > first:
            out.append((m.group(0), first, last))
    for m in _DASH_SPAN.finditer(text):
        first, end = int(m.group(1)), m.group(2)
        last = int(end) if len(end) == 4 else first // 100 * 100 + int(end)
        if last > first:
            out.append((m.group(0), first, last))
    return out


# A sum given as a share of a price ("zálohu 30 % z ceny pobytu", "zálohu polovinu ceny"): the
# passage says what is paid as a currency's amount would, and the share is its number.
_SHARE_OF_PRICE: dict[str, re.Pattern[str]] = {
    "cs": re.compile(
        r"(?i)(\d+\s?%|(?:\d+\s+)?\bprocent\w*|\bpolovin\w*|\btřetin\w*|\bčtvrtin\w*)\s+(?:z\s+)?"
        r"(?:ceny|částky)\b"
    ),
}

_CURRENCY = re.compile(
    r"(?i)(?:€|\$|£|\bkč\b|\bczk\b|\beur\b|\busd\b|\bkorun|\beur[ao]?\b|\bdolar|\bdollar"
    r"|\bzł|\bzłot|\bруб|\bевро|\bдоллар|\bfranc|\bpound|\bcrown)"
)
_DIGIT = re.compile(r"\d")
# the words that multiply a sum's number ("1,5 mil. Kč", "3 tisíce korun")
_SUM_MULTIPLIERS = _table(
    """tis tisíc tisíce tisících mil milion miliony milionů mld miliarda miliardy miliard
    tausend mio mrd тыс млн млрд thousand million billion"""
)
_NUMBER_TOKEN = re.compile(r"\d[\d.]*")
_SIGNED_SUM = re.compile(r"[€$£]\s?(\d[\d\s.,]*)")


def sum_numbers(text: str) -> frozenset[str]:
    """The number tokens of a text (unaccented forms, as :func:`sentence_classes` gives them)
    written as sums of money: the numbers and multipliers just before a currency ("za 850
    korun", "2 000 Kč", "1,5 mil. Kč") and after its sign ("€ 20")."""
    tokens = tokenize(text)
    forms = [unaccent(t.lower()).replace(",", ".") for t in tokens]
    out: set[str] = set()
    for i, token in enumerate(tokens):
        if not _CURRENCY.match(token):
            continue
        j = i - 1
        while j >= 0 and (_NUMBER_TOKEN.fullmatch(forms[j]) or forms[j] in _SUM_MULTIPLIERS):
            out.add(forms[j])
            j -= 1
    for m in _SIGNED_SUM.finditer(text):
        out.update(f.replace(",", ".").strip(".") for f in m.group(1).split() if f.strip(".,"))
    return frozenset(out)


_YEAR = re.compile(r"(?<![\d,.])(?:1[0-9]{3}|20[0-9]{2})(?![\d,])")
_DAY_MONTH = re.compile(r"\b\d{1,2}\.\s?(?:\d{1,2}\.|[^\W\d_]{3,})")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_CLOCK = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|h)\b", re.IGNORECASE)
_HOURS = _table(
    "hodina hodin hodiny hodině hodinu uhr o'clock часов часа час godzina godzin godzinie"
)
_TIME_UNITS = _table(
    """sekunda sekund minuta minut minuty minutu hodina hodin hodiny hodinu den dny dní dnů dnu
    dne týden týdny týdnů týdne měsíc měsíce měsíců měsíci rok roky roků let roku směna směny
    směnu dnech dnům dnem týdnech týdnu týdnem měsících měsícem letech rokem hodinách hodinou
    minutách minutou sekundách deň dni dní týždeň mesiac rokov
    sekunde minute minuten stunde stunden tag tage tagen woche wochen monat monate monaten
    jahr jahre jahren
    секунда минута минут час часа часов день дня дней неделя недели недель месяц месяца
    месяцев год года лет
    sekunda minuta minut godzina godzin dzień dni tydzień tygodni miesiąc miesięcy rok lat
    second seconds minute minutes hour hours day days week weeks month months year years"""
)
# A time told by an event's beginning or end: "do zahájení kurzu", "před začátkem směny", "po
# skončení zápasu", "do konce měsíce" answer "do kdy" and "kdy" as a date does. The prepositions
# of time and the nouns of an event's bounds, as written (unaccented forms).
_BOUND_PREPOSITIONS: dict[str, frozenset[str]] = {"cs": frozenset({"do", "pred", "po", "od"})}
_EVENT_BOUNDS: dict[str, frozenset[str]] = {
    "cs": _table(
        """zahájení zahájením začátku začátkem začátek konce koncem konec ukončení ukončením
        skončení skončením"""
    )
}
_EVERY: dict[str, frozenset[str]] = {
    "cs": _table("každý každá každé každou každého každém každým každí"),
}
_DATE_WORDS = _table(
    """leden ledna lednu únor února únoru březen března březnu duben dubna dubnu květen května
    květnu červen června červnu červenec července červenci srpen srpna srpnu září říjen října
    říjnu listopad listopadu prosinec prosince prosinci
    pondělí úterý středa středu středy čtvrtek čtvrtku pátek pátku sobota sobotu soboty neděle
    neděli víkend víkendu denně týdně měsíčně ročně dnes zítra včera ráno večer poledne
    dopoledne odpoledne půlnoc půlnoci ihned okamžitě jaro jara léto léta podzim zima
    zimy století
    januára februára marca apríla mája júna júla augusta septembra októbra novembra decembra
    pondelok utorok streda štvrtok piatok sobota nedeľa
    stycznia lutego marca kwietnia maja czerwca lipca sierpnia września października
    listopada grudnia poniedziałek wtorek środa czwartek piątek sobota niedziela
    januar februar märz april mai juni juli august september oktober november dezember
    montag dienstag mittwoch donnerstag freitag samstag sonntag jahrhundert jahrhunderts
    jahrhunderten jahrtausend jahrtausends tisíciletí
    января февраля марта апреля мая июня июля августа сентября октября ноября декабря
    понедельник вторник среда четверг пятница суббота воскресенье век века веке веку веков
    тысячелетие тысячелетия
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday century centuries daily weekly today
    tomorrow morning evening noon"""
)
# Lemmas that name a person or a body of people without a proper name.
PERSON_CUES: dict[str, frozenset[str]] = {
    "cs": _table(
        """ředitel ředitelka vedoucí kolega kolegyně oddělení komise vedení tým zaměstnanec
        správce manažer asistent asistentka recepční personalista mistr technik ostraha
        výrobce dodavatel lékař starosta zakladatel majitel nadřízený personální hasič
        člen předseda recepce podatelna úřad firma společnost služba helpdesk zástupce rodič"""
    ),
    "sk": _table("riaditeľ vedúci kolega kolegyňa oddelenie komisia vedenie tím zamestnanec"),
    "pl": _table("dyrektor kierownik kolega koleżanka dział komisja zarząd zespół pracownik"),
    "de": _table(
        "direktor leiter leiterin kollege kollegin abteilung kommission vorstand team gründer"
    ),
    "ru": _table("директор руководитель коллега отдел комиссия руководство команда основатель"),
    "en": _table(
        "director manager head colleague department committee board team founder staff reception"
    ),
}
# The positions among them: a person holds one, and a question for a person by the position
# ("Jak se jmenuje vedoucí podpory?", "Kdo je předseda výboru?") asks for the one who holds it,
# so the position is what the answer must be, however common the word (is_position).
POSITIONS: dict[str, frozenset[str]] = {
    "cs": _table(
        """ředitel ředitelka vedoucí správce správkyně manažer manažerka personalista
        personalistka mistr starosta starostka zakladatel zakladatelka majitel majitelka
        nadřízený předseda předsedkyně jednatel jednatelka šéf šéfová"""
    ),
    "sk": _table("riaditeľ riaditeľka vedúci správca predseda starosta majiteľ"),
    "de": _table("direktor direktorin leiter leiterin vorsitzende gründer gründerin inhaber"),
    "ru": _table("директор руководитель председатель основатель владелец"),
    "en": _table("director manager head chair chairman founder owner"),
}
# The answer types of a question for a person.
PERSON_TYPES = frozenset({"person", "name"})


def is_position(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a question word names a position a person holds (its lemma or form is one)."""
    return _among(POSITIONS.get(lang, frozenset()), lemmas, form)


# The verbs of heading something: who does it holds the position of its head ("Kdo vede
# účtárnu?" asks who the head of accounts is), as a position noun's question asks.
LEADING: dict[str, frozenset[str]] = {
    "cs": _table("vést řídit šéfovat velet předsedat"),
    "de": _table("leiten führen"),
    "ru": _table("руководить возглавлять"),
    "en": _table("lead head chair"),
}


def is_leading(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a question word is a verb of heading something (its lemma or form is one)."""
    return _among(LEADING.get(lang, frozenset()), lemmas, form)


# Lemmas that name a place without a proper name: the rooms of a building, the buildings and
# places of a town, the places outdoors, and the places online a passage sends a reader to.
PLACE_CUES: dict[str, frozenset[str]] = {
    "cs": _table(
        """budova patro přízemí místnost kancelář recepce sklad hala ulice náměstí areál brána
        parkoviště jídelna dům středisko město vchod dvůr chodba suterén sídlo adresa portál
        intranet web stránka nástěnka tabule sál louka park zahrada kuchyň shromaždiště
        aplikace trezor složka pobočka sklep půda garáž kotelna prádelna sušárna kolárna
        schodiště kuchyňka koupelna toaleta umývárna šatna učebna tělocvična dílna laboratoř
        čekárna pokladna výdejna knihovna kavárna restaurace bufet obchod prodejna pošta hotel
        nemocnice nádraží zastávka radnice úřad kostel hřiště koupaliště bazén pláž břeh molo
        přístav nábřeží les náves pavilon"""
    ),
    "sk": _table("budova poschodie miestnosť kancelária recepcia sklad hala ulica námestie areál"),
    "pl": _table("budynek piętro pokój biuro recepcja magazyn hala ulica plac teren"),
    "de": _table("gebäude stock etage raum büro empfang lager halle straße platz gelände stadt"),
    "ru": _table("здание этаж комната офис приёмная склад зал улица площадь город"),
    "en": _table(
        "building floor room office reception warehouse hall street square site city town"
    ),
}

_VERB_ENDINGS: dict[str, tuple[str, ...]] = {
    "cs": ("ovat", "nout", "at", "et", "it", "yt", "ci", "ct"),
    "sk": ("ovat", "nut", "at", "et", "it", "yt", "ct"),
    "pl": ("c",),  # unaccented -ć
    "ru": ("t", "ti", "ch", "tsia", "tsa"),  # -ть, -ти, -чь, -ться after transliteration
    "de": ("en", "ern", "eln"),
}


def answer_type(forms: Iterable[str], lemmas: Iterable[str], lang: str) -> AnswerType | None:
    """The answer type a question expects, from its words in order.

    Args:
        forms: the question's words, unaccented (``Token.form``), every word incl. stopwords.
        lemmas: the question's lemma bodies (for price cues).
        lang: the question's language.

    Returns:
        The type, or None (yes/no and other questions: no constraint).
    """
    words = list(forms)
    lemmas = list(lemmas)
    found = _interrogative_type(words, lemmas, lang)
    # a contact asked for ("Jaké je telefonní číslo ...", "Kam volat ...") is an address or a
    # number to call, whatever the interrogative; "kdo" and "kdy" keep their person and date;
    # a question what something means asks for none ("Co znamenají ta čísla na vodoměru?")
    if found in (None, "number", "place", "name") and _MEANING.get(lang, frozenset()).isdisjoint(
        lemmas
    ):
        return contact_question(words, lemmas, lang) or found
    return found


# the verbs of meaning: a question what a thing means asks for its meaning, never a contact
_MEANING: dict[str, frozenset[str]] = {
    "cs": _table("znamenat"),
    "sk": _table("znamenať"),
    "pl": _table("znaczyć oznaczać"),
    "de": _table("bedeuten"),
    "ru": _table("означать значить"),
    "en": _table("mean"),
}


# The spoken forms of the interrogative pronouns, as the phrases write them ("Kterej den smí pes
# do kanceláře?" asks "který den"), unaccented: a chat question says "kterej", "kerej", "jakej".
_WRITTEN_INTERROGATIVES: dict[str, dict[str, str]] = {
    "cs": {
        "kterej": "ktery",
        "kerej": "ktery",
        "kera": "ktera",
        "kere": "ktere",
        "kerou": "kterou",
        "kteryho": "ktereho",
        "keryho": "ktereho",
        "kterymu": "kteremu",
        "kterejch": "kterych",
        "jakej": "jaky",
        "jakyho": "jakeho",
        "jakymu": "jakemu",
        "jakejch": "jakych",
    }
}


def _first_phrase(words: list[str], lang: str) -> tuple[int, int, AnswerType] | None:
    """The interrogative phrase that comes first, the longer one where two start together: its
    position, its length negated, and the answer type it asks for. A spoken interrogative is
    read as written (``_WRITTEN_INTERROGATIVES``)."""
    spoken = _WRITTEN_INTERROGATIVES.get(lang)
    if spoken:
        words = [spoken.get(w, w) for w in words]
    starting = _PHRASES_BY_FIRST_WORD.get(lang, {})
    for at, word in enumerate(words):
        for phrase, kind in starting.get(word, ()):  # longest first
            n = len(phrase)
            if tuple(words[at : at + n]) == phrase:
                return at, -n, kind
    return None


# Adverbs of precision that modify the interrogative right before them ("Kde přesně vás
# najdu?", "Kolik přibližně zaplatím?"): they say how exact the answer should be, not what the
# passage is about.
_PRECISION: dict[str, frozenset[str]] = {
    "cs": _table("přesně přibližně"),
    "sk": _table("presne približne"),
    "de": _table("genau ungefähr"),
    "en": _table("exactly approximately roughly"),
}


def asking_words(forms: Iterable[str], lang: str) -> frozenset[str]:
    """The words of the interrogative phrase a question asks with ("jak" and "daleko" of "Jak
    daleko je to na vlak?"), unaccented, and an adverb of precision right after it ("přesně"
    of "Kde přesně vás najdu?"): they say what kind of answer is asked for, not what the
    passage is about."""
    words = list(forms)
    first = _first_phrase(words, lang)
    if not first:
        return frozenset()
    end = first[0] - first[1]
    if end < len(words) and words[end] in _PRECISION.get(lang, frozenset()):
        end += 1
    return frozenset(words[first[0] : end])


# A cue lemma that is also a noun's: "stát" costs in "Kolik stojí" and is a state in "Kolik
# států", so it cues a sum only where a form of the verb says so: the infinitive ("Kolik to
# bude stát?") or a form beginning as the present's and the past's do ("stojí", "stál"),
# unaccented.
_VERBAL_CUES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "cs": {"stat": ("stat", ("stoj", "stal"))},
}


def _sum_cued(words: list[str], lemmas: list[str], lang: str) -> bool:
    """Whether a question's words cue a sum of money (:data:`_SUM_CUES`)."""
    verbal = _VERBAL_CUES.get(lang, {})
    for lemma in _SUM_CUES.get(lang, frozenset()).intersection(lemmas):
        forms = verbal.get(lemma)
        if forms is None or any(w == forms[0] or w.startswith(forms[1]) for w in words):
            return True
    return False


def _interrogative_type(words: list[str], lemmas: list[str], lang: str) -> AnswerType | None:
    """The answer type the question's interrogative phrase asks for."""
    first = _first_phrase(words, lang)
    if first is None:
        return None
    untyped = UNTYPED_INTERROGATIVES.get(lang, frozenset())
    if not untyped.isdisjoint(words[: first[0]]):
        return None  # "Что случается, когда ...": the typed word opens a clause of its own
    found: AnswerType | None = first[2]
    phrase = tuple(words[first[0] : first[0] - first[1]])
    if (
        found == "number"
        and phrase not in COUNT_PHRASES.get(lang, frozenset())
        and _sum_cued(words, lemmas, lang)
    ):
        # what "kolik" counts says what is asked, whatever verb of paying the question has:
        # "Od kolika let platí dítě?" asks for years, not a sum
        if counted_unit(words, lang) is not None:
            return "number"
        return "amount"
    return found


# The phrases that ask how many of something, and the endings of the adjectives that may stand
# between them and the thing counted ("kolik repasovaných telefonů", "сколько новых школ"),
# unaccented.
_COUNTING: dict[str, frozenset[tuple[str, ...]]] = {
    "cs": frozenset({("kolik",)}),
    "sk": frozenset({("kolko",)}),
    "pl": frozenset({("ile",)}),
    "de": frozenset({("wie", "viele"), ("wie", "viel"), ("wieviel",)}),
    "ru": frozenset({("skolko",)}),
    "en": frozenset({("how", "many")}),
}
_PLURAL_ADJECTIVE = {
    "cs": ("ych", "ich"),
    "sk": ("ych", "ich"),
    "pl": ("ych", "ich"),
    "ru": ("ykh", "ikh"),
}


def counted_word(forms: Sequence[str], lang: str) -> int | None:
    """The position of the thing a "how many" question counts: the first word after the
    counting phrase that is not an adjective agreeing with it ("Kolik repasovaných telefonů" ->
    "telefonů", "Wie viele Siedler" -> "Siedler"); None without such a phrase. The caller decides
    whether the word there is a content word (a verb or a frame word counts nothing: "Kolik
    stojí", "Kolik vydělává")."""
    words = list(forms)
    for phrase in _COUNTING.get(lang, ()):
        n = len(phrase)
        at = next((i for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == phrase), None)
        if at is None:
            continue
        for j in range(at + n, len(words)):
            if not words[j].endswith(_PLURAL_ADJECTIVE.get(lang, ())):
                return j
        return None
    return None


# Words of interrogative phrases that are content words elsewhere ("vstup na jeden den", "Musím
# platit předem?", "výkonná moc"): the interrogative's only inside the question's own phrase
# (asking_words), not wherever a question holds them.
_IN_PHRASE_ONLY = frozenset({"den", "dny", "dne", "dopredu", "predem", "moc"})


@lru_cache(maxsize=16)
def interrogative_forms(lang: str) -> frozenset[str]:
    """Words of the interrogative phrases of ``lang`` and of every other language's "how many"
    (a short question is easily taken for the wrong language): never content words, but those
    that are content words outside their phrase (_IN_PHRASE_ONLY)."""
    words = {w for phrase, _ in QUESTION_TYPES.get(lang, ()) for w in phrase}
    for rows in QUESTION_TYPES.values():
        words.update(w for phrase, kind in rows for w in phrase if kind == "number")
    return frozenset(words - _IN_PHRASE_ONLY)


# Lemmas (and the forms a lemmatizer may leave as they are) that name a time of a closed calendar
# set: a day of the week, a month, a season, the weekend, a holiday, a part of the day, and their
# adjectives. A passage that lacks one names another member of the set or no time at all, never
# the same time in other words: no vector can stand in for it (rag.search.answerability).
# Ambiguous words are left out: Russian среда is also an environment, English march, spring and
# fall are other words too.
CALENDAR_WORDS = _table(
    """pondělí úterý středa čtvrtek pátek sobota neděle víkend víkendový leden únor březen duben
    květen červen červenec srpen září říjen listopad prosinec lednový únorový březnový dubnový
    květnový červnový červencový srpnový zářijový říjnový listopadový prosincový jaro léto
    podzim zima jarní letní podzimní zimní vánoce vánoční velikonoce velikonoční silvestr
    silvestrovský ráno dopoledne poledne odpoledne večer noc ranní dopolední polední odpolední
    večerní noční sobotní nedělní páteční
    ledna února března dubna května června července srpna října listopadu prosince soboty sobotu
    neděli pátku čtvrtku středu víkendu zimě létě jaře podzimu vánocích velikonocích
    montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag wochenende januar
    februar märz april mai juni juli august september oktober november dezember frühling
    frühjahr sommer herbst winter weihnachten ostern silvester vormittag mittag nachmittag abend
    nacht
    понедельник вторник четверг пятница суббота воскресенье выходные январь февраль март апрель
    май июнь июль август сентябрь октябрь ноябрь декабрь весна лето осень зима весенний летний
    осенний зимний рождество пасха утро вечер ночь
    monday tuesday wednesday thursday friday saturday sunday weekend january february march
    april june july august september october november december summer autumn winter
    christmas easter morning afternoon evening night"""
)


# The calendar sets whose members a passage names instead: the weekend is its Saturday and
# Sunday, the weekdays ("všední dny") Monday to Friday, a season its three months. A window
# naming a member answers a question for the set ("Jezdíte i o víkendu?" over "v sobotu
# dopoledne po dohodě"); a window naming the weekend answers one for its day ("Máte v sobotu
# otevřeno?" over "o víkendu 8-20"). Another member never does (Saturday is no Sunday), and a
# month asks for no season: the genitive plural of "léto" is "let", the years of every passage.
# The days of the week, Monday first, as their lemmas are spelled.
_WEEKDAYS = {
    "cs": ("pondělí", "úterý", "středa", "čtvrtek", "pátek", "sobota", "neděle"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"),
}
_CALENDAR_SETS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    # (the set, its members, whether a member asks for the set too)
    ("víkend", ("sobota", "neděle"), True),
    ("všední", _WEEKDAYS["cs"][:5], True),
    ("zima", ("prosinec", "leden", "únor"), False),
    ("jaro", ("březen", "duben", "květen"), False),
    ("léto", ("červen", "červenec", "srpen"), False),
    ("podzim", ("září", "říjen", "listopad"), False),
    ("wochenende", ("samstag", "sonnabend", "sonntag"), True),
    ("werktag", _WEEKDAYS["de"][:5], True),
    ("winter", ("dezember", "januar", "februar", "december", "january", "february"), False),
    ("frühling", ("märz", "april", "mai"), False),
    ("frühjahr", ("märz", "april", "mai"), False),
    ("sommer", ("juni", "juli", "august"), False),
    ("herbst", ("september", "oktober", "november"), False),
    ("weekend", ("saturday", "sunday"), True),
    ("summer", ("june", "july", "august"), False),
    ("autumn", ("september", "october", "november"), False),
    ("выходные", ("суббота", "воскресенье"), True),
)


def _kin_table() -> dict[str, tuple[str, ...]]:
    """Each calendar word (as a key body) -> the lemma keys that answer for it."""
    kin: dict[str, tuple[str, ...]] = {}
    for whole, members, both in _CALENDAR_SETS:
        kin[form_of(whole)] = kin.get(form_of(whole), ()) + tuple(
            f"l:{form_of(m)}" for m in members
        )
        for member in members if both else ():
            kin[form_of(member)] = kin.get(form_of(member), ()) + (f"l:{form_of(whole)}",)
    return kin


_CALENDAR_KIN = _kin_table()


def calendar_kin(lemmas: Iterable[str], form: str) -> tuple[str, ...]:
    """The lemma keys of the calendar times that answer for a question word's (its members, and
    for a day of the weekend the weekend), by its unaccented form or a lemma; () for any other
    word."""
    out: tuple[str, ...] = ()
    for word in dict.fromkeys((form, *lemmas)):
        out += _CALENDAR_KIN.get(word, ())
    return tuple(dict.fromkeys(out))


# A kinship noun of one person and the classes the documents' rules name instead: a son is a
# child, so a rule for children holds for him ("Může jít desetiletý syn do vířivky?" over "Do
# vířivky nesmějí děti do 12 let"). One way only: a rule for a son says nothing of all children.
# A boy or a girl is a child, and nobody's relative by that word. Every relative is one of the
# family, but what holds for the family holds for a relative only where a rule is asked for
# ("Smím půjčit notebook manželce?" over "nesmí se půjčovat rodině"): a statement about one
# person's relatives ("X je otec dvou dětí") is not one about families.
_HYPERNYMS: dict[str, dict[str, str]] = {
    "cs": dict.fromkeys(
        ("syn", "dcera", "vnuk", "vnučka", "chlapec", "dívka", "kluk", "holka"), "dítě"
    ),
    "de": dict.fromkeys(("sohn", "tochter", "enkel", "enkelin"), "kind"),
    "ru": dict.fromkeys(("сын", "дочь", "внук", "внучка"), "ребёнок"),
    "en": dict.fromkeys(("son", "daughter", "grandson", "granddaughter"), "child"),
}
# the relatives of :data:`_HYPERNYMS`' family classes, and those classes, per language
_FAMILY: dict[str, tuple[str, str]] = {
    "cs": (
        """syn dcera vnuk vnučka manžel manželka bratr brácha sestra ségra matka máma maminka
        otec táta tatínek babička děda dědeček teta strýc bratranec sestřenice tchán tchyně
        švagr švagrová""",
        "rodina rodinný příbuzný",
    ),
    "de": (
        """sohn tochter enkel enkelin ehefrau ehemann bruder schwester mutter vater großmutter
        großvater oma opa onkel tante""",
        "familie angehörige",
    ),
    "ru": (
        "сын дочь внук внучка жена муж брат сестра мать мама отец папа бабушка дедушка дядя тётя",
        "семья родственник",
    ),
    "en": (
        """son daughter grandson granddaughter wife husband brother sister mother father
        grandmother grandfather uncle aunt""",
        "family relative",
    ),
}
# So is a pet one of the animals, and what a rule says of animals holds for it ("Můžu mít na
# pokoji křečka?" over "Chovat zvířata je v celé budově zakázáno"); a statement about animals
# says nothing of a hamster, nor one about dogs of cats. The animals kept at home only: a horse
# or a cow is not what a house rule's "zvířata" mean; nor a word whose other sense is as common
# ("myš", a computer's mouse).
_PETS: dict[str, tuple[str, str]] = {
    "cs": (
        """pes kočka kocour štěně kotě křeček morče králík papoušek andulka rybička želva fretka
        činčila potkan had ještěrka""",
        "zvíře mazlíček",
    ),
    "de": (
        "hund katze kater welpe hamster meerschweinchen kaninchen papagei wellensittich",
        "tier haustier",
    ),
    "ru": ("собака кошка кот щенок котёнок хомяк попугай кролик", "животное питомец"),
    "en": ("dog cat puppy kitten hamster rabbit parrot", "animal pet"),
}
# per language: Russian keys are transliterated, and "сын" is spelled as Czech "syn"
_HYPERNYM_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    lang: {form_of(word): (f"l:{form_of(whole)}",) for word, whole in table.items()}
    for lang, table in _HYPERNYMS.items()
}


def _class_keys(table: dict[str, tuple[str, str]]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per language, each member's form -> the lemma keys of its classes."""
    return {
        lang: dict.fromkeys(
            map(form_of, members.split()), tuple(f"l:{form_of(c)}" for c in classes.split())
        )
        for lang, (members, classes) in table.items()
    }


_FAMILY_KEYS = _class_keys(_FAMILY)
_PET_KEYS = _class_keys(_PETS)
# the verbs and predicatives of a rule asked for: what may, can or must be done
_MAY_OR_MUST = {
    "cs": _table("moci smět muset lze"),
    "de": _table("dürfen können müssen"),
    "ru": _table("мочь можно нельзя должен"),
    "en": _table("can may must allowed"),
}


def asks_for_a_rule(lemmas: Iterable[str], lang: str) -> bool:
    """Whether a question's words (their lemmas) ask what may, can or must be done."""
    table = _MAY_OR_MUST.get(lang, frozenset())
    return any(lemma in table for lemma in lemmas)


def hypernym_keys(
    lemmas: Iterable[str], form: str, lang: str, rule: bool = False
) -> tuple[str, ...]:
    """The lemma keys of the classes a question's word is one of (:data:`_HYPERNYMS`), by its
    unaccented form or a lemma, and in a question for a rule (``rule``, :func:`asks_for_a_rule`)
    a relative's family (:data:`_FAMILY`) and a pet's animals (:data:`_PETS`); () for any other
    word."""
    tables: list[dict[str, tuple[str, ...]]] = [_HYPERNYM_KEYS.get(lang, {})]
    if rule:
        tables += (_FAMILY_KEYS.get(lang, {}), _PET_KEYS.get(lang, {}))
    words = (form, *lemmas)
    return tuple(dict.fromkeys(k for t in tables for w in words if w in t for k in t[w]))


# The parts of the day among them: a clock time says which part of the day it is ("do 22 hodin"
# answers "Můžeme si večer grilovat?", "do 8:15" "Do kdy ráno ...?"). Not their adjectives: an
# adjective names a kind of its noun ("ranní směna", "večerní kurz"), which a time is not.
PARTS_OF_DAY = _table(
    """ráno dopoledne poledne odpoledne večer noc vormittag mittag nachmittag abend nacht утро
    вечер ночь morning afternoon evening night"""
)


# The seasons, and the months by which a passage states a part of the year instead ("Atletika ...
# od listopadu do března v hale" answers "Kde se v zimě trénuje atletika?", "Kola vozíme od dubna
# do října" answers "Vezmete mě s kolem v zimě?"). Two months are a span of the year, inside or
# outside of which the season lies; one month is a date of its own. Not the seasons' adjectives:
# "zimní pneumatiky" are a kind, which no month says. English "spring" and "fall", "march" and
# "may" are other words too, and the genitive plural of "léto" is "let", the years of every
# passage ("лет" in Russian).
SEASONS = _table(
    "jaro léto podzim zima frühling frühjahr sommer herbst winter весна лето осень зима summer autumn"
)
MONTH_KEYS = frozenset(
    f"l:{m}"
    for m in _table(
        """leden únor březen duben květen červen červenec srpen září říjen listopad prosinec
        januar februar märz april mai juni juli august september oktober november dezember
        январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь
        january february april june july august september october november december"""
    )
)
_YEARS = frozenset({"let"})


def names_a_season(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names a season (its lemma or its form is one; "let" is years)."""
    return form not in _YEARS and _among(SEASONS, lemmas, form)


def spans_months(keys: Iterable[str]) -> bool:
    """Whether a window's keys name two months or more: a span of the year, which answers for a
    season (:data:`SEASONS`)."""
    return len(MONTH_KEYS.intersection(keys)) >= 2


# The days of the week in order, as a span of them is written in opening hours: "pondělí až
# pátek", "od úterý do pátku", "po–pá", "Montag bis Freitag", "Mo-Fr". A span names its first and
# last day and holds the days between, which a question may ask for ("Můžu přijít v úterý?" over
# "pondělí až pátek 6:00–21:00"); two days joined by "a" are those two days only.
_DAY = {
    "cs": (
        r"pondeli|utery|stred[aeuy]|stredou|ctvrt(?:ek|ka|ku|kem)|pat(?:ek|ku|kem)"
        r"|sobot[aeuy]|sobotou|nedel[ei]|po|ut|st|ct|pa|so|ne"
    ),
    "de": r"montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonnabend|sonntag|mo|di|mi|do|fr|sa|so",
}
# how a span joins its days: "až", a dash; "od ... do ..."
_SPAN_FORMS = {
    "cs": (
        r"\b(?P<a>{d})\.?\s*(?:az|[-–—])\s*(?P<b>{d})\b",
        r"\bod\s+(?P<a>{d})\s+do\s+(?P<b>{d})\b",
    ),
    "de": (
        r"\b(?P<a>{d})\.?\s*(?:bis|[-–—])\s*(?P<b>{d})\b",
        r"\bvon\s+(?P<a>{d})\s+bis\s+(?P<b>{d})\b",
    ),
}
_DAY_INDEX = {
    "cs": ("po", "ut", "st", "ct", "pa", "so", "ne"),
    "de": ("mo", "di", "mi", "do", "fr", "sa", "so"),
}


@lru_cache(maxsize=8)
def _day_spans(lang: str) -> tuple[re.Pattern[str], ...]:
    day = _DAY.get(lang)
    return tuple(re.compile(form.format(d=day)) for form in _SPAN_FORMS.get(lang, ()))


def _day_number(word: str, lang: str) -> int | None:
    """A day's place in the week (Monday 0) by its first letters (German "sonnabend": Saturday)."""
    if lang == "de" and word.startswith("sonna"):
        return 5
    table = _DAY_INDEX[lang]
    return table.index(word[:2]) if word[:2] in table else None


def spanned_days(text: str, lang: str) -> frozenset[int]:
    """The days of the week (Monday 0) inside the spans of days ``text`` writes, the span's
    first and last day included."""
    days: set[int] = set()
    plain = unaccent(text).lower()
    for pattern in _day_spans(lang):
        for m in pattern.finditer(plain):
            a, b = _day_number(m.group("a"), lang), _day_number(m.group("b"), lang)
            if a is not None and b is not None and a < b:
                days.update(range(a, b + 1))
    return frozenset(days)


# The months as a span of the year writes them ("od listopadu do března", "duben až říjen",
# "April bis Oktober"): their forms after "od", "do" and "až" (unaccented), by month (January
# 0). A span holds the months between its first and last, over the year's end too: "od
# listopadu do března" holds December ("Dá se tam zajet v pátek v prosinci?").
_MONTH_FORMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "cs": (
        ("leden", "ledna", "lednu"),
        ("unor", "unora", "unoru"),
        ("brezen", "brezna", "breznu"),
        ("duben", "dubna", "dubnu"),
        ("kveten", "kvetna", "kvetnu"),
        ("cerven", "cervna", "cervnu"),
        ("cervenec", "cervence", "cervenci"),
        ("srpen", "srpna", "srpnu"),
        ("zari",),
        ("rijen", "rijna", "rijnu"),
        ("listopad", "listopadu"),
        ("prosinec", "prosince", "prosinci"),
    ),
    "de": (
        ("januar", "janner"),
        ("februar",),
        ("marz",),
        ("april",),
        ("mai",),
        ("juni",),
        ("juli",),
        ("august",),
        ("september",),
        ("oktober",),
        ("november",),
        ("dezember",),
    ),
}
_MONTH_NUMBER = {
    lang: {form: n for n, forms in enumerate(months) for form in forms}
    for lang, months in _MONTH_FORMS.items()
}
# ... joined as a span of days is (``_SPAN_FORMS``), each month by its forms, longest first
_MONTH_SPANS = {
    lang: tuple(
        re.compile(form.format(d="|".join(sorted(table, key=len, reverse=True))))
        for form in _SPAN_FORMS.get(lang, ())
    )
    for lang, table in _MONTH_NUMBER.items()
}


def named_month(lemmas: Iterable[str], lang: str) -> int | None:
    """The month a question word names by its lemma (January 0), or None."""
    table = _MONTH_NUMBER.get(lang, {})
    return next((table[lemma] for lemma in lemmas if lemma in table), None)


def spanned_months(text: str, lang: str) -> frozenset[int]:
    """The months (January 0) inside the spans of months ``text`` writes, its first and last
    included, over the year's end where the span runs across it."""
    table = _MONTH_NUMBER.get(lang)
    if not table:
        return frozenset()
    months: set[int] = set()
    plain = unaccent(text).lower()
    for pattern in _MONTH_SPANS[lang]:
        for m in pattern.finditer(plain):
            a, b = table.get(m.group("a")), table.get(m.group("b"))
            if a is not None and b is not None and a != b:
                months.update(range(a, b + 1) if a < b else (*range(a, 12), *range(b + 1)))
    return frozenset(months)


def named_day(lemmas: Iterable[str], lang: str) -> int | None:
    """The day of the week a question word names by its lemma (Monday 0), or None."""
    days = _WEEKDAY_LEMMAS.get(lang, ())
    return next((days.index(lemma) for lemma in lemmas if lemma in days), None)


_WEEKDAY_LEMMAS = {lang: tuple(form_of(d) for d in days) for lang, days in _WEEKDAYS.items()}


# The words that say every hour of the day ("linka funguje nonstop"): a window holding one says
# the part of the day a question asks for ("Funguje linka i v noci?"), as a clock time does.
ROUND_THE_CLOCK = frozenset(
    f"l:{w}" for w in _table("nonstop nepřetržitě nepřetržitý круглосуточно круглосуточный")
)


def names_a_part_of_day(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names a part of the day (its lemma or its form is one)."""
    return _among(PARTS_OF_DAY, lemmas, form)


def names_a_time(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names a calendar time (its lemma or its form is one)."""
    return _among(CALENDAR_WORDS, lemmas, form)


def counted_unit(forms: Sequence[str], lang: str) -> int | None:
    """The position of the unit of time a question's interrogative counts ("Od kolika let",
    "Kolik dní"), the answer's own unit; None without one."""
    words = list(forms)
    first = _first_phrase(words, lang)
    if first is None:
        return None
    after = first[0] - first[1]
    return after if after < len(words) and words[after] in _TIME_UNITS else None


# The case forms of the interrogative determiners a unit of time may follow ("V který den",
# "Ve kterém měsíci", "Jakou hodinu"): by their first letters.
_ASKING_DETERMINERS: dict[str, tuple[str, ...]] = {"cs": ("kter", "jak"), "sk": ("ktor", "ak")}


def asked_units(forms: Sequence[str], lang: str) -> frozenset[int]:
    """The positions of the units of time a question asks in, not of: the one its interrogative
    counts ("Od kolika let") and one right after an interrogative determiner ("V který den a
    měsíc ...?", the unit after it joined by "a" too)."""
    words = list(forms)
    found = set()
    counted = counted_unit(words, lang)
    if counted is not None:
        found.add(counted)
    asking = _ASKING_DETERMINERS.get(lang, ())
    untyped = UNTYPED_INTERROGATIVES.get(lang, frozenset())
    for i in range(1, len(words)):
        if words[i] not in _TIME_UNITS:
            continue
        before = words[i - 1]
        if before in untyped or (asking and before.startswith(asking)):
            found.add(i)
        elif i > 1 and before == "a" and i - 2 in found:
            found.add(i)
    return frozenset(found)


def names_a_unit_of_time(lemmas: Iterable[str], form: str) -> bool:
    """Whether a question word names a unit of time ("na týden", "za hodinu"): a passage that
    lacks it gives its figure for another unit ("1 500 Kč na den"), never for the same one in
    other words."""
    return _among(_TIME_UNITS, lemmas, form)


def names_an_hour(lemmas: Iterable[str], form: str) -> bool:
    """Whether a word names the hour, a unit of time and of the clock alike ("do 18 hodin")."""
    return _among(_HOURS, lemmas, form)


# The nouns by which an employee names their own employer ("Kolik mi firma dává na
# stravenky?", "Jak mi podnik pomáhá šetřit?", "Co proplácí zaměstnavatel?"), in the singular
# cases a question puts them in (not "firmy", also the plural of "pro firmy"). Asked of the
# organisation's own documents they point at the documents' author, as "vy" does in "Půjčujete
# plavky?", and the passage that answers need not name it ("Zaměstnanci dostávají ..."). Only
# the bare noun: with an attribute or a name ("výtahová firma", "firma Elektroservis") it is
# another organisation, and the caller checks that.
_OWN_ORGANIZATION: dict[str, frozenset[str]] = {
    "cs": _table(
        """firma firmě firmu firmou podnik podniku podnikem zaměstnavatel zaměstnavatele
        zaměstnavateli zaměstnavatelem"""
    ),
}


def names_the_employer(form: str, lang: str) -> bool:
    """Whether a question word, by its unaccented form, is one by which an employee names their
    own organisation (``_OWN_ORGANIZATION``); the caller checks that it stands bare."""
    return form in _OWN_ORGANIZATION.get(lang, frozenset())


# A verb of coming after a modal ("Můžu přijet bez objednání?", "Do kolika můžu přijít
# večer?") asks whether a visit is possible, as "jít" of "Můžu jít do vířivky?" does: the
# passage answers with the hours and terms of the visit, not with the verb. Elsewhere the verb
# says what happened ("Do Brna přijelo 500 lidí") and stays a content word.
# So do the verbs of calling in ("Dá se tam zajet v pátek?"), and the modal may be the
# impersonal "dá se" ("it can be done"), with function words between ("Můžu k vám přijít?").
_COMING: dict[str, frozenset[str]] = {"cs": _table("přijít přijet zajít zajet")}
_MODALS: dict[str, frozenset[str]] = {
    "cs": _table("můžu mohu můžeš můžeme můžete může mohou smím smíme smíte smí lze musím musíme")
}
_IMPERSONAL_MODALS: dict[str, frozenset[str]] = {"cs": _table("dá dalo")}
_REFLEXIVE = {"cs": "se"}


def frames_a_visit(lemmas: Iterable[str], forms: list[str], at: int, lang: str) -> bool:
    """Whether the question word at ``at`` (its lemmas given) is a verb of coming after a modal,
    only function words between, which frames the question as a light verb does
    (``_COMING``)."""
    if at <= 0 or not _among(_COMING.get(lang, frozenset()), lemmas, forms[at]):
        return False
    function_words = stopword_forms(lang)
    modals = _MODALS.get(lang, frozenset())
    impersonal = _IMPERSONAL_MODALS.get(lang, frozenset())
    for before in range(at - 1, -1, -1):
        form = forms[before]
        if form in modals or (form in impersonal and _REFLEXIVE.get(lang) in forms[before:at]):
            return True
        if form not in function_words:
            return False
    return False


def is_frame(lemmas: Iterable[str], form: str, lang: str, written: str | None = None) -> bool:
    """Whether a question word only frames the question (its lemma or form is a frame word).

    Args:
        written: the word as typed, in a question typed with diacritics: it is then a frame
            word only if it or one of its lemmas is one as written ("bytech" is of "byt", no
            "být"). None where the question has none, whose words may have lost theirs ("muze
            byt" is "může být").
    """
    if not _among(FRAME_WORDS.get(lang, frozenset()), lemmas, form):
        return False
    if written is None:
        return True
    spelled = FRAME_WRITTEN.get(lang, frozenset())
    return written.lower() in spelled or any(
        lemma.lower() in spelled for lemma in lemma_candidates(written, lang, True)
    )


def framing(
    words: Iterable[tuple[Iterable[str], str, str | None]], kind: AnswerType | None, lang: str
) -> frozenset[str]:
    """The forms of a question's content words that only frame it (:func:`is_frame`), each word
    given as its lemmas, its form and as written (:func:`is_frame`'s ``written``).

    None where every content word would and the question asks for no kind of answer: a frame
    word frames the words beside it, and a question whether or how that has nothing else
    ("Jak se platí?", "Co mám dělat?") asks about the frame word's own sense, which a passage
    answers by that word ("Platí se hotově nebo kartou"). A question for a kind keeps its
    frames: they frame the kind ("Kde vás najdu?" asks for a place, "Kdo to má na starosti?"
    for a person), which the passage gives without them."""
    seen: set[str] = set()
    framed: set[str] = set()
    for lemmas, form, written in words:
        seen.add(form)
        if is_frame(lemmas, form, lang, written):
            framed.add(form)
    return frozenset(framed) if framed != seen or kind is not None else frozenset()


def looks_like_verb(lemma: str, lang: str) -> bool:
    """Whether a lemma has the shape of an infinitive (a coarse guess: focus prefers nouns)."""
    return lemma.endswith(_VERB_ENDINGS.get(lang, ())) and len(lemma) > 3


def is_identifier(surface: str) -> bool:
    """A code: digits and letters in one token ("ZX-4411", "E17", "FV-2024-0815", "5G"), unless
    the letters are a word the number is part of (:func:`numeral_compound`)."""
    return (
        any(c.isdigit() for c in surface)
        and any(c.isalpha() for c in surface)
        and numeral_compound(surface) is None
    )


# A number, then word parts: after a hyphen ("5-Zylinder-Zweitaktmotor", "2-bändige", "10-й",
# "70-х"), or written together with it ("70ern", "5členný", "3denní", "2-3krát", "1990s").
_COMPOUND = re.compile(
    r"(?P<num>\d+(?:[.,]\d+)?(?:-\d+(?:[.,]\d+)?)?)"
    r"(?:-(?P<hyphened>[^\W\d_]+(?:-[^\W\d_]+)*)|(?P<joined>[^\W\d_]+(?:-[^\W\d_]+)*))"
)
# Word parts that make a numeral compound a decade ("70er", "1970ern", "70-х", "1990s") ...
_DECADE_PARTS = frozenset({"er", "ern", "erjahre", "erjahren", "kh", "e", "ye", "ykh", "s"})
# ... and the beginnings of first word parts that make it a span of time ("10letý", "3denní",
# "5-jährige", "2-stündig", "10-летний", "3-дневный", "2-hour"), unaccented.
_DURATION_PARTS = (
    "let", "roc", "den", "dni", "hodin", "minut", "mesic", "tyden", "tydn",  # cs, "let" ru too
    "jahr", "tag", "stund", "monat", "woch",
    "dnev", "chas", "mesiach", "nedel", "sutoch",
    "year", "day", "hour", "month", "week",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class NumeralCompound:
    """A number written as part of a word: its numbers as key bodies, and what it stands for."""

    numbers: tuple[str, ...]  # "5" of "5-Zylinder", "2" and "3" of "2-3krát", "2.5" of "2,5krát"
    decade: str | None  # "70s" of "70ern", "1970ern", "70-х", "1970s"
    duration: bool  # its first word part is a unit of time ("10letý", "3-tägig")


# The combining forms of the numerals that begin a compound adjective ("šestinásobný",
# "pětiletý", "Шестикратный", "двухэтажный"), and their values.
_COMBINING: dict[str, tuple[tuple[str, int], ...]] = {
    "cs": (
        ("jedno", 1),
        ("dvou", 2),
        ("tří", 3),
        ("čtyř", 4),
        ("pěti", 5),
        ("šesti", 6),
        ("sedmi", 7),
        ("osmi", 8),
        ("devíti", 9),
        ("deseti", 10),
    ),
    "ru": (
        ("одно", 1),
        ("двух", 2),
        ("трёх", 3),
        ("трех", 3),
        ("четырёх", 4),
        ("четырех", 4),
        ("пяти", 5),
        ("шести", 6),
        ("семи", 7),
        ("восьми", 8),
        ("девяти", 9),
        ("десяти", 10),
    ),
}
_MIN_COMBINED = 4  # letters after the numeral ("letý"; "семинар" is no семи- of "нар")


@lru_cache(maxsize=16384)
def combined_number(surface: str, lang: str) -> str | None:
    """The number a compound adjective begins with ("Шестикратный": "6", "pětiletý": "5"), when
    what follows the numeral's combining form is a word of the dictionary; else None."""
    word = surface.lower()
    for stem, value in _COMBINING.get(lang, ()):
        rest = word[len(stem) :]
        if word.startswith(stem) and len(rest) >= _MIN_COMBINED and rest.isalpha():
            words = dictionary_words(lang)
            if words is not None and rest in words:
                return str(value)
    return None


@lru_cache(maxsize=4096)
def numeral_compound(surface: str) -> NumeralCompound | None:
    """A number joined to a word part, which makes it a number and not a code: "5-Zylinder",
    "2-bändige", "400-Unternehmen", "5-fachen", "70ern", "5členný", "10letý", "10-й", "70-х".

    The word part must be written in lower case (at least one lower-case letter in each part;
    a part written together with the number starts with one and has two letters or more, but
    for the decades' "s"), as inflection and derivation are: "5G", "4K", "3D", "3a" and "5-HT"
    stay codes, as does every token that starts with letters ("E17", "AS-206", "COVID-19").
    """
    m = _COMPOUND.fullmatch(surface)
    if m is None:
        return None
    rest = m.group("hyphened") or m.group("joined")
    parts = rest.split("-")
    if not all(any(c.islower() for c in p) for p in parts):
        return None
    num = m.group("num")
    first = unaccent(parts[0])
    if m.group("joined") and not (
        rest[0].islower() and (len(parts[0]) >= 2 or (first == "s" and num.endswith("0")))
    ):
        return None
    numbers = tuple(n.replace(",", ".") for n in num.split("-"))
    decade = None
    if first in _DECADE_PARTS and len(numbers) == 1 and re.fullmatch(r"(?:\d\d)?\d0", num):
        decade = f"{num[-2:]}s"
    duration = decade is None and first.startswith(_DURATION_PARTS)
    return NumeralCompound(numbers, decade, duration)


def is_number(surface: str) -> bool:
    """A number written in digits ("18", "3,8", "5 000" is two numbers)."""
    return any(c.isdigit() for c in surface) and not any(c.isalpha() for c in surface)


def is_name(surface: str, position: int, lang: str) -> bool:
    """Whether a question word is a proper name: capitalized inside the question, or all caps,
    or typed in lower case where the language's dictionary knows it only capitalized.

    The first word of a question is capitalized anyway, so only an all-caps first word counts;
    German capitalizes every noun, so there only all-caps words do.
    """
    letters = [c for c in surface if c.isalpha()]
    if not letters or any(c.isdigit() for c in surface):
        return False
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True
    if surface.islower():  # "kolik stojí parkování v ostravě": a name typed in lower case
        return typed_lower_name(surface, lang)
    return position > 0 and lang != "de" and surface[0].isupper()


def sentence_classes(
    text: str, surfaces: list[str], forms: list[str], lemmas: set[str], lang: str
) -> dict[TokenClass, tuple[str, ...]]:
    """The token classes a sentence holds, each with the tokens (unaccented forms) that show it.

    Args:
        text: the sentence as written.
        surfaces: its tokens as written (``rag.language.keys.tokenize``).
        forms: the same tokens, unaccented.
        lemmas: the lemma bodies of its words.
        lang: the sentence's language.
    """
    found: dict[TokenClass, tuple[str, ...]] = {}
    pairs = list(zip(surfaces, forms, strict=True))

    def having(table: frozenset[str]) -> tuple[str, ...]:
        return tuple(f for _, f in pairs if f in table)

    numbers: tuple[str, ...] = ()
    decades: tuple[str, ...] = ()
    lasting: tuple[str, ...] = ()  # "10letý", "3-tägige": a number and a unit of time in one word
    for s, f in pairs:
        if not _DIGIT.search(s):
            continue
        compound = numeral_compound(s)
        if compound is None:
            if not is_identifier(s):
                numbers += (f,)
            continue
        numbers += compound.numbers  # "5-Zylinder" holds the number 5
        if compound.decade:
            decades += (compound.decade,)
        if compound.duration:
            lasting += compound.numbers
    valued = CARDINAL_VALUES.get(lang, {})
    numbers += having(_NUMBER_WORDS) + tuple(sorted(lemma for lemma in lemmas if lemma in valued))
    numbers += tuple(f for f in forms if multiplicative(f, lang) is not None)
    if lang in _COMBINING:
        numbers += tuple(n for s in surfaces if (n := combined_number(s, lang)) is not None)
    for kind, tokens in contact_tokens(text, lemmas, numbers, lang).items():
        found[kind] = tokens
    share = _SHARE_OF_PRICE.get(lang)
    shares = tuple(unaccent(m.group(1).lower()) for m in share.finditer(text)) if share else ()
    numbers += tuple(f for f in shares if not _DIGIT.search(f))  # "polovinu" of "polovinu ceny"
    if numbers:
        found["number"] = numbers
        if shares or _CURRENCY.search(text):
            found["amount"] = numbers
        if having(_TIME_UNITS):
            found["duration"] = numbers
    spans = tuple(unaccent(written) for written, _, _ in year_spans(text, lang))
    if lasting or spans:
        found["duration"] = found.get("duration", ()) + lasting + spans
    clock = tuple(unaccent(m.group(0)) for m in _CLOCK.finditer(text))
    if clock:
        found["time"] = clock
    elif numbers and having(_HOURS):
        found["time"] = numbers
    dates = tuple(
        unaccent(m.group(0))
        for pattern in (_YEAR, _DAY_MONTH, _ISO_DATE)
        for m in pattern.finditer(text)
    )
    bounds = _EVENT_BOUNDS.get(lang, frozenset())
    before = _BOUND_PREPOSITIONS.get(lang, frozenset())
    bounded = tuple(
        f for i, (_, f) in enumerate(pairs) if f in bounds and i > 0 and pairs[i - 1][1] in before
    )
    # a recurrence says when, as "týdně" does: "každý týden", "každou celou hodinu" (a form of
    # "každý" and a unit of time, one word between at most)
    every = _EVERY.get(lang, frozenset())
    recurring = tuple(
        unit
        for i, (_, f) in enumerate(pairs)
        if f in every
        for unit in [g for _, g in pairs[i + 1 : i + 3] if g in _TIME_UNITS][:1]
    )
    if dates or decades or bounded or recurring or having(_DATE_WORDS):
        found["date"] = dates + decades + bounded + recurring + having(_DATE_WORDS)
    codes = tuple(f for s, f in pairs if is_identifier(s))
    if codes:
        found["identifier"] = codes
    # Inside a passage every capitalized word after the first counts, German nouns included:
    # a lenient reading, as the passage side only has to offer a candidate answer.
    stops = stopword_forms(lang)
    # An all-caps line is a heading, not a row of acronyms; one letter names nothing.
    shouting = sum(s.isupper() for s in surfaces) * 2 > len(surfaces)
    # a numbered heading or list item ("## 5. Zákaznická podpora", "2) Úvod") begins with the
    # word after its number, which is no name for standing second
    lead = 1 if _NUMBERED.match(text) else 0
    names = tuple(
        f
        for i, (s, f) in enumerate(pairs)
        if len(s) > 1
        and not s.islower()  # most words: no capital, no name (is_name's cheap half)
        and is_name(s, max(i - lead, 0), "")
        and not (shouting and s.isupper())
        and f not in stops  # "Pokud" after "haly B." starts a sentence the splitter missed
        and f not in _CURRENCY_WORDS
    )
    if names:
        found["name"] = names
    unknown = _unknown_stems(pairs, lang)
    # a name right after a noun of a place names that place ("v aplikaci Flotila", "v budově
    # Alfa"): it may answer where, not who
    placed = _placed_names(pairs, lang) if names else frozenset()
    for cls, cues in (("person", PERSON_CUES), ("place", PLACE_CUES)):
        table = cues.get(lang, frozenset())
        tokens = having(table) + tuple(sorted(lemma for lemma in lemmas if lemma in table))
        if unknown:
            stems = _cue_stems(cls, lang)
            tokens += tuple(form for form, stem in unknown if stem in stems)
        held = tuple(f for f in names if f not in placed) if cls == "person" else names
        if tokens or held:
            found[cls] = tokens + held  # type: ignore[index]
    return found


def _placed_names(pairs: Sequence[tuple[str, str]], lang: str) -> frozenset[str]:
    """The capitalized words of a sentence right after a noun of a place (PLACE_CUES, by its
    stem in any case: "aplikaci", "budově"), which name that place."""
    stems = _cue_stems("place", lang) if lang in _DECLINED_CUE_LANGS else frozenset()
    if not stems:
        return frozenset()
    return frozenset(
        f
        for (before, prior), (s, f) in zip(pairs, pairs[1:], strict=False)
        if s[:1].isupper() and before.islower() and _stem_of(prior, lang) in stems
    )


@lru_cache(maxsize=16)
def _cue_stems(cls: str, lang: str) -> frozenset[str]:
    """The Snowball stems of a class's cues, those that keep three letters or more."""
    table = (PERSON_CUES if cls == "person" else PLACE_CUES).get(lang, frozenset())
    stems = (snowball_stem(cue, lang) for cue in table)
    return frozenset(s for s in stems if s is not None and len(s) >= 3)


# The languages whose cue nouns are looked for by their stems as well: Czech, whose forms the
# dictionary lacks were measured ("webu", "intranetu"); German capitalizes its nouns, and the
# other languages' evaluation sets were not run with it.
_DECLINED_CUE_LANGS = frozenset({"cs"})


def _unknown_stems(pairs: Sequence[tuple[str, str]], lang: str) -> list[tuple[str, str]]:
    """The lower-case words of a sentence that the dictionary does not know and whose Snowball
    stem is a cue noun's, with their stems: a cue noun in a case the lemmatizer does not list
    ("na webu", "na intranetu") still shows its stem (:func:`_cue_stems`). A known word keeps
    the dictionary's reading, and a capitalized one is a name's."""
    cue_stems = _all_cue_stems(lang) if lang in _DECLINED_CUE_LANGS else frozenset()
    if not cue_stems:
        return []
    out = []
    for surface, form in pairs:
        if surface.islower() and (stem := _stem_of(form, lang)) in cue_stems:
            words = dictionary_words(lang)
            if words is not None and surface.isalpha() and surface not in words:
                out.append((form, stem))
    return out


@lru_cache(maxsize=16)
def _all_cue_stems(lang: str) -> frozenset[str]:
    return _cue_stems("person", lang) | _cue_stems("place", lang)


@lru_cache(maxsize=65536)
def _stem_of(form: str, lang: str) -> str | None:
    return snowball_stem(form, lang)


_ACCEPTS: dict[str, tuple[str, ...]] = {
    "number": ("number",),
    "amount": ("amount",),
    "date": ("date", "time", "duration"),  # "do 24 hodin", "v 7:30" answer "kdy" too
    "time": ("time",),
    "duration": ("duration",),
    "person": ("person",),
    "place": ("place",),
    "name": ("name",),
    "contact": ("contact",),
    "email": ("email",),
    "phone": ("phone",),
}


def accepted_classes(kind: AnswerType) -> tuple[str, ...]:
    """The token classes that answer a question expecting ``kind``."""
    return _ACCEPTS[kind]


def answer_token(
    kind: AnswerType, classes: Mapping[str, tuple[str, ...]], asked: frozenset[str]
) -> str | None:
    """The first token of a window's ``classes`` that can answer a question expecting ``kind``.

    A token the question itself contains is its subject, not its answer: "Kolik je stravné nad
    18 hodin?" is not answered by the 18, nor "Kdo vyhrál cenu Kolega roku?" by "kolega".

    Args:
        kind: the expected answer type.
        classes: token classes of the window (:func:`sentence_classes`).
        asked: the question's words, unaccented forms and lemma bodies.
    """
    for cls in _ACCEPTS[kind]:
        for token in classes.get(cls, ()):
            if token not in asked:
                return token
    return None
