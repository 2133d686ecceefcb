"""Lemmas and stems of single words, through simplemma and Snowball.

The words come back as the libraries give them; :mod:`rag.language.keys` turns them into key bodies.

Case handling before lemmatizing (simplemma 2.0, Czech, checked against its real output):

- ALL-CAPS words are capitalized first: "NOVÁKOVI" stays unchanged, "BRNĚ" gives the verb
  "brnět", but "Novákovi" -> "Novák" and "Brně" -> "Brno".
- A capitalized word the dictionary does not change ("Lidé" at a sentence start) is retried in
  lower case ("lidé" -> "člověk"); not in German, where nouns are capitalized ("Haus" stays).
- A Czech possessive lemma ("Dvořákovi" -> "Dvořákův") also yields its owner, found by
  lemmatizing the genitive ("Dvořáka" -> "Dvořák", "Karla" -> "Karel").
- A Czech feminine surname is its own lemma ("Kučerová", "Kučerovou" -> "Kučerová"), never the
  man's ("Kučera"), which simplemma gives for some: they name two people. A form in "-ové" that
  the dictionary reads as a plural ("Dvořákové" -> "Dvořák") also gets the woman's name.
- A Czech verb form the dictionary does not list (simplemma's Czech lacks many present, past
  and imperative forms: "nabíjí", "nabírá", "šéfuje", "nepodepsali") is undone by its
  conjugation class to the infinitives the class has, and the first the dictionary knows gives
  the lemma, the dictionary's own for that infinitive ("nabíjí" -> nabíjet -> "nabít", as
  "nabíjet" itself lemmatizes). A negated verb ("nedostala") is its verb's. This also replaces
  a lemma simplemma guessed from the ending, which is no word of its dictionary ("zablokuje" ->
  "zablokout", "odevzdejte" -> "odevzdát"). Lower-case words only, but for a capitalized form in
  "-te" or "-me", the imperative or plural verb that opens a sentence ("Nepoužívejte",
  "Zapůjčíte"): a capitalized word may be a surname ("Pospíšil").
- Two words the dictionary gives as each other's lemma (simplemma's Czech has 329 such pairs:
  "parkovat" -> "zaparkovat" and "zaparkovat" -> "parkovat", "vyzvat" / "vyzývat", "Zelenka" /
  "Zelenková"; Russian 135, German 3, English 6) are one lemma, the shorter. As the dictionary
  has them, a citation form meets neither its own inflected forms ("parkuji" -> "parkovat") nor
  its pair's, so "Kde se dá zaparkovat?" never met "Parkovat můžete ...". The pair is one word
  by the dictionary's own account; the shorter is the unprefixed verb or the man's name, and a
  woman's surname still keeps its own lemma (below).
- Questions only: a lower-case word whose capitalized form lemmatizes to a proper noun gets both
  lemmas ("brně" -> brnět + Brno, "prahy" -> práh + Praha). Chunks do not: edited text
  capitalizes names, and on 71k tokens of Czech news this rule gave 123 word types a second,
  mostly spurious lemma ("března" -> Březno, "července" -> Červenka), which would make every
  month name match those places. A lower-case name in a chunk is still reached by its stem.

Each simplemma dictionary is loaded once per process, however many threads ask for it at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import simplemma
import snowballstemmer

log = logging.getLogger(__name__)

SUPPORTED_LANGS: tuple[str, ...] = ("cs", "sk", "pl", "de", "ru", "en")

try:
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES
except ImportError:  # the module moved: fall back to the languages rag is tested with
    SUPPORTED_LANGUAGES = frozenset(SUPPORTED_LANGS)
LEMMA_LANGS: frozenset[str] = frozenset(SUPPORTED_LANGUAGES)

# Snowball algorithms of the supported languages. Slovak has none of its own; its case and
# possessive endings are close enough to Czech ones that the Czech light stemmer serves it (and
# simplemma's Slovak dictionary turns "Novák" into "Nováky", so the stem is what meets names).
_SNOWBALL = {
    "cs": "czech",
    "sk": "czech",
    "pl": "polish",
    "de": "german",
    "ru": "russian",
    "en": "english",
}
# German capitalizes every noun: "Haus" is its own lemma, lower-case "haus" would give "hausen".
_NOUNS_CAPITALIZED = frozenset({"de", "lb"})


_loaded_dictionaries: set[str] = set()
_dictionary_lock = threading.Lock()


def load_dictionaries(langs: Sequence[str]) -> None:
    """Load simplemma's dictionaries of ``langs`` once, however many threads ask at once.

    A dictionary takes from 0.3 s (Czech) to 4.5 s (Polish) and hundreds of MB to load; without
    the lock every concurrent first request of a cold service loaded its own copy.
    """
    missing = [lang for lang in langs if lang in LEMMA_LANGS and lang not in _loaded_dictionaries]
    if not missing:
        return
    with _dictionary_lock:
        for lang in missing:
            if lang not in _loaded_dictionaries:
                simplemma.lemmatize("a", lang)
                _loaded_dictionaries.add(lang)


def _lemmatize(word: str, lang: str) -> str:
    if lang not in LEMMA_LANGS or not word:
        return word
    if lang not in _loaded_dictionaries:
        load_dictionaries([lang])
    try:
        return _one_of_pair(simplemma.lemmatize(word, lang), lang)
    except Exception:  # noqa: BLE001 - one odd token must not stop a whole ingestion
        return word


def _guessed(lemma: str, lang: str) -> bool:
    """Whether ``lemma`` is no word of the dictionary: simplemma made it up from the form's
    ending ("odevzdejte" -> "odevzdát", "zablokuje" -> "zablokout")."""
    words = dictionary_words(lang)
    return words is not None and lemma not in words


def _one_of_pair(lemma: str, lang: str) -> str:
    """``lemma``, or the shorter of it and the word the dictionary gives as its lemma when that
    word's lemma is ``lemma`` again (parkovat / zaparkovat: "parkovat"), so that both words and
    all their forms share one lemma."""
    words = dictionary_words(lang)
    if words is None:
        return lemma
    other = words.get(lemma)
    if not isinstance(other, str) or other == lemma or words.get(other) != lemma:
        return lemma
    return min(lemma, other, key=lambda word: (len(word), word))


# Snowball stemmers (pure Python or PyStemmer's C, same output) keep state between calls.
_stemmers = threading.local()


def snowball_stem(word: str, lang: str) -> str | None:
    """The Snowball stem of lower-cased ``word``, or None if ``lang`` has no stemmer."""
    name = _SNOWBALL.get(lang)
    if name is None:
        return None
    # Any: snowballstemmer hands out PyStemmer's C stemmer when that is installed.
    cache: dict[str, Any] | None = getattr(_stemmers, "by_lang", None)
    if cache is None:
        cache = _stemmers.by_lang = {}
    stemmer = cache.get(lang)
    if stemmer is None:
        stemmer = cache[lang] = snowballstemmer.stemmer(name)
    return stemmer.stemWord(word.lower())


def _czech_owner(possessive: str) -> str:
    """The name a Czech possessive lemma belongs to: "Dvořákův" -> "Dvořák", "Karlův" -> "Karel"."""
    genitive = possessive[:-2] + "a"
    owner = _lemmatize(genitive, "cs")
    return owner if owner.casefold() != genitive.casefold() else possessive[:-2]


def typed_lower_name(word: str, lang: str) -> bool:
    """Whether a lower-case word is a proper noun typed in lower case: the language's dictionary
    knows it only capitalized ("ostravě", "novák", "litomyšli"; not "plzni", which is also the
    word "plzeň" inflected, nor "sova", an owl). Chat questions are often typed all lower case,
    and a place the corpus does not name must still be missed as a name."""
    if len(word) < 3 or not word.islower() or lang not in LEMMA_LANGS or lang in _NOUNS_CAPITALIZED:
        return False
    words = dictionary_words(lang)  # without it, capitals alone mark names
    return words is not None and word not in words and word.capitalize() in words


def dictionary_words(lang: str) -> Mapping[str, Any] | None:
    """simplemma's dictionary of ``lang`` (form -> lemma), the copy the lemmatizer itself uses,
    or None when the language has none or it cannot be read."""
    if lang not in LEMMA_LANGS:
        return None
    load_dictionaries([lang])
    try:
        from simplemma.lemmatizer import DEFAULT_DICTIONARY_FACTORY

        return DEFAULT_DICTIONARY_FACTORY.get_dictionary(lang)
    except Exception as e:  # noqa: BLE001 - callers fall back to what they do without one
        log.warning("no %s lemma dictionary: %s", lang, e)
        return None


def unknown_form(surface: str, lang: str, words: Mapping[str, Any] | None = None) -> bool:
    """Whether the language's dictionary lacks the word form, as written and in lower case
    (False where the language has no dictionary: nothing is known to be unknown). ``words``:
    the dictionary, when the caller has it at hand (:func:`dictionary_words`)."""
    if words is None:
        words = dictionary_words(lang)
    return words is not None and surface not in words and surface.lower() not in words


# The case forms of a Czech feminine surname (Kučerová, Kučerové, Kučerovou): an adjective's
# endings after the suffix "-ov-".
_FEMININE_SURNAME = ("ová", "ové", "ovou")


def feminine_form(word: str) -> str | None:
    """The woman's surname a capitalized Czech word in "-ová", "-ové", "-ovou" would be
    ("Kučerovou" -> "Kučerová"), or None; whether it is one, the dictionary decides
    (lemma_candidates)."""
    if word[:1].isupper() and len(word) > 5 and word.endswith(_FEMININE_SURNAME):
        return word[: word.rfind("ov")] + "ová"
    return None


def _feminine_surname(word: str, lemma: str) -> bool:
    """Whether a capitalized Czech word is a feminine surname the dictionary took for the man's
    name or left inflected ("Kučerová" -> "Kučera", "Kučerovou" -> "Kučerov"): a woman's surname
    names another person than the man's, so it is a lemma of its own, "Kučerová". An adjective
    in "-ový" at a sentence's start ("Nová", "Cenové") keeps its lemma, and so does a plural in
    "-ové" the dictionary knows as one ("Italové", "Členové", "Dvořákové": Ital, člen, Dvořák),
    which gets the woman's name as a second lemma (lemma_candidates)."""
    low = lemma.casefold()
    if low.endswith(("ová", "ový", "ý")):
        return False
    plural_of = word.endswith("ové") and low != word.casefold()
    return not (plural_of and low.startswith(word[:-3].casefold()))


