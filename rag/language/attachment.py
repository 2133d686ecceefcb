"""Attributive modifiers: an adjective restricts the noun it stands before. Pure; Czech only.

A question's noun phrase "roční členství" asks for one kind of membership. A passage that holds
"Měsíční členství ... stojí 890 Kč" and "roční" only elsewhere, or in another word class
("Zmrazit ho můžete jednou ročně"), says nothing of the yearly one: its words are the
question's, its phrase is not.

:func:`question_phrases` finds a question's attributive adjectives: a run of adjectives directly
before a noun, agreeing with it in case as far as the endings tell (the question's phrases are
short and written for the purpose, so position is the reliable cue). :func:`attached` tells
whether one occurrence of the modifier in a passage's sentence stands in the head's phrase:

* an adjective whose run of adjectives (and coordinating conjunctions: "letní a zimní
  slavnost") ends in the head, or in a noun the head is joined to ("starý nábytek nebo
  matrace");
* an adjective in a dependent right after the head, a genitive or a preposition's phrase
  ("pojištění havarijní", "slavnosti s rytířskými souboji");
* an adjective whose run ends in no noun at all ("měsíční nebo roční", "roční stojí ..."): its
  noun is left out, and the passage's context supplies it;
* a word of another class (an adverb, a noun: "slavnost v zimě") in a sentence that holds the
  head: how the sentence relates them is past what endings tell, and a sentence that names both
  is given the benefit.

It is not attached where it qualifies another noun ("Na zimní firemní setkání a na letní
slavnost") or stands, in another class, in a sentence without the head. :func:`attributes`
gives the adjectives before a noun's occurrence: the answerability stage
(:mod:`rag.search.answerability`) lets a detached modifier lack only where the passage restricts
the noun by another adjective ("Měsíční členství"); a noun it names bare may be the question's.

:func:`beneficiaries` finds the other restriction a question's noun may carry, whom it is meant
for ("kurz plavání pro kojence"), and :func:`beneficiaries_of` a passage's for a noun: the
answerability stage lets no vector stand in for the question's where the passage means the noun
for another. :func:`attributions` finds the phrase that names whose statement a question asks
about ("podle bavorského premiéra"), whose words are no focus words.

Adjectives are told by their endings: a hard adjective's (-ý, -á, -é, -ého, ...) with a lemma in
-ý (or, unknown to the dictionary, one of the endings no noun has), a soft one's (-í, -ího, ...)
after a consonant and "n" ("roční", "havarijního", not the verbal nouns "pojištění", "čtení") or
after c, č, š, ž, ř ("školicí", "vyšší") with a lemma in -í or -ý (not a verb's: "učí").
No word lists but the coordinating conjunctions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag.language.answer_types import looks_like_verb
from rag.language.keys import unaccent
from rag.language.stopwords import STOPWORDS

# the languages whose adjectives this module tells
LANGS = frozenset({"cs"})

_HARD = re.compile(r"(?:ý|á|é|ého|ému|ém|ým|ých|ými|ou)$")
# endings of hard adjectives that no Czech noun has: an adjective the dictionary lacks
# ("repasovaných") is still one
_HARD_ONLY = re.compile(r"(?:ý|ého|ému|ých|ými)$")
_SOFT = re.compile(r"(?:[bcčdďfghjklmnňprřsštťvzž]n|[cčšžř])(?:í|ího|ímu|ím|ích|ími)$")
# words that join adjectives of one noun ("letní a zimní slavnost")
_JOINERS = {"cs": frozenset({"a", "i", "nebo", "či", "ani", "ale"})}
_RUN = 3  # at most this many words between an adjective and its noun

# The cases an adjective's ending may stand in (hard and soft endings alike), and the noun
# endings that tell their case: a noun in -ům is a dative, whatever adjective stands before it.
_ADJECTIVE_CASES: tuple[tuple[str, frozenset[str]], ...] = (
    ("ého", frozenset({"gen", "acc"})),
    ("ího", frozenset({"gen", "acc"})),
    ("ému", frozenset({"dat"})),
    ("ímu", frozenset({"dat"})),
    ("ých", frozenset({"gen", "loc", "acc"})),
    ("ích", frozenset({"gen", "loc", "acc"})),
    ("ými", frozenset({"ins"})),
    ("ími", frozenset({"ins"})),
    ("ém", frozenset({"loc"})),
    ("ím", frozenset({"loc", "ins", "dat"})),
    ("ým", frozenset({"ins", "dat"})),
    ("ou", frozenset({"acc", "ins"})),
    ("ý", frozenset({"nom", "acc"})),
    ("á", frozenset({"nom", "acc"})),
    ("é", frozenset({"nom", "gen", "dat", "acc", "loc"})),
    ("í", frozenset({"nom", "gen", "dat", "acc", "loc", "ins"})),
)
_NOUN_CASES: tuple[tuple[str, frozenset[str]], ...] = (
    ("ům", frozenset({"dat"})),
    ("ách", frozenset({"loc"})),
    ("ech", frozenset({"loc"})),
    ("ami", frozenset({"ins"})),
    ("emi", frozenset({"ins"})),
    ("ovi", frozenset({"dat", "loc"})),
    ("ů", frozenset({"gen"})),
)


@dataclass(frozen=True, slots=True)
class Word:
    """A word as this module reads it."""

    surface: str
    lemmas: tuple[str, ...]  # unaccented lemma bodies
    stop: bool  # a stopword of its language


def adjectival(word: Word, lang: str) -> bool:
    """Whether a word has the form of an adjective: its ending, and a lemma that ends as an
    adjective's ("-ý", "-í") or is the word itself (the dictionary lacks it). A verb in -í
    ("učí", "vyváží") has an infinitive for its lemma."""
    if lang not in LANGS or word.stop:
        return False
    w = word.surface.lower()
    if not w.isalpha():
        return False
    plain = unaccent(w)
    if _SOFT.search(w):
        # "vyšší": a comparative's lemma is its positive ("vysoký")
        return any(lemma.endswith(("i", "y")) or lemma == plain for lemma in word.lemmas)
    if _HARD.search(w) is None:
        return False
    if any(lemma.endswith("y") for lemma in word.lemmas):
        return True
    return _HARD_ONLY.search(w) is not None and all(lemma == plain for lemma in word.lemmas)


def nominal(word: Word, lang: str) -> bool:
    """Whether a word may be a noun: a word, no stopword, no adjective, no infinitive's lemma."""
    w = word.surface
    if word.stop or not w.isalpha() or adjectival(word, lang):
        return False
    return not any(looks_like_verb(lemma, lang) for lemma in word.lemmas[:1])


