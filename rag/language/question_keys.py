"""The keys of a question, from the same per-word analysis as a chunk's (:mod:`rag.language.keys`).

A question's content words (stopwords and interrogatives removed) are searched by their lemma, stem
and prefix keys; a word typed without diacritics may also reach an accented corpus word's lemma
through the owner's form map (``needs_form_map``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.language.answer_types import cardinal_value, ordinal_value
from rag.language.keys import (
    Token,
    analyze_question,
    detect_language,
    has_digit,
    search_keys,
)
from rag.language.lemmas import SUPPORTED_LANGS
from rag.language.stopwords import STOPWORDS


@dataclass(frozen=True, slots=True)
class QueryWord:
    """One word of a question and the keys it is searched by."""

    surface: str
    form: str
    keys: tuple[str, ...]  # its l:/s:/p: keys (namespaced)
    needs_form_map: bool  # no diacritics: may be an unaccented form of an accented corpus word


@dataclass(frozen=True, slots=True)
class QueryKeys:
    """The keys of a question."""

    lang: str
    words: tuple[QueryWord, ...]  # content words, de-duplicated by form
    all_words: tuple[QueryWord, ...]  # every word incl. stopwords


# A question names a titled person by the title's word ("paní doktorka", "pan inženýr", "pani
# doktorka"), where a document writes the title's abbreviation before the name ("MUDr. Petra
# Vlčková", "Ing. Jan Novák"): the word also asks for the abbreviations' lemma keys. Lemma
# bodies, unaccented. "bakalářka" (also a thesis) and "docent" ("doc", also a file type) are left
# out.
_DOCTOR = tuple(f"l:{t}" for t in "mudr mddr mvdr judr phdr rndr pharmdr paeddr thdr dr".split())
_TITLES: dict[str, dict[str, tuple[str, ...]]] = {
    "cs": {
        "doktor": _DOCTOR,
        "doktorka": _DOCTOR,
        "inzenyr": ("l:ing",),
        "inzenyrka": ("l:ing",),
        "magistr": ("l:mgr",),
        "magistra": ("l:mgr",),
        "profesor": ("l:prof",),
        "profesorka": ("l:prof",),
    },
    "sk": {
        "doktor": _DOCTOR,
        "doktorka": _DOCTOR,
        "inzinier": ("l:ing",),
        "inzinierka": ("l:ing",),
        "magister": ("l:mgr",),
        "magisterka": ("l:mgr",),
        "profesor": ("l:prof",),
        "profesorka": ("l:prof",),
    },
}


def _query_word(token: Token, lang: str) -> QueryWord:
    keys = search_keys(token)
    titles = _TITLES.get(lang)
    if titles:
        keys += [k for lemma in token.lemmas for k in titles.get(lemma, ())]
    # a number word also asks for its digits ("nad osmdesát" over "starší 80 let"), as a
    # passage's number word holds them (rag.search.answerability)
    # and an ordinal above ten its digits ("v šedesátých letech" over "v 60. letech")
    value = cardinal_value(token.lemmas, lang) or ordinal_value(token.lemmas, lang)
    if value is not None:
        keys.append(f"l:{value}")
    surface = token.surface
    plain = surface.isascii() and not has_digit(surface) and any(c.isalpha() for c in surface)
    return QueryWord(surface, token.form, tuple(dict.fromkeys(keys)), plain)


# West Slavic languages in Latin script, told apart mostly by their diacritics
_NEIGHBOURS = frozenset({"cs", "sk", "pl"})
# The letters only one of them writes.
_OWN_LETTERS = {"cs": "řůě", "sk": "äôľĺŕ", "pl": "łąęśźżń"}
_WORD = re.compile(r"[^\W\d_]+")


def _neighbour_of(question: str, detected: str, corpus: str) -> bool:
    """Whether a question detected as a neighbour of the corpus's language is better read in the
    corpus's. Czech, Slovak and Polish share their short words ("na", "do", "je") and most of
    their letters. Typed without diacritics ("Kolik stoji obed v jidelne?") they lose the
    letters that tell them apart; written without a letter of the language detected (ř ů ě, ľ ô
    ä, ł ą ż) and without a function word of its own that the corpus's language lacks ("Jaké je
    číslo na kastelána?", "Jezdí k vám skibus?"; not "Čo mám urobiť ...?", "Kto založil
    sklárňu?"), nothing in them is the other language's, and they are the corpus's language."""
    if question.isascii():
        return True
    if any(c in _OWN_LETTERS[detected] for c in question.lower()):
        return False
    # accented: "co" and "čo" are one word unaccented, and tell Czech from Slovak
    words = {w.lower() for w in _WORD.findall(question)}
    theirs, ours = STOPWORDS.get(detected, frozenset()), STOPWORDS.get(corpus, frozenset())
    return words.isdisjoint(theirs - ours)


def query_keys(
    question: str, lang: str | None = None, corpus_langs: Sequence[str] | None = None
) -> QueryKeys:
    """Compute the keys of a question.

    Args:
        question: The question as typed.
        lang: Its language; None detects it among all supported languages, the corpus's main
            language (the first of ``corpus_langs``) winning near-ties. A question may be in
            another language than the corpus ("Who is Novák?" over Czech documents): its own
            stopwords must go, and its names still meet the corpus's stem keys.
        corpus_langs: Languages the owner's corpus holds, most frequent first.

    Returns:
        The language used, the content words (stopwords and interrogatives removed, one per
        form) and every word.
    """
    if not lang:
        default = corpus_langs[0] if corpus_langs else "cs"
        candidates = tuple(dict.fromkeys([*(corpus_langs or ()), *SUPPORTED_LANGS]))
        lang = detect_language(question, candidates, default=default)
        if (
            lang != default
            and {lang, default} <= _NEIGHBOURS
            and _neighbour_of(question, lang, default)
        ):
            lang = default
    lang = lang.lower()
    tokens = analyze_question(question, lang)
    all_words = tuple(_query_word(token, lang) for token in tokens)
    words: dict[str, QueryWord] = {}
    for word, token in zip(all_words, tokens, strict=True):
        if not token.stop and word.form not in words:
            words[word.form] = word
    return QueryKeys(lang, tuple(words.values()), all_words)