# Czech conjugation: (the ending of a finite or participle form, the infinitive endings of the
# classes that have it), by the grammar's five classes: kupuje / kupovat, tiskne / tisknout,
# kryje / krýt, prosí / prosit, trpí / trpět, sází / sázet, dělá / dělat, and the verbs of
# carrying in -ézt and -ést (veze / vézt, nese / nést). Person endings of the
# present (1st and 2nd person singular and plural, 3rd person), the imperative, the past (-l,
# -la, -li, -lo, -ly) and the passive participle. The longest ending that matches decides.
def _conjugation() -> tuple[tuple[str, tuple[str, ...]], ...]:
    past = ("l", "la", "li", "lo", "ly")
    adjective = ("ý", "á", "é", "ou", "ého", "ému", "ém", "ým", "ých", "ými", "í")
    rules: dict[str, tuple[str, ...]] = {}

    def add(endings: Sequence[str], infinitives: tuple[str, ...]) -> None:
        for ending in endings:
            rules.setdefault(ending, infinitives)

    present = ("m", "š", "", "me", "te")
    add(["uj" + e for e in ("i", "u", "eš", "e", "eme", "ete", "í", "te", "")], ("ovat",))
    add(["ova" + e for e in past] + ["ován" + e for e in ("", "a", "o", "y", "i")], ("ovat",))
    add(["ovan" + e for e in adjective], ("ovat",))
    add(["n" + e for e in ("u", "eš", "e", "eme", "ete", "ou", "ěte")], ("nout",))
    add(["nu" + e for e in past], ("nout",))
    add(["yj" + e for e in ("i", "u", "eš", "e", "eme", "ete", "í")], ("ýt",))
    add(["ij" + e for e in ("i", "u", "eš", "e", "eme", "ete", "í")], ("ít",))
    add(["ej" + e for e in ("i", "u", "eš", "e", "eme", "ete")], ("át",))
    # the verbs of carrying in -ézt and -ést, whose stem ends in "z" and "s" (převézt: převezu,
    # převezte; odnést: odnesu, odneste), the present and the imperative
    add(["ez" + e for e in ("u", "eš", "e", "eme", "ete", "ou", "te", "me")], ("ézt",))
    add(["es" + e for e in ("u", "eš", "eme", "ete", "ou", "te", "me")], ("ést",))
    add(["á" + e for e in present] + ["aj" + e for e in ("í", "te")], ("at",))
    add(["a" + e for e in past], ("at",))
    add(["í" + e for e in present], ("it", "et", "ět"))
    # the imperative of the dělat class (dělej, dělejte, dělejme: domlouvejte / domlouvat); bare
    # "-ej" is left to -et and -át, as it also ends nouns of such verbs (výdej, rozprodej)
    add(["ej" + e for e in ("te", "me")], ("et", "át", "at"))
    add(["ej" + e for e in ("í", "")], ("et", "át"))
    add(["ěj" + e for e in ("í", "te", "")], ("ět",))
    add(["i" + e for e in past], ("it",))
    add(["e" + e for e in past], ("et", "ět"))
    return tuple(sorted(rules.items(), key=lambda rule: -len(rule[0])))