def agree(adjective: str, noun: str) -> bool:
    """Whether an adjective's ending may stand in a case the noun's ending allows (a noun whose
    ending tells no case agrees with any)."""
    a, n = adjective.lower(), noun.lower()
    cases = next((c for e, c in _ADJECTIVE_CASES if a.endswith(e)), None)
    told = next((c for e, c in _NOUN_CASES if n.endswith(e)), None)
    return cases is None or told is None or bool(cases & told)


def question_phrases(words: Sequence[Word], lang: str) -> list[tuple[int, int]]:
    """The question's attributive adjectives as (modifier, head) positions in ``words``: every
    adjective of a run of lower-case adjectives (joined by conjunctions) directly before a
    lower-case noun it agrees with ("zimní firemní slavnost": (zimní, slavnost), (firemní,
    slavnost))."""
    if lang not in LANGS:
        return []
    joiners = _JOINERS.get(lang, frozenset())
    out: list[tuple[int, int]] = []
    run: list[int] = []
    for i, w in enumerate(words):
        lower = w.surface[:1].islower()
        if lower and adjectival(w, lang):
            run.append(i)
            continue
        if run and w.surface.lower() in joiners:
            continue
        if run and lower and nominal(w, lang):
            out += [(a, i) for a in run if agree(words[a].surface, w.surface)]
        run = []
    return out


# The preposition of the one a thing is meant for ("kurz pro kojence", "sauna pro ženy"), and
# the lemmas of the quantifiers that say it is meant for anyone ("pro všechny", "pro každého").
_FOR = {"cs": "pro"}
_ANYONE = {"cs": frozenset({"vsechen", "kazdy"})}


def _noun_phrase(
    words: Sequence[Word], start: int, lang: str, barred: frozenset[str] = frozenset()
) -> list[int]:
    """The positions of the noun phrase from ``start`` on: its adjectives and the noun after them,
    at most _RUN words, ended before a word that is no word, a stopword or of a ``barred``
    lemma. Its last position is its noun's where it reached one (:func:`adjectival` false)."""
    phrase: list[int] = []
    for k in range(start, min(start + _RUN, len(words))):
        word = words[k]
        if (
            not word.surface.isalpha()
            or word.surface.lower() in STOPWORDS[lang]
            or not barred.isdisjoint(word.lemmas)
        ):
            break
        phrase.append(k)
        if not adjectival(word, lang):
            break
    return phrase


