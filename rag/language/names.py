"""Names by their stem: a name the lemmatizer does not know still declines by the grammar.

Czech declines foreign and Polish names as its own nouns and adjectives: "Marchionne" is
"Marchionneho" in the genitive, "Marchionnemu" in the dative; "Kaczyński" is "Kaczyńského".
The dictionary knows neither, and the Snowball stem of "Marchionneho" keeps part of the ending
("marchionneh" against "marchionn"). A name's stem is the unaccented word without its longest
case ending, from the declension tables of nouns (-a, -u, -ovi, -em, -y, -ě ...), of
adjectival names (-ého, -ému, -ým, -ý, -í) and of the soft names that end in -e (-eho, -emu,
-em). Two names meet when their stems are equal: a question's "Marchionneho" finds the
passage's "Marchionne", "Zulawského" finds "Zulawski".

A name word the stems do not join may still be the text's word spelled otherwise
(:func:`spelled_otherwise`: a typo, a transliteration, a declension by the wrong table), within
an edit or two.

Only capitalized words are names here, and only in the languages whose tables are below (Czech
and Slovak, which decline names alike, and Polish, whose case endings overlap them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from rag.language.keys import PREFIX_LEN, prefix_keys_as, unaccent

NAME_KEY = "N:"  # a name's stem as a key (sentence keys, question needs)
# the first letters of a passage's name or of an adjective derived from one ("n:brne" of "Brně",
# rag.search.answerability): a question's name meets its adjective by them, and the other way
NAMED_KEY = "n:"
# the first letters of the name a passage's relational adjective is derived from ("r:barm" of
# "Barmští", "r:irak" of "irácký"): a question's name meets it even where the corpus never
# writes the name itself (names.adjective_name_keys)
RELATIONAL_KEY = "r:"

_MIN_STEM = 2
_ENDINGS: dict[str, tuple[str, ...]] = {
    "cs": (
        "ovi",
        "eho",
        "emu",
        "ého",
        "ému",
        "ými",
        "ých",
        "ům",
        "ou",
        "em",
        "ém",
        "ým",
        "ho",
        "mu",
        "a",
        "u",
        "y",
        "e",
        "ě",
        "i",
        "í",
        "o",
        "é",
        "ý",
    ),
}
_ENDINGS["sk"] = (*_ENDINGS["cs"], "ovia", "om", "ej")
_ENDINGS["pl"] = (
    "owi",
    "iego",
    "iemu",
    "ego",
    "emu",
    "em",
    "im",
    "ą",
    "a",
    "u",
    "y",
    "e",
    "i",
    "o",
)


@lru_cache(maxsize=65536)
def name_key(surface: str, lang: str) -> str | None:
    """The stem key of a capitalized word (``N:<stem>``), or None: not capitalized, no table
    for the language, or too short once its ending is off."""
    endings = _ENDINGS.get(lang)
    if endings is None or not surface[:1].isupper() or not surface.isalpha():
        return None
    word = unaccent(surface.lower())
    best = word
    for ending in endings:
        e = unaccent(ending)
        if word.endswith(e) and len(word) - len(e) >= _MIN_STEM and len(word) - len(e) < len(best):
            best = word[: -len(e)]
    return NAME_KEY + best if len(best) >= _MIN_STEM else None


# A name that ends in a vowel as an adjective or a foreign word does ("Prodi", "Sarkozy",
# "Jiří", "Krejčí", "Marchionne") declines by adding the adjective's endings to its whole
# nominative ("Prodiho", "Sarkozymu", "Jiřím"): the stem of that nominative is the name's too,
# where taking an ending off the inflected form leaves another ("prodi" of "Prodiho", "prod" of
# "Prodi").
_ADDED_ENDINGS: dict[str, tuple[str, ...]] = {"cs": ("ho", "mu", "m"), "sk": ("ho", "mu", "m")}
_VOWEL_ENDS = frozenset("iyeíýé")


@lru_cache(maxsize=65536)
def name_keys(surface: str, lang: str) -> tuple[str, ...]:
    """The stem keys of a capitalized word (:func:`name_key`): its own, and, for a name
    inflected by endings added to a nominative in a vowel, that nominative's."""
    own = name_key(surface, lang)
    out: tuple[str, ...] = (own,) if own is not None else ()
    for ending in _ADDED_ENDINGS.get(lang, ()):
        rest = surface[: -len(ending)]
        if surface.endswith(ending) and len(rest) > _MIN_STEM and rest[-1] in _VOWEL_ENDS:
            key = name_key(rest, lang)
            if key is not None and key not in out:
                out += (key,)
    return out


