"""Question classes whose answer is not a token of the interrogative's type.

* Contact questions ("Jaké je telefonní číslo na recepci?", "Jaký je e-mail klubu?", "Kam volat,
  když hoří?") ask for a way to reach someone: an e-mail address, a web address, a telephone
  number, or a number a sentence gives as a line or extension ("linku 2222"). Their cue words
  ("telefonní číslo", "e-mail") name the kind of answer, as "jak dlouho" does, so a passage need
  not repeat them: it writes "tel. 602 ..." or just the address. The cue also says which kind:
  a question for an e-mail is not answered by a telephone number, nor "Na jakém čísle je
  linka?" by an address; a cue of neither kind ("kontakt") takes any. A line or extension is
  written in digits, three or more ("linku 2222", "volejte 150"), in a sentence that speaks of a
  telephone: "u vrat číslo 3" names a gate, "dva programátory s mobilními aplikacemi" a count,
  and "od 8:00" or "od dubna 2024" beside "telefon" a time.
* Definitional questions ("Kdo je Novák?", "Wer ist Marchionne?") ask what the passages say of
  a named subject. "Kdo" asks for a person only when it stands for one unknown ("Kdo je vedoucí
  skladu?"); followed by a copula and nothing but a name it asks about that person, and any
  passage about them answers ("Novákovi jsme v pondělí poslali pozvánku ...").

Tables are written as spelled and compared as a question's word forms are
(:func:`rag.language.keys.form_of`: unaccented, only a key's characters; "сколько" is "skolko").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from rag.language.keys import form_of, unaccent


def _table(words: str) -> frozenset[str]:
    return frozenset(form_of(w) for w in words.split())


# Lemmas that ask for a contact, by its kind, and those that do only beside one ("telefonní
# číslo"); a general cue ("kontakt") asks for any kind.
PHONE_CUES: dict[str, frozenset[str]] = {
    "cs": _table("telefon telefonní telefonický mobil mobilní linka klapka volat zavolat"),
    "sk": _table("telefón telefónny mobil mobilný linka klapka volať zavolať"),
    "pl": _table("telefon telefoniczny komórka dzwonić zadzwonić"),
    "de": _table("telefon telefonnummer handy anrufen"),
    "en": _table("phone telephone mobile call"),
    "ru": _table("телефон звонить позвонить"),
}
EMAIL_CUES: dict[str, frozenset[str]] = {
    "cs": _table("e-mail email mail mailový e-mailový"),
    "sk": _table("e-mail email mail mailový e-mailový"),
    "pl": _table("e-mail email mail mailowy"),
    "de": _table("e-mail email mail"),
    "en": _table("e-mail email mail"),
    "ru": _table("почта e-mail email"),
}
_GENERAL_CUES: dict[str, frozenset[str]] = {
    "cs": _table("kontakt kontaktní"),
    "sk": _table("kontakt kontaktný"),
    "pl": _table("kontakt kontaktowy"),
    "de": _table("kontakt"),
    "en": _table("contact"),
    "ru": _table("контакт"),
}
CONTACT_CUES: dict[str, frozenset[str]] = {
    lang: PHONE_CUES[lang] | EMAIL_CUES[lang] | _GENERAL_CUES[lang] for lang in PHONE_CUES
}
CONTACT_COMPANIONS: dict[str, frozenset[str]] = {
    "cs": _table("číslo adresa"),
    "sk": _table("číslo adresa"),
    "pl": _table("numer adres"),
    "de": _table("nummer adresse"),
    "en": _table("number address"),
    "ru": _table("номер адрес"),
}
ContactKind = Literal["contact", "email", "phone"]

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WEB = re.compile(r"\b(?:https?://|www\.)\S+")
# a telephone number: six or more digits in groups ("602 123 456", "+420 602123456")
_PHONE = re.compile(r"(?<![\d.,])\+?\d{2,4}(?:[ \u00a0-]?\d{2,4}){1,4}(?!\d|[.,]\d)")
_MIN_PHONE_DIGITS = 6
_MIN_LINE_DIGITS = 3
_YEAR = re.compile(r"1[0-9]{3}|20[0-9]{2}")


# Interrogatives that ask for a contact when a cue stands beside them ("Jaký je e-mail ...",
# "Kam volat"); "Co dělat, když ztratím telefon?" asks what to do, not how to call.
_CONTACT_ASKERS: dict[str, frozenset[str]] = {
    "cs": _table("jaký jaká jaké jakou jakém jakého kam kde"),
    "sk": _table("aký aká aké akú akom kam kde"),
    "pl": _table("jaki jaka jakie jakim gdzie"),
    "de": _table("welche welcher welches wie wo"),
    "en": _table("what which where"),
    "ru": _table("какой какая какое каком куда где"),
}


# "A number for someone": Czech and Slovak "číslo na" and Polish "numer do" with the one to be
# reached ("Jaké je číslo na kastelána?", "numer do recepcji") name a telephone number without
# a telephone word. The number's forms, unaccented, and the preposition that must follow it;
# "číslo účtu" (of an account) and "číslo 3" (a gate's) are no such phrase.
_NUMBER_FOR: dict[str, tuple[frozenset[str], str]] = {
    "cs": (_table("číslo čísla čísle číslem"), "na"),
    "sk": (_table("číslo čísla čísle číslom"), "na"),
    "pl": (_table("numer numeru numerem"), "do"),
}


def number_for(forms: Sequence[str], lang: str) -> bool:
    """Whether a question asks for "a number for" someone ("číslo na správce"): a telephone
    number, as if it said "telefonní číslo"."""
    numbers, preposition = _NUMBER_FOR.get(lang, (frozenset(), ""))
    return any(
        w in numbers and nxt == preposition for w, nxt in zip(forms, forms[1:], strict=False)
    )


def contact_question(forms: Iterable[str], lemmas: Iterable[str], lang: str) -> ContactKind | None:
    """Which kind of contact a question asks for, if any: a cue ("telefon", "e-mail", "volat")
    with a word naming its kind ("číslo", "adresa") or with an interrogative that asks for one,
    or "a number for" someone (:func:`number_for`). Cues of one kind only ask for that kind;
    none, or both, for any."""
    words = list(forms)
    lemma_set = set(lemmas)
    if CONTACT_CUES.get(lang, frozenset()).isdisjoint(lemma_set):
        return "phone" if number_for(words, lang) else None
    form_set = set(words)
    companions = CONTACT_COMPANIONS.get(lang, frozenset())
    if companions.isdisjoint(lemma_set) and companions.isdisjoint(form_set):
        if _CONTACT_ASKERS.get(lang, frozenset()).isdisjoint(form_set):
            return None
    phone = not PHONE_CUES.get(lang, frozenset()).isdisjoint(lemma_set)
    email = not EMAIL_CUES.get(lang, frozenset()).isdisjoint(lemma_set)
    general = not _GENERAL_CUES.get(lang, frozenset()).isdisjoint(lemma_set)
    if phone == email or general:
        return "contact"
    return "phone" if phone else "email"


def is_contact_word(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a word of a contact question names the kind of answer (a cue or its companion)."""
    table = CONTACT_CUES.get(lang, frozenset()) | CONTACT_COMPANIONS.get(lang, frozenset())
    return form in table or not table.isdisjoint(lemmas)