_CONJUGATION = _conjugation()
_MIN_VERB_ROOT = 3
_VERB_LEMMA_ENDS = ("t", "ct")
# The forms of the irregular "jíst" (to eat) that no class gives and the dictionary lacks: its
# present "jíš", "jíte" and its imperative plural "jezte", "jezme" ("Po zákroku dvě hodiny
# nejezte", "Nejezte dvě hodiny": an imperative opens its sentence); "jí" is also a pronoun and
# "jez" a weir, and they stay so.
_IRREGULAR = {"jíš": "jíst", "jíte": "jíst", "jezte": "jíst", "jezme": "jíst"}


def conjugated_lemma(word: str, lang: str) -> str | None:
    """The lemma of a lower-case Czech verb form the dictionary does not list, by its
    conjugation class ("nabírá" -> "nabírat", "nedostala" -> "dostat"), or None: not Czech, not
    a lower-case word of five letters or more, known to the dictionary, or no infinitive of its
    class that the dictionary knows. The irregular forms of "jíst" are listed (_IRREGULAR)."""
    if lang == "cs" and (irregular := _IRREGULAR.get(word.lower().removeprefix("ne"))):
        return irregular
    if lang != "cs" or len(word) < 5 or not word.isalpha() or not word.islower():
        return None
    words = dictionary_words(lang)
    if words is None or word in words:
        return None
    if word.startswith("ne") and len(word) >= 6:
        rest = word[2:]
        known = words.get(rest)
        if isinstance(known, str) and known.endswith(_VERB_LEMMA_ENDS):
            return _one_of_pair(known, lang)
        if known is None and (found := _by_class(rest, words)) is not None:
            return found
    return _by_class(word, words)