# An acronym and the words it abbreviates: a passage writes "ČR" where a question says "České
# republice", or "bezpečnosti a ochrany zdraví při práci" where it asks about "BOZP". Czech
# acronyms are the initials of a name's or a term's words ("Česká republika", "Organizace
# spojených národů", "daň z přidané hodnoty"), the short words between them left out
# ("Ministerstvo pro místní rozvoj": MMR). Two initials are common by chance ("ceny rostou"), so a
# run of two starts at a capitalized word; three or four may start at any word. Two keys, so that
# each side meets only the other's form:
EXPANDED_KEY = "i:"  # the initials of a run of words ("Česká republika": i:cr), for an acronym
ACRONYM_KEY = "I:"  # an acronym as written ("ČR": I:cr), for a run of words
_ACRONYM_LETTERS = (2, 5)
_RUN_INITIALS = (2, 4)
_SHORT_WORD = 3  # lower-case words this short inside a run give no initial (pro, a, v, na)


def is_acronym(surface: str) -> bool:
    """Two to five capital letters and nothing else ("ČR", "OSN", "EU")."""
    low, high = _ACRONYM_LETTERS
    return low <= len(surface) <= high and surface.isalpha() and surface.isupper()


def initial_runs(surfaces: list[str]) -> list[tuple[tuple[int, ...], str]]:
    """The runs of words an acronym may stand for: from each word (not itself an acronym, nor a
    short lower-case one), the next words' unaccented initials, 2 to 4 of them (3 or 4 from a
    lower-case word), with the positions of the words that gave them. "České republice" gives
    ((0, 1), "cr")."""
    low, high = _RUN_INITIALS
    out: list[tuple[tuple[int, ...], str]] = []
    for i, first in enumerate(surfaces):
        if not first.isalpha() or is_acronym(first):
            continue
        capital = first[:1].isupper()
        if not capital and len(first) <= _SHORT_WORD:
            continue
        at = [i]
        for j in range(i + 1, len(surfaces)):
            word = surfaces[j]
            if not word.isalpha() or is_acronym(word):
                break
            if word.islower() and len(word) <= _SHORT_WORD:
                continue
            at.append(j)
            if len(at) > high:
                break
            if len(at) >= (low if capital else low + 1):
                initials = "".join(unaccent(surfaces[k][0]) for k in at)
                out.append((tuple(at), initials))
    return out


def acronym_keys(surfaces: list[str]) -> list[str]:
    """A sentence's keys for acronyms: its runs' initials and its acronyms as written. A heading
    in capitals ("PRVNÍ POMOC", "BEZPEČNOST PRÁCE") holds words, not acronyms."""
    keys = [EXPANDED_KEY + initials for _, initials in initial_runs(surfaces)]
    words = [s for s in surfaces if s.isalpha() and len(s) > 1]
    if sum(s.isupper() for s in words) * 2 <= len(words):
        keys += [ACRONYM_KEY + unaccent(s) for s in surfaces if is_acronym(s)]
    return keys


# A state's one-word short name beside its formal name and the formal name's acronym: "Česko",
# "Česká republika" and "ČR" are one state, and a question says "v Česku" where a passage writes
# "v ČR"; so "Slovensko", "Slovenská republika" and "SR". Each row: the short name's forms in
# lower case, as typed with or without accents (the Czech "Česka" only with its accent: "ceska"
# is also the adjective "česká"; the Slovak genitive "Slovenska" has none), the acronym, the
# short name's lemma.
_SHORT_NAMES: tuple[tuple[frozenset[str], str, str], ...] = (
    (frozenset({"česko", "česka", "česku", "českem", "cesko", "cesku", "ceskem"}), "cr", "cesko"),
    (
        frozenset({"slovensko", "slovenska", "slovensku", "slovenskem", "slovenskom"}),
        "sr",
        "slovensko",
    ),
)