def contact_tokens(
    text: str, lemmas: Iterable[str], numbers: Sequence[str], lang: str
) -> dict[ContactKind, tuple[str, ...]]:
    """What in a sentence reaches someone, by kind: its e-mail and web addresses ("email"), its
    telephone numbers and, when it speaks of a telephone or a line, its numbers of three digits
    or more that are no year ("na linku 2222"; "phone"), and all of them ("contact")."""
    addresses = [unaccent(m.group(0)).lower() for m in _EMAIL.finditer(text)]
    addresses += [unaccent(m.group(0)).lower() for m in _WEB.finditer(text)]
    phones = []
    for m in _PHONE.finditer(text):
        written = m.group(0)
        if sum(c.isdigit() for c in written) >= _MIN_PHONE_DIGITS:
            phones.append(re.sub(r"\D", "", written))
    if not PHONE_CUES.get(lang, frozenset()).isdisjoint(set(lemmas)):
        phones += [
            n
            for n in numbers
            if n.isdigit() and len(n) >= _MIN_LINE_DIGITS and not _YEAR.fullmatch(n)
        ]
    found: dict[ContactKind, tuple[str, ...]] = {}
    for kind, tokens in (("email", addresses), ("phone", phones), ("contact", addresses + phones)):
        if tokens:
            found[kind] = tuple(dict.fromkeys(tokens))  # type: ignore[index]
    return found