def _by_class(word: str, words: Mapping[str, Any]) -> str | None:
    for ending, infinitives in _CONJUGATION:
        if word.endswith(ending) and len(word) - len(ending) >= _MIN_VERB_ROOT:
            root = word[: len(word) - len(ending)]
            for infinitive in infinitives:
                lemma = words.get(root + infinitive)
                if isinstance(lemma, str) and lemma.endswith(_VERB_LEMMA_ENDS):
                    return _one_of_pair(lemma, "cs")
            return None
    return None


def lemma_candidates(surface: str, lang: str, question: bool) -> list[str]:
    """The lemmas of a word: its own first, then a possessive's owner or a proper noun."""
    word = surface.capitalize() if len(surface) > 1 and surface.isupper() else surface
    lemma = _lemmatize(word, lang)
    # simplemma guesses some words it does not list; a negated verb's guess keeps its "ne"
    if lemma == word or word.startswith("ne") or _guessed(lemma, lang):
        verb = conjugated_lemma(word, lang)
        # a capitalized form in -te / -me opens its sentence as an imperative or a plural verb
        # does ("Domlouvejte", "Zapůjčíte", "Netušíme"): no surname ends so and meets a verb
        if (
            verb is None
            and word[:1].isupper()
            and word[1:].islower()
            and word.endswith(("te", "me"))
        ):
            verb = conjugated_lemma(word.lower(), lang)
        lemma = verb or lemma
    if (
        word[:1].isupper()
        and lemma.casefold() == word.casefold()
        and lang not in _NOUNS_CAPITALIZED
    ):
        lower = _lemmatize(word.lower(), lang)
        if lower.casefold() != word.casefold():
            lemma = lower
    feminine = feminine_form(word) if lang == "cs" else None
    unknown = None
    if feminine is not None:
        if _feminine_surname(word, lemma):
            if lemma == word and feminine != word:
                # A word the dictionary does not know, as written or in lower case: the woman's
                # name is one reading, the word itself the other, which every unknown word gets.
                # A capital at a sentence's start says nothing: "Dárkové poukazy prodáváme"
                # holds the "dárkové" of a question, not a Mrs Dárková.
                unknown = word
            lemma, feminine = feminine, None
    found = [lemma] if unknown is None else [lemma, unknown]
    if feminine is not None and word.endswith("ové") and not lemma.casefold().endswith("ý"):
        found.append(feminine)  # "Dvořákové": the Dvořáks, or Mrs Dvořáková's dative
    if lang == "cs" and lemma[:1].isupper() and lemma.endswith("ův") and len(lemma) > 4:
        found.append(_czech_owner(lemma))
    if question and word.islower():
        proper = _lemmatize(word.capitalize(), lang)
        if proper[:1].isupper() and proper.casefold() != word.casefold():
            found.append(proper)
    return found