def beneficiaries(words: Sequence[Word], lang: str) -> list[tuple[int, int]]:
    """The phrases of whom a thing is meant for, as (word, head) positions in ``words``: each
    word of "pro" and its noun phrase (the adjectives before its noun, and the noun) with the
    noun right before "pro" that the phrase restricts ("Kolik stojí kurz plavání pro kojence?":
    (kojence, plavání)). A "pro" after no noun ("vhodné pro děti") restricts nothing: whom it is
    for is what the question asks."""
    prep = _FOR.get(lang)
    if prep is None:
        return []
    out: list[tuple[int, int]] = []
    for i, w in enumerate(words):
        if w.surface.lower() != prep or i == 0:
            continue
        head = i - 1
        if not nominal(words[head], lang):
            continue
        # a pronoun or a quantifier ("pro vás", "pro všechny") is no one in particular; a
        # stopword only by its unaccented form is a word ("pro muže", not "může")
        phrase = _noun_phrase(words, i + 1, lang, _ANYONE[lang])
        # the phrase's noun; a verbal noun says what for, not for whom ("kurz pro vrácení
        # řidičáku", "tablety pro snížení horečky")
        if (
            phrase
            and not adjectival(words[phrase[-1]], lang)
            and not _verbal_noun(words[phrase[-1]])
        ):
            out += [(at, head) for at in phrase]
    return out


# The preposition that names whose statement a sentence reports ("podle bavorského premiéra",
# "podle statistik", "podle nové dohody").
_ACCORDING_TO = {"cs": "podle"}


def attributions(words: Sequence[Word], lang: str) -> list[int]:
    """The positions of the words of each phrase that names a statement's source: the
    adjectives after "podle" and their noun ("Kolik uprchlíků má Německo přijmout podle
    bavorského premiéra?": bavorského, premiéra). A news passage says who said it once, in the
    sentence that reports the statement ("..., řekl bavorský premiér") or the paragraph's first
    ("Podle něj ..."), so the source stands apart from the figure asked for."""
    prep = _ACCORDING_TO.get(lang)
    if prep is None:
        return []
    return [
        k
        for i, w in enumerate(words)
        if w.surface.lower() == prep
        for k in _noun_phrase(words, i + 1, lang)
    ]


def _verbal_noun(word: Word) -> bool:
    """Whether a noun is a verb's noun of action ("pokračování", "pojištění", "vrácení")."""
    w = unaccent(word.surface.lower())
    return (
        len(w) > 4  # "paní" is a woman
        and w.endswith(("ni", "ti"))
        and any(lemma.endswith(("ni", "ti")) for lemma in word.lemmas)
    )


def beneficiaries_of(tokens: Sequence[Word], head: int, lang: str) -> list[int]:
    """The positions of the words of the "pro" phrase right after the noun at ``head``
    (:func:`beneficiaries` read from the noun)."""
    return [head + k for k, h in beneficiaries(tokens[head : head + 2 + _RUN], lang) if h == 0]


def attributes(tokens: Sequence[Word], head: int, lang: str) -> list[int]:
    """The positions of the adjectives that stand before the noun at ``head`` (a run of
    adjectives, joined by conjunctions: "letní a zimní slavnost")."""
    joiners = _JOINERS.get(lang, frozenset())
    out = []
    k = head - 1
    while k >= 0 and head - k <= _RUN:
        t = tokens[k]
        if adjectival(t, lang):
            out.append(k)
        elif not (out and t.surface.lower() in joiners):
            break
        k -= 1
    return out


def attached(
    tokens: Sequence[Word], at: int, is_head: Sequence[bool], lang: str, adjective: bool
) -> bool:
    """Whether the modifier's occurrence at ``at`` in a sentence's ``tokens`` stands in its
    head's phrase (``is_head``: which tokens are the head noun; ``adjective``: the occurrence
    has an adjective's form). See the module's docstring."""
    if not adjective:
        return any(is_head)
    joiners = _JOINERS.get(lang, frozenset())
    # in a dependent right after the head: "pojištění havarijní", "slavnosti s rytířskými
    # souboji", "poslanci za opoziční stranu" (past the adjectives before it, and one
    # preposition)
    k = at - 1
    while k >= 0 and at - k <= _RUN and adjectival(tokens[k], lang):
        k -= 1
    if k >= 0 and is_head[k]:
        return True
    if k >= 1 and tokens[k].stop and tokens[k].surface.lower() not in joiners and is_head[k - 1]:
        return True
    # the noun its run of adjectives ends in
    k = at + 1
    while k < len(tokens) and k - at <= _RUN:
        t = tokens[k]
        if is_head[k]:
            return True
        if adjectival(t, lang) or t.surface.lower() in joiners:
            k += 1
            continue
        if not nominal(t, lang):
            return True  # no noun: the noun is left out ("měsíční nebo roční")
        # another noun: it qualifies that one, and a noun joined to it ("starý nábytek nebo
        # matrace")
        k += 1
        while k < len(tokens) and tokens[k].surface.lower() in joiners:
            k += 1
            while k < len(tokens) and adjectival(tokens[k], lang):
                k += 1
            if k < len(tokens) and is_head[k]:
                return True
            k += 1
        return False
    return k >= len(tokens)  # the sentence ends in its run: the noun is left out