# Copulas after the interrogative of a definitional question, unaccented.
_COPULAS: dict[str, frozenset[str]] = {
    "cs": _table("je jsou byl byla bylo byli byly"),
    "sk": _table("je sú bol bola bolo boli"),
    "pl": _table("jest są był była było byli"),
    "de": _table("ist sind war waren"),
    "en": _table("is are was were"),
    "ru": _table("это был была были"),
}
_WHO: dict[str, frozenset[str]] = {
    "cs": _table("kdo"),
    "sk": _table("kto"),
    "pl": _table("kto"),
    "de": _table("wer"),
    "en": _table("who"),
    "ru": _table("кто"),
}


# Russian asks who someone is by "кто такой" ("Кто такие члены комиссии?"), whoever
# follows: the pronoun makes the question one of definition, names or not.
_SUCH: dict[str, frozenset[str]] = {"ru": _table("такой такая такое такие")}


def definitional(forms: Sequence[str], named: Sequence[bool], lang: str) -> bool:
    """Whether a question asks who a named person is: "who", a copula, then names only; or, in
    Russian, "кто такой" and whoever follows.

    Args:
        forms: every word of the question, unaccented, in order.
        named: for each word, whether it is a name.
        lang: the question's language.
    """
    who, copulas = _WHO.get(lang, frozenset()), _COPULAS.get(lang, frozenset())
    for i, form in enumerate(forms[:-2] if lang != "ru" else forms[:-1]):
        if form not in who:
            continue
        rest = i + 1
        if rest + 1 < len(forms) and forms[rest] in _SUCH.get(lang, frozenset()):
            return True
        if rest < len(forms) and forms[rest] in copulas:
            rest += 1
        elif lang != "ru":  # Russian needs no copula: "Кто такой Марчионне?" aside
            return False
        tail = list(named[rest:])
        return bool(tail) and all(tail)
    return False


# Interrogative words that open a question for something (who, what, when, where, which, how,
# why, how many), as opposed to a question whether (a verb first: "Je muzeum otevřené v
# pondělí?") or a statement to verify.
_WH: dict[str, frozenset[str]] = {
    "cs": _table(
        """kdo koho komu kým co čeho čemu čím kdy kde kam odkud kudy jak jaký jaká jaké jakého
        jakou jakém jakým jakých jakými jakému který která které kterého kterou kterém kterým
        kterých kterými kterému čí kolik kolika proč"""
    ),
    "de": _table(
        """wer wen wem wessen was wann wo wohin woher womit wofür worüber worauf wovon wozu
        welche welcher welches welchen welchem wie warum wieso weshalb"""
    ),
    "ru": _table(
        """кто кого кому кем что чего чему чем когда где куда откуда как какой какая какое какие
        какого какую каком каким каких какими какому который которая которое которые которого
        которую котором сколько почему зачем чей чья чьё чьи"""
    ),
    "en": _table("who whom whose what when where which how why"),
}


# The interrogative of manner, which opens a how-to question: followed by its verb it asks how
# an action is done ("Jak si zažádám o dovolenou?"), followed by an adverb or an adjective how
# much ("Jak dlouho ...?", "Jak velký ...?"). Czech only: its verbs have word families
# (rag.language.derivation) by which a passage says the action in a noun ("přihlášky").
_HOW = {"cs": "jak"}


def manner_word(forms: Sequence[str], content: Sequence[bool], lang: str) -> int | None:
    """The position of the word a how-to question's opening "jak" asks the manner of: the first
    content word after it, past its clitics ("Jak se přihlásím ...": "přihlásím"), or None
    where no "jak" opens the question (first, or second after a conjunction: "A jak ...").

    Args:
        forms: every word of the question, unaccented, in order.
        content: for each of them, whether it is a content word (no stopword).
    """
    how = _HOW.get(lang)
    if how is None:
        return None
    for i, form in enumerate(forms[:2]):
        if form == how:
            return next((j for j in range(i + 1, len(forms)) if content[j]), None)
    return None


def asks_for_something(forms: Sequence[str], lang: str) -> bool:
    """Whether a question opens with an interrogative, first or after a preposition ("Kdy ...",
    "V kolik hodin ...", "Do kdy ...", "До каких пор ..."): it asks for something, where a
    question whether or a statement to verify asks if. A relative "kdy" or "который" further in
    opens no question.

    Args:
        forms: every word of the question, unaccented, in order.
    """
    wh = _WH.get(lang, frozenset())
    return any(f in wh for f in forms[:2])