# A Czech noun's case endings after its lemma (fotoaparát: fotoaparátu, fotoaparátem), which no
# infinitive takes: the dictionary lists them as forms of a noun only.
_NOUN_ENDINGS: dict[str, tuple[str, ...]] = {"cs": ("u", "em", "ech", "ům", "ů", "ovi", "y")}


def nominal_lemma(surface: str, lang: str) -> bool:
    """Whether a word whose unaccented lemma ends like an infinitive is a noun by the dictionary:
    it declines the lemma as one ("plat", "fotoaparát", "předmět"; "počet" with its mobile e:
    "počtu"), or its lemma ends in "-čí", which ends nouns ("zahraničí", "bezpečí") and
    adjectives ("dílčí") and no infinitive. Czech only: other languages keep the guess by
    ending. The soft adjectives in "-cí" ("otevírací", "čerpací") are still guessed to be
    verbs: read as adjectives, they moved the focus off the noun they qualify ("otevírací
    doba") and cost a false answer on the shipped set for three ctkfacts claims
    (docs/evaluation.md, sixth round)."""
    endings = _NOUN_ENDINGS.get(lang)
    words = dictionary_words(lang) if endings else None
    if endings is None or words is None:
        return False
    lemma = (lemma_candidates(surface, lang, False) or [surface])[0].lower()
    if lemma.endswith(("čí", "či")):
        # unaccented, "zahraničí" ends as "moci" does; but an infinitive's -ci follows no "č"
        return True
    stems = [lemma]
    if len(lemma) > 3 and lemma[-2] == "e":
        stems.append(lemma[:-2] + lemma[-1])  # počet / počtu, rozpočet / rozpočtu
    return any(words.get(stem + e) == lemma for stem in stems for e in endings)
