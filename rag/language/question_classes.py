"""Question classes whose answer is not a token of the interrogative's type.

* Contact questions ("Jaké je telefonní číslo na recepci?", "Jaký je e-mail klubu?", "Kam volat,
  když hoří?") ask for a way to reach someone: an e-mail address, a web address, a telephone
  number, or a number a sentence gives as a line or extension ("linku 2222"). Their cue words
  ("telefonní číslo", "e-mail") name the kind of answer, as "jak dlouho" does, so a passage need
  not repeat them: it writes "tel. 602 ..." or just the address.
* Definitional questions ("Kdo je Novák?", "Wer ist Marchionne?") ask what the passages say of
  a named subject. "Kdo" asks for a person only when it stands for one unknown ("Kdo je vedoucí
  skladu?"); followed by a copula and nothing but a name it asks about that person, and any
  passage about them answers ("Novákovi jsme v pondělí poslali pozvánku ...").

Tables are written as spelled and compared after ``unaccent``, as in
:mod:`rag.language.answer_types`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rag.language.keys import unaccent


def _table(words: str) -> frozenset[str]:
    return frozenset(unaccent(w) for w in words.split())


# Lemmas that ask for a contact, and those that do only beside one ("telefonní číslo").
CONTACT_CUES: dict[str, frozenset[str]] = {
    "cs": _table(
        "telefon telefonní telefonický mobil mobilní e-mail email mail mailový e-mailový kontakt "
        "kontaktní linka volat zavolat"
    ),
    "sk": _table(
        "telefón telefónny mobil mobilný e-mail email mail kontakt kontaktný volať zavolať"
    ),
    "pl": _table(
        "telefon telefoniczny komórka e-mail email mail kontakt kontaktowy dzwonić zadzwonić"
    ),
    "de": _table("telefon telefonnummer handy e-mail email mail kontakt anrufen"),
    "en": _table("phone telephone mobile e-mail email mail contact call"),
    "ru": _table("телефон почта e-mail email контакт звонить позвонить"),
}
CONTACT_COMPANIONS: dict[str, frozenset[str]] = {
    "cs": _table("číslo adresa"),
    "sk": _table("číslo adresa"),
    "pl": _table("numer adres"),
    "de": _table("nummer adresse"),
    "en": _table("number address"),
    "ru": _table("номер адрес"),
}

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_WEB = re.compile(r"\b(?:https?://|www\.)\S+")
# a telephone number: six or more digits in groups ("602 123 456", "+420 602123456")
_PHONE = re.compile(r"(?<![\d.,])\+?\d{2,4}(?:[ \u00a0-]?\d{2,4}){1,4}(?!\d|[.,]\d)")
_MIN_PHONE_DIGITS = 6


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


def contact_question(forms: Iterable[str], lemmas: Iterable[str], lang: str) -> bool:
    """Whether a question asks for a contact: a cue ("telefon", "e-mail", "volat") with a word
    naming its kind ("číslo", "adresa") or with an interrogative that asks for one."""
    lemma_set = set(lemmas)
    if CONTACT_CUES.get(lang, frozenset()).isdisjoint(lemma_set):
        return False
    form_set = set(forms)
    companions = CONTACT_COMPANIONS.get(lang, frozenset())
    return not (companions.isdisjoint(lemma_set) and companions.isdisjoint(form_set)) or not (
        _CONTACT_ASKERS.get(lang, frozenset()).isdisjoint(form_set)
    )


def is_contact_word(lemmas: Iterable[str], form: str, lang: str) -> bool:
    """Whether a word of a contact question names the kind of answer (a cue or its companion)."""
    table = CONTACT_CUES.get(lang, frozenset()) | CONTACT_COMPANIONS.get(lang, frozenset())
    return form in table or not table.isdisjoint(lemmas)


def contact_tokens(
    text: str, lemmas: Iterable[str], numbers: Sequence[str], lang: str
) -> tuple[str, ...]:
    """What in a sentence reaches someone: addresses, telephone numbers, and its numbers when
    it speaks of a telephone or a line ("na linku 2222")."""
    found = [unaccent(m.group(0)).lower() for m in _EMAIL.finditer(text)]
    found += [unaccent(m.group(0)).lower() for m in _WEB.finditer(text)]
    for m in _PHONE.finditer(text):
        written = m.group(0)
        if sum(c.isdigit() for c in written) >= _MIN_PHONE_DIGITS:
            found.append(re.sub(r"\D", "", written))
    lemma_set = set(lemmas)
    cues = CONTACT_CUES.get(lang, frozenset()) | CONTACT_COMPANIONS.get(lang, frozenset())
    if numbers and not cues.isdisjoint(lemma_set):
        found += numbers
    return tuple(dict.fromkeys(found))


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


def definitional(forms: Sequence[str], named: Sequence[bool], lang: str) -> bool:
    """Whether a question asks who a named person is: "who", a copula, then names only.

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
        if rest < len(forms) and forms[rest] in copulas:
            rest += 1
        elif lang != "ru":  # Russian needs no copula: "Кто такой Марчионне?" aside
            return False
        tail = list(named[rest:])
        return bool(tail) and all(tail)
    return False
