"""Names by their stem: a name the lemmatizer does not know still declines by the grammar.

Czech declines foreign and Polish names as its own nouns and adjectives: "Marchionne" is
"Marchionneho" in the genitive, "Marchionnemu" in the dative; "Kaczyński" is "Kaczyńského".
The dictionary knows neither, and the Snowball stem of "Marchionneho" keeps part of the ending
("marchionneh" against "marchionn"). A name's stem is the unaccented word without its longest
case ending, from the declension tables of nouns (-a, -u, -ovi, -em, -y, -ě ...), of
adjectival names (-ého, -ému, -ým, -ý, -í) and of the soft names that end in -e (-eho, -emu,
-em). Two names meet when their stems are equal: a question's "Marchionneho" finds the
passage's "Marchionne", "Zulawského" finds "Zulawski".

Only capitalized words are names here, and only in the languages whose tables are below (Czech
and Slovak, which decline names alike, and Polish, whose case endings overlap them).
"""

from __future__ import annotations

from functools import lru_cache

from rag.language.keys import unaccent

NAME_KEY = "N:"  # a name's stem as a key (sentence keys, question needs)

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