def question_acronym_keys(surfaces: list[str]) -> dict[int, tuple[str, ...]]:
    """A question's words' acronym keys by position: an acronym meets the words that spell it
    (EXPANDED_KEY), and each word of a run meets the acronym of the run (ACRONYM_KEY); a
    state's short name meets its formal name and their acronym ("v Česku": "v ČR", "České
    republiky"), and the acronym and the formal name the short name ("ČR", "Česká republika":
    "Česko")."""
    out: dict[int, list[str]] = {}
    for i, s in enumerate(surfaces):
        if is_acronym(s):
            out.setdefault(i, []).append(EXPANDED_KEY + unaccent(s))
        for forms, acronym, short in _SHORT_NAMES:
            if s.lower() in forms:
                out.setdefault(i, []).extend((ACRONYM_KEY + acronym, EXPANDED_KEY + acronym))
            elif is_acronym(s) and unaccent(s) == acronym:
                out.setdefault(i, []).append("l:" + short)
    for at, initials in initial_runs(surfaces):
        # the formal name spelled out asks for the short one too ("Česká republika": "Česko")
        state = next(
            (
                name
                for _, acronym, name in _SHORT_NAMES
                if initials == acronym and unaccent(surfaces[at[0]]).startswith(name[:-1])
            ),
            None,
        )
        for k in at:
            out.setdefault(k, []).append(ACRONYM_KEY + initials)
            if state is not None:
                out[k].append("l:" + state)
    return {i: tuple(dict.fromkeys(keys)) for i, keys in out.items()}


# The relational adjectives of Czech and Slovak: -ský and -cký ("brněnský" of Brno, "americký" of
# Amerika, "pražští" of Praha), which name the place or the person they are derived from.
_RELATIONAL: dict[str, re.Pattern[str]] = {
    "cs": re.compile(r"(?:sk|ck)(?:ý|á|é|ého|ému|ém|ým|ých|ými|ou)$|(?:št|čt)í$"),
    "sk": re.compile(r"(?:sk|ck)(?:ý|á|é|ého|ému|om|ým|ých|ými|ou|í)$"),
}


def relational_keys(surface: str, keys: Iterable[str], df: int, lang: str) -> tuple[str, ...]:
    """The name keys a question's relational adjective asks for: the first letters of the name
    it is derived from ("brněnské" of "v brněnské kanceláři": "n:brne" of a passage's "v Brně"),
    as a question's name asks for its adjective. ``keys``: the word's keys (its prefix keys,
    "p:", give the letters); ``df``: the chunks that hold the word. Nothing for any other word,
    nor for an adjective the corpus holds: there its own keys meet it."""
    pattern = _RELATIONAL.get(lang)
    if df > 0 or pattern is None or not surface.islower() or pattern.search(surface) is None:
        return ()
    return prefix_keys_as(NAMED_KEY, keys)


# -cký of a name in -k, -ka, -ko: the velar palatalized before the suffix (Irák / irácký, Afrika /
# africký), unaccented; -čtí is the masculine animate plural ("iráčtí")
_PALATALIZED = re.compile(r"(?:ck(?:y|a|e|eho|emu|em|ym|ych|ymi|ou|i)|cti)$")


def adjective_name_keys(surface: str, lang: str) -> tuple[str, ...]:
    """The keys a passage's relational adjective gives the name it is derived from: its own
    first letters ("Barmští": r:barm), and where its "c" stands for the name's "k", the name's
    ("irácký": r:irak, as "Irák" begins). Nothing for any other word."""
    pattern = _RELATIONAL.get(lang)
    word = surface.lower()
    if pattern is None or pattern.search(word) is None:
        return ()
    plain = unaccent(word)
    out = [plain[:PREFIX_LEN]] if len(plain) > PREFIX_LEN else []
    if (m := _PALATALIZED.search(plain)) is not None and m.start() >= PREFIX_LEN - 1:
        out.append((plain[: m.start()] + "k")[:PREFIX_LEN])
    return tuple(dict.fromkeys(RELATIONAL_KEY + p for p in out))


def name_adjective_keys(keys: Iterable[str]) -> tuple[str, ...]:
    """The keys by which a question's name meets a passage's adjective derived from it: the
    name's first letters (its prefix keys, "p:") as :func:`adjective_name_keys` gives them."""
    return prefix_keys_as(RELATIONAL_KEY, keys)


_LONGEST_NAME = 30  # letters of a name word compared by edits


def spelled_otherwise(form: str, forms: frozenset[str]) -> bool:
    """Whether one of a text's words (``forms``, unaccented) is the name word ``form`` within
    an edit or two: "Hunga" for "Huang", a typo's transposed letters, a declension the
    lemmatizer does not know. A word longer than any name's is compared as it is, so that no
    question costs more than a few thousand steps a chunk."""
    if len(form) > _LONGEST_NAME:
        return form in forms
    most = 1 if len(form) < 5 else 2
    # a compound's parts too ("Лос-Анджелес-Клипперс")
    words = forms | {p for f in forms if "-" in f for p in f.split("-")}
    return any(abs(len(f) - len(form)) <= most and _edits(form, f, most) <= most for f in words)


def _edits(a: str, b: str, most: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, cut at ``most`` + 1."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        low = row[0]
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
            low = min(low, row[j])
        if low > most:
            return most + 1
    return row[-1]
