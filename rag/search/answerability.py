"""Answerability: does this passage answer the question? Pure; no database, no language model.

The relevance filter (:mod:`rag.search.relevance`) asks whether the corpus speaks of a question; this
stage asks whether one candidate's *evidence window* answers it. The window is the best run of
1..``answer_window`` consecutive sentences of the chunk (the chunker's sentence splitter), the
sentences' keys computed with the chunk's own key code (:func:`rag.language.keys.search_keys`). Windows
are ranked by the checks they pass, then by the idf-weighted share of the question's content
words they hold, then longer and earlier first: the sentence that names the question's words is
often next to the one that completes the answer ("Die Firma Novák gründete 1998 ein Sägewerk.
Das Werk lieferte Bretter in ganz Mähren."), and the window is the
extractive answer. The checks, all inside the window:

* required tokens: every identifier ("ZX-4411"), number and proper name of the question, by its
  lemma or stem key (a code or number by its exact form). One that occurs nowhere in the owner's
  corpus makes the question one the knowledge base cannot answer: every candidate fails, whatever
  its vector says;
* focus: the ``focus_words`` rarest content words (frame words out, nouns before verbs) must be
  in the window, and however common, the thing a "how many" counts and the position a question
  for a person names ("Jak se jmenuje vedoucí podpory?"); a candidate failing only this may
  still be admitted as a paraphrase when its vector is within ``paraphrase_max_distance`` (0:
  never);
* attachment: an attributive adjective of the question restricts its noun ("roční členství").
  Where the chunk names the noun restricted by another adjective in or before the window
  ("Měsíční členství"), the window holds the adjective only in the noun's phrase: "jednou
  ročně" or "zimní setkání" beside "letní slavnost" holds no "roční", no "zimní" for that
  noun, for the focus and for the window's keys (:mod:`rag.language.attachment`);
* answer type: the interrogative's expected type (``kolik`` → a number, ``kolik stojí`` → an
  amount, ``kdy`` → a date or time, ``kdo`` → a person, ...) must be met by a token of the window
  (:mod:`rag.language.answer_types`), unless ``require_answer_type`` is off. A token in a
  sentence before every sentence of the window that holds a question word is of what the text
  spoke of before (unless the title names the question's subject), and a contact in one naming
  another person is that person's (:func:`_owned`).

A chunk's sentences and their keys are cached per (text, language), so judging the same chunk
again costs only the comparison. That comparison is integer arithmetic: once per question every
key the checks look for gets a bit, each sentence's keys become a bit mask, and a window's checks
are ``&`` of masks (memoised per mask: a question's candidates repeat the same few).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from rag.ingest.chunking import sentence_spans
from rag.language import attachment
from rag.language.answer_types import (
    CONTACT_TYPES,
    FREE_OF_CHARGE,
    MULTIPLIERS,
    PERSON_TYPES,
    ROUND_THE_CLOCK,
    AnswerType,
    accepted_classes,
    aged,
    answer_token,
    answer_type,
    asked_units,
    asking_words,
    asks_for_a_rule,
    asks_through_a_shell,
    calendar_kin,
    cardinal_value,
    counted_word,
    frames_a_visit,
    framing,
    hypernym_keys,
    interrogative_forms,
    is_identifier,
    is_leading,
    is_name,
    is_number,
    is_position,
    looks_like_verb,
    named_day,
    named_month,
    names_a_part_of_day,
    names_a_season,
    names_a_time,
    names_a_unit_of_time,
    names_money,
    names_paying,
    names_the_answer,
    names_the_employer,
    number_values,
    numeral_compound,
    sentence_classes,
    spanned_days,
    spanned_months,
    spans_months,
    speaks_of_money,
    sum_numbers,
    word_number,
    year_spans,
)
from rag.language.derivation import (
    agentive_verbs,
    asked_families,
    families,
    finite_verb,
    held_families,
    is_infinitive,
    participle_verb,
)
from rag.language.keys import (
    PREFIX_LEN,
    Token,
    analyze,
    analyze_word,
    has_digit,
    prefix_keys_as,
    search_keys,
    stopword_forms,
    tokenize,
)
from rag.language.lemmas import dictionary_words, nominal_lemma, unknown_form
from rag.language.names import (
    ACRONYM_KEY,
    NAMED_KEY,
    acronym_keys,
    adjective_name_keys,
    is_acronym,
    name_adjective_keys,
    name_keys,
    question_acronym_keys,
    relational_keys,
    spelled_otherwise,
)
from rag.language.question_classes import asks_for_something, definitional, manner_word
from rag.language.question_keys import QueryKeys, QueryWord
from rag.language.ranges import any_number_keys, number_keys, range_keys, unit_keys
from rag.language.register import event_families, written_keys
from rag.search import stored_analysis

# the endings of a Czech l-participle, the past tense ("zkrátila", "přišli"), as written: the
# present's "posílá", "dělí" end in a long vowel (typed without accents, either may be meant)
_PAST = ("l", "la", "lo", "li", "ly")
_SENTENCE_CACHE = 8192
_WORD_CACHE = 1 << 16  # distinct words of the sentences the modifier check reads
_STOPS = frozenset(".!?…:;,\"'”“»)")  # a sentence that ends so is no heading
# Bump it whenever what sentences() returns changes (its rules, the functions it calls, the fields
# of Sentence): stored analyses of another version are then never used, and are recomputed in
# the background (rag.ingest.analysis_queue).
# 74: "Jedna" a stopword, the verbs of carrying lemmatized by their class (KEYS_VERSION 19) (73:
# a trial, never on main);
# 72: a place noun in -iště holds its action's root beside the place's (parkoviště: f:park and
# f:@park: derivation.held_families);
# 71: a cluster iotates whole (pustit / puštění, myslet / myšlení: derivation._iotated); the
# places of a town, of a building and outdoors (answer_types.PLACE_CUES); the stopwords of
# KEYS_VERSION 18, which are no names; a share of a price a sum ("30 % z ceny":
# answer_types._SHARE_OF_PRICE) (69 and 70: trials, never on main);
# 68: a recurrence ("každý týden", "každou celou hodinu") a time (answer_types._EVERY);
# 67: the adjectives in -ovací and the participles in -ovaný of an -ovat verb hold the verb's
# root (parkovací / parkovat: derivation._SUFFIXES) (64 to 66: trials, never on main);
# 63: "-ba" a suffix after a consonant only (osoba / osobní: derivation._strip);
# 62: a short form of a longer lemma holds the lemma's family (škol of škola);
# 61: the verb lemmas of KEYS_VERSION 16 (rag.language.lemmas);
# 60: the alternating stems of the -mknout verbs and of koupit and mluvit's compounds (zamknout /
# zamykat, koupit / kupovat, domluvit / domlouvat: derivation._ALTERNATING; 59: the first only);
# 58: the stopwords of KEYS_VERSION 15 (56 and 57: two longer lists, not kept);
# 55: every conjunction and connective adverb a stopword (KEYS_VERSION 12: no prefix key);
# 54: a range or a bound of numbers in words holds its numbers as one in digits does ("od šesti
# let"), and every range a key of its unit alone (v:*@rok: rag.language.ranges); the Czech
# cardinals 13 to 19 have their values;
# 53: a capitalized word in "-ové" / "-ovou" the dictionary lacks keeps its own form beside
# the woman's name it may be ("Dárkové": dárkové, Dárková; rag.language.lemmas);
# 52: a verb in před- holds its root without "před", no longer without "pře" (předplatit:
# plat, not "dplat"; derivation._PREFIXES);
# 51: the Russian cue words of a telephone by their forms ("позвонить": pozvonit, no soft
# sign; question_classes._table);
# 50: two words the dictionary gives as each other's lemma are one lemma (parkovat /
# zaparkovat: rag.language.lemmas);
# 49: a name right after a noun of a place is no person ("v aplikaci Flotila":
# answer_types._placed_names);
# 48: a phrase of heading holds its verb ("pod vedením Hany Marešové": l:vest;
# derivation.agentive_verbs);
# 47: a range or a bound of whole numbers before a unit holds each of its numbers in that unit
# (v:14@hodina: rag.language.ranges); a noun in -ně is no adverb of an adjective, though its
# genitive plural ends as one (snídaně / snídaní, kuchyně / kuchyní: derivation._roots); 46: unused
# 45: an -ost noun of an adjective in -ný / -ní holds the adjective's root (bezpečnost,
# možnost: derivation);
# 44: a noun in -oba of an -ovat verb holds the verb's root (žaloba, obhajoba: derivation);
# 43: a multiplicative numeral is a number ("šestkrát", "sechsmal":
# answer_types.multiplicative); a name declined by endings added to its nominative holds that
# nominative's stem ("Prodiho": N:prod, as "Prodi"; names.name_keys);
# 42: every case form of "jeden" is a number ("jednu cigaretu", "jedním z"; the other
# numerals are numbers by their lemmas; answer_types._NUMBER_WORDS);
# 41: a present participle holds its verb's lemma (vedoucí: l:vest), the iotated root of a
# long-voweled imperfective (uklízet: uklid, as uklidit and úklid), a noun in -ce is the agent
# of a noun of its own only (no "velice" of velí);
# 40: the rooms of a building are places, a representative and a parent persons, the beginning
# or end of an event after "do", "před", "po", "od" a date (answer_types.sentence_classes);
# 39: an adjective in bez- holds its noun's root as a prefix's (bezlepkový: f:-lepk;
# derivation._PRIVATIVE);
# 38: a prefixed verb's iotated root as its unprefixed verb's (podržet, zadržený: drh, as držet;
# derivation._iotated);
# 37: agent nouns hold their verb's root as an agent (mluvčí: f:%mluv, provozovatel:
# f:%provoz; derivation._agent_root);
# 36: the irregular forms of "jíst" at a sentence's start too (Nejezte); 35: the Czech
# ordinals from eleven to a hundred hold their digits (šedesátých: 60); 34: the
# irregular forms of "jíst" lemmatized (rag.language.lemmas); 33: the possessives in
# every case form are stopwords (svém, tvých, našimi); 32: unused; 31: the demonstratives are
# stopwords (rag.language.stopwords), which have no prefix keys;
# 30: a fee noun in -né holds its base's root (školné / škola, poštovné / pošta);
# 29: an adverb in -ně holds its adjective's root (bezpečně / bezpečný, hlavně / hlavní), an
# adjective in -šný its noun's "ch" (úspěch / úspěšný / úspěšně: derivation._velar_ch);
# 28: the first four letters of a word the dictionary lacks (u:) and the first five of every
# word (q:), by which a focus word of the dictionary meets it;
# 26: a noun made from a prefixed verb holds the verb's root (výměna / vyměnit, prodej / prodat:
# derivation._deverbal_root);
# 25: a relational adjective's keys of the name it is derived from (Barmští: r:barm, irácký:
# r:irak; names.adjective_name_keys);
# 24: the velar's iotation in the participles and verbal nouns of -hnout and -knout verbs
# (dosáhnout / dosažení, zamknout / zamčený), a participle's root without a mobile "e";
# 23: the iotated roots of -tit and -dit verbs in their verbal nouns and participles (vyřídit /
# vyřízení, vrátit / vrácený; a verb's "č" its own: ukončit / ukončení), the participles in -ěný
# and -tý (zraněný, posunutý: derivation._iotated);
# 22: the cue nouns of persons and places in a case the lemmatizer lacks, by their stem ("na
# webu": answer_types._unknown_stems);
# 21: the verbs whose stem alternates hold one root (přivést / přivádět / přívod, přijmout /
# přijímat / přijetí: derivation._alternating_root);
# 20: the prefixed verbs of motion hold their noun's root (odjet / odjezd, přijít / příchod);
# 19: place nouns in -iště hold their action's root as a place (parkoviště: f:@park); 18: a
# -tit verb's "c" spelled "t" in its family root (vracet / vrátit), the adjectives of
# l-participles (prasklý / prasknout); 17: the tens and a hundred in words hold their value
# (osmdesát: 80); 16: relational adjectives of -ost nouns (pohotovostní); 15: a noun's mobile
# "e" (týden / týdne), adverbs in -ě, verbal nouns in -tí, the present in -eje
# (derivation._fixed_e);
# 14: a family root's vowel length and the -ír- of imperfectives made plain, passive participles
# (derivation._plain_vowels); 13: the numbers of compound adjectives (šestinásobný); 12: Russian
# word families; 11: a numbered heading's first word is no name; 10: a blank line ends a sentence
# (rag.ingest.chunking.sentence_spans); 9: a prefixed verb's root without its prefix held apart
# (derivation.held_families); 8: contacts by kind (e-mail, telephone), a line's number in digits;
# 7: acronyms and the runs of words they spell; 6: verb forms lemmatized by their conjugation
# class; 5: feminine surnames their own lemma; 4: word families with a plain final consonant,
# "-ka" nouns
ANALYSIS_VERSION = 74


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int  # offsets into the chunk's text
    end: int
    keys: frozenset[str]  # its words' lemma, stem and prefix keys
    forms: frozenset[str]  # its words, unaccented
    classes: tuple[tuple[str, tuple[str, ...]], ...]  # token classes held, with their tokens
    beginnings: frozenset[str] = frozenset()  # the first _DERIVED letters of its longer words


def _spans(text: str) -> list[tuple[int, int]]:
    """The chunker's sentences, also cut at blank lines: a heading is not part of its paragraph's
    first sentence (and its capitals are no names)."""
    out = []
    for start, end in sentence_spans(text):
        for m in _PARAGRAPH.finditer(text, start, end):
            out.append((m.start(), m.end()))
    return out


_PARAGRAPH = re.compile(r"\S(?:.*?\S)??(?=\s*\n\s*\n|$)|\S", re.S)


@lru_cache(maxsize=_SENTENCE_CACHE)
def sentences(text: str, lang: str) -> tuple[Sentence, ...]:
    """The sentences of a chunk with their keys and token classes (cached per text)."""
    out = []
    for start, end in _spans(text):
        part = text[start:end]
        tokens = analyze(part, lang)
        keys = frozenset(
            [
                *(k for t in tokens for k in search_keys(t)),
                # the first letters by which a focus word of the dictionary may meet the word
                *_prefix_keys(tokens, lang),
                # "10 000" and "10 tisíc" are one number to a reader, and a question types
                # it "10000"
                *(f"l:{value}" for _, value in number_values(part, lang)),
                # "12 až 18 hodin" holds 14 hours (rag.language.ranges)
                *range_keys(part, lang),
                # "pod vedením Hany Marešové" names who leads (l:vest)
                *agentive_verbs(part, lang),
                *_written_otherwise(part, tokens, lang),
                *_related_forms(tokens, lang),
            ]
        )
        lemmas = {lemma for t in tokens for lemma in t.lemmas}
        classes = sentence_classes(
            part, [t.surface for t in tokens], [t.form for t in tokens], lemmas, lang
        )
        forms = frozenset(t.form for t in tokens)
        beginnings = frozenset(f[:_DERIVED] for f in forms if len(f) >= _DERIVED)
        out.append(Sentence(start, end, keys, forms, tuple(classes.items()), beginnings))
    return tuple(out)


def _related_forms(tokens: list[Token], lang: str) -> list[str]:
    """Keys of a sentence's words by their family and, for a capitalized word, by its name's
    stem (:mod:`rag.language.derivation`, :mod:`rag.language.names`): "žádost" holds the
    family of "zažádám", "Marchionne" the name of "Marchionneho"; and its acronyms both ways
    ("Česká republika" holds what "ČR" asks for, "ČR" what "České republice" does)."""
    out = [k for t in tokens for k in held_families(t.surface, lang)]
    # a present participle holds its verb ("Vedoucí kroužku je ..." names who "vede" it)
    out += [k for t in tokens if (k := participle_verb(t.surface, lang)) is not None]
    out += [k for t in tokens for k in name_keys(t.surface, lang)]
    out += acronym_keys([t.surface for t in tokens])
    return out


def encode_sentences(sents: tuple[Sentence, ...]) -> list[list[Any]]:
    """A chunk's :func:`sentences` as stored (JSON: every field of each Sentence, in order)."""
    return stored_analysis.encode(sents)


def analysis_json(text: str, lang: str) -> str:
    """A chunk's analysis as stored: :func:`sentences` encoded, computed without its per-process
    cache (a batch of chunks no search asked for would only push out the ones it did)."""
    analysed = sentences.__wrapped__(text, lang)
    return json.dumps(encode_sentences(analysed), ensure_ascii=False, separators=(",", ":"))


def decode_sentences(stored: str | bytes) -> tuple[Sentence, ...]:
    """The sentences :func:`encode_sentences` stored (the JSON text), equal to what
    :func:`sentences` returns."""
    return _DECODE(stored)


def stored_sentences(text: str, lang: str, stored: str | None) -> tuple[Sentence, ...]:
    """A chunk's sentences from its stored analysis (JSON of :func:`encode_sentences`, read only
    when it is of ANALYSIS_VERSION), or computed by :func:`sentences` when there is none."""
    if stored is not None:
        try:
            return decode_sentences(stored)
        except (ValueError, TypeError):  # a damaged row: the rules, as without one
            pass
    return sentences(text, lang)


_DECODE = stored_analysis.decoder(Sentence, globals())

_HYPHEN = re.compile(r"[-\u2010\u2011]")


# A Czech, Slovak or Polish name may stand in a passage as an adjective derived from its first
# letters ("Polsko" ~ "polský", "Británie" ~ "britský", "Indonésii" ~ "indonéském"), not as
# any word of them: "Německu" is not "neměli", nor "Rakousku" "rakovinu". The adjectives'
# endings, as spelled; elsewhere any word counts (Russian derives names from nouns as well:
# "Ледниковый период" ~ "ледники"; German and English capitalize their adjectives of names).
_ADJECTIVE_ENDINGS: dict[str, re.Pattern[str]] = {
    "cs": re.compile(r"(?:ý|á|é|ého|ému|ém|ým|ých|ými|(?:sk|ck)ou|[nc](?:í|ího|ímu|ím|ích|ími))$"),
    "sk": re.compile(
        r"(?:ý|á|é|ého|ému|om|ým|ých|ými|(?:sk|ck)ou|[nc](?:í|ieho|iemu|ím|ích|ími))$"
    ),
    "pl": re.compile(r"(?:sk|ck|n)(?:i|a|ie|iego|iemu|im|ich|imi|ą|y|e|ego|emu|ym|ych|ymi)$"),
}


def _adjective(surface: str, lang: str) -> bool:
    """Whether a lower-case word may be derived from a name: in Czech, Slovak and Polish it has
    the ending of an adjective."""
    pattern = _ADJECTIVE_ENDINGS.get(lang)
    return pattern is None or pattern.search(surface) is not None


def bare_employer(words: Sequence[QueryWord], at: int, lang: str) -> bool:
    """Whether the question word at ``at`` names the asker's own organisation
    (:func:`names_the_employer`) and stands bare: no attribute before it ("výtahová firma"),
    no name after it ("firma Elektroservis", "podnik ČEZ")."""
    if not names_the_employer(words[at].form, lang):
        return False
    before = words[at - 1].surface if at > 0 else ""
    after = words[at + 1].surface if at + 1 < len(words) else ""
    pattern = _ADJECTIVE_ENDINGS.get(lang)
    # an adjective, in lower case or as the question's first word ("Tuzemská firma ...")
    attributed = (
        (before.islower() or at == 1)
        and pattern is not None
        and pattern.search(before.lower()) is not None
    )
    return not attributed and not (after and is_name(after, at + 1, lang))


def _written_otherwise(text: str, tokens: list[Token], lang: str) -> list[str]:
    """Keys of what a sentence's words say in another spelling than their own key: the prefix
    of a name or of an adjective derived from one ("n:"), the number of a numeral compound
    ("5-Zylinder" holds 5, "1970ern" the 70s), the parts of a hyphenated
    compound ("MLS-Team" holds MLS, "XLIX-Champion" XLIX), a number word's digits ("vier",
    "čtyřech": 4; "druhé": 2) and a span's shortened last year ("1620—21": 1621)."""
    out = []
    for t in tokens:
        surface = t.surface
        if t.prefix and (surface[0].isupper() or _adjective(surface, lang)):
            out.append(NAMED_KEY + t.prefix)
            out += adjective_name_keys(surface, lang)
        compound = numeral_compound(surface) if has_digit(surface) else None
        if compound is not None:
            out += [f"l:{n}" for n in compound.numbers]
            if compound.decade:
                out.append(f"l:{compound.decade}")
        elif (value := word_number(t.lemmas, lang)) is not None:
            out.append(f"l:{value}")
        if (compound is not None or not has_digit(surface)) and _HYPHEN.search(surface):
            # a code is one word ("ZX-4411" holds no 4411), a compound's words are words
            words = [w for w in _HYPHEN.split(surface) if w and not has_digit(w)]
            for part in analyze(" ".join(words), lang):
                out += search_keys(part)
    for written, _, last in year_spans(text, lang):
        if str(last) not in written:  # "1620—21": 1621 is written nowhere else
            out.append(f"l:{last}")
    return out


@dataclass(frozen=True, slots=True)
class Need:
    """A question word the window must hold."""

    surface: str
    keys: tuple[str, ...]  # lemma and stem keys
    df: int
    kind: str  # "identifier" | "number" | "name" | "focus"
    prefixes: tuple[str, ...] = ()
    group: int = -1  # names: the position of the first word of its name ("Jimmy Carter")
    prefix_df: int = 0
    form: str = ""
    # written with a multiplier, digit groups or a word part (value keys too), or before its unit
    # (range keys: rag.language.ranges)
    valued: bool = False
    # a focus word that names the predication (its lemma an infinitive; in German not
    # capitalized, since every German noun is): a passage says it in other verbs as often as not
    verb: bool = False
    # keys that also meet it: a focus word's family ("f:žád" of "zažádám": "žádost"), a name's
    # stem ("N:marchionn" of "Marchionneho": "Marchionne")
    related: tuple[str, ...] = ()
    # the lemma keys of the written words for a spoken one ("šéf": "l:vedouci";
    # rag.language.register)
    written: tuple[str, ...] = ()
    # a unit of time the question measures in ("na týden"), not the one it counts ("kolik
    # dní"): no vector stands in for it
    unit: bool = False
    # a whole number right after a name is part of it, its version or member ("Skladník 3",
    # "Praha 6"), held only right after the name: the name's lemma keys (:func:`_designated`)
    designates: tuple[str, ...] = ()
    # the lemma keys of the classes a kinship noun is one of ("syn": "l:dite"): a rule for the
    # class holds for it (answer_types.hypernym_keys)
    classes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Phrase:
    """A question's attributive adjective and the noun it restricts ("roční členství"):
    :func:`_detached` holds the adjective for a window only in the noun's phrase."""

    modifier: str  # as the question writes it
    keys: frozenset[str]  # the modifier's lemma, stem, prefix and family keys: its occurrences
    beginning: str  # its first _DERIVED letters (or ""): an occurrence by derivation
    head: frozenset[str]  # the noun's lemma and stem keys
    drop: frozenset[str]  # the keys a window lacks when it holds the modifier only elsewhere
    # whom the noun is meant for ("pro kojence"), not an adjective before it
    beneficiary: bool = False


@dataclass(frozen=True, slots=True)
class QuestionNeeds:
    """What a question asks of a window; computed once per question."""

    answer_type: AnswerType | None
    required: tuple[Need, ...]  # identifiers, numbers, names
    focus: tuple[Need, ...]
    content: tuple[tuple[str, tuple[str, ...], float], ...]  # (surface, keys, idf): ranks windows
    absent: tuple[str, ...]  # required tokens the corpus lacks entirely
    asked: frozenset[str] = frozenset()  # the question's forms and lemma bodies
    # opened by an interrogative: it asks for something, not whether (question_classes)
    asks_for: bool = False
    phrases: tuple[Phrase, ...] = ()  # attributive adjectives and their nouns (attachment)
    # whom a noun is meant for ("kurz plavání pro kojence": kojence, with the noun's keys)
    beneficiaries: tuple[Phrase, ...] = ()
    # the focus verbs of a Czech question for a person ("vede" of "Kdo vede muzeum skla?"): the
    # relation asked about, which no vector stands in for
    relations: frozenset[str] = frozenset()
    # a word of a name the corpus lacks, where it has the name's other words ("Credit" of
    # "Credit Suisse Česku"): another name of the same words, unless spelled otherwise
    strays: tuple[Need, ...] = ()
    # it asks for the one who holds a position it names ("Kdo je vedoucí kuchyně?"): a person's
    # name answers, not another noun for a person ("od lékaře") nor an acronym ("přes VPN")
    holder: bool = False
    # it counts a thing it names ("Kolik zastupitelů hlasovalo?"): a number written as a sum of
    # money ("za 850 korun") counts crowns, not the thing, and does not answer
    tally: bool = False
    # it asks what may, can or must be done ("Smím půjčit notebook manželce?"): a rule for the
    # family holds for a relative it names (answer_types.hypernym_keys)
    rule: bool = False
    # the action a how-to question asks the manner of ("zaplatím" of "Jak zaplatím kurz?"), ""
    # for any other question: a sum says what is paid, not how
    manner: str = ""
    plan: _Plan | None = field(default=None, compare=False, repr=False)  # the needs as bit masks
    # the counts it writes in words, each with the lemma keys of what it counts ("pro třicet
    # lidí": "30", l:clovek): a window counting the same thing otherwise does not answer
    counts: tuple[tuple[str, frozenset[str]], ...] = ()


def idf(df: int, n: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def question_needs(
    query: QueryKeys,
    form_keys: dict[str, list[str]],
    key_df: dict[str, int],
    chunk_count: int,
    focus_words: int,
) -> QuestionNeeds:
    """Classify a question's words: required tokens, focus words and the expected answer type."""
    lang = query.lang
    n = max(chunk_count, 1)
    position: dict[str, int] = {}
    for i, w in enumerate(query.all_words):
        position.setdefault(w.form, i)

    # a word's own lemmas, then the ones the corpus's form map gives its unaccented form: typed
    # without diacritics, "stoji" lemmatizes to itself, and the corpus's "stojí" says "stát"
    def lemmas_of(w: QueryWord) -> list[str]:
        own = [k[2:] for k in w.keys if k[0] == "l"]
        return own + [k[2:] for k in form_keys.get(w.form, []) if k[2:] not in own]

    lemmas = [lemma for w in query.all_words for lemma in lemmas_of(w)]
    forms = [w.form for w in query.all_words]
    kind = answer_type(forms, lemmas, lang)
    if kind == "person":
        named = [
            is_name(w.surface, position.get(w.form, i), lang) for i, w in enumerate(query.all_words)
        ]
        if definitional(forms, named, lang):
            kind = None  # "Kdo je Novák?": any passage about Novák answers
    # the interrogatives' words, and those of the phrase this question asks with ("dny" of "Ve
    # které dny rozvážíte?", a content word elsewhere)
    asking = interrogative_forms(lang) | asking_words(forms, lang)
    # a question whether ("Může jít čtrnáctiletý syn do vířivky?"): any limit of its number's
    # unit answers it, whichever side of it the number lies (rag.language.ranges)
    whether = kind is None and not asks_for_something(forms, lang)
    # a question for a rule ("Smím půjčit notebook manželce?"): a rule for the family holds
    # for a relative (answer_types.hypernym_keys)
    rule = asks_for_a_rule(lemmas, lang)
    accented = not all(w.surface.isascii() for w in query.all_words)
    timed = any(names_a_time(lemmas_of(w), w.form) for w in query.all_words)
    shelled = asks_through_a_shell(forms, [lemmas_of(w) for w in query.all_words], lang)
    asked_at = asked_units(forms, lang)
    # a how-to question's action ("Jak přihlásím dítě na plavání?": přihlásit), in any word class
    contentful = {w.form for w in query.words}
    how = manner_word(forms, [w.form in contentful for w in query.all_words], lang)
    action = query.all_words[how].form if how is not None else None

    required: list[Need] = []
    last_at = -2
    ranked: list[tuple[int, int, int, Need]] = []
    besides: list[Need] = []  # focus words beyond the count: words of a class
    content = []
    # "11 tisíc" and "11 000" are 11000, the way a passage may write it ("11.000", "11 tis.")
    values: dict[str, list[str]] = {}
    for written, value in number_values(" ".join(w.surface for w in query.all_words), lang):
        for part in written.split():
            if any(c.isdigit() for c in part):
                values.setdefault(part, []).append(f"l:{value}")
    acronyms = question_acronym_keys([w.surface for w in query.all_words])
    # the question's words as rag.language.attachment reads them, and those of a statement's
    # source ("podle bavorského premiéra"): no focus words
    read = _attachment_words(query) if lang in attachment.LANGS else []
    sourced = frozenset(attachment.attributions(read, lang))
    # the words that only frame the question; none where nothing else is asked about
    framed = framing(
        [(lemmas_of(w), w.form, w.surface if accented else None) for w in query.words], kind, lang
    )
    for i, w in enumerate(query.words):
        spelled = acronyms.get(position.get(w.form, -1), ())
        if w.form in asking and not is_name(w.surface, position.get(w.form, i), lang):
            # "dlouho" of "jak dlouho", or "kolik" of a question taken for Slovak; but the
            # surname Dlouhý is no "jak dlouhý"
            continue
        keys = tuple(
            dict.fromkeys([*(k for k in w.keys if k[0] in "ls"), *form_keys.get(w.form, [])])
        )
        # a spoken word is as common as its written words are (rag.language.register)
        said = written_keys(w.surface, lang)
        df = max((key_df.get(k, 0) for k in keys + said), default=0)
        word_lemmas = lemmas_of(w)
        if is_identifier(w.surface):
            required.append(Need(w.surface, keys, df, "identifier"))
        elif compound := (numeral_compound(w.surface) if has_digit(w.surface) else None):
            # its number, as the passage may write it ("5 Zylinder", "vier", "1970ern" for
            # "70ern"): only a window can tell that it is absent
            spelled = (compound.decade,) if compound.decade else compound.numbers
            number_keys = tuple(f"l:{n}" for n in spelled if f"l:{n}" not in keys)
            required.append(
                Need(
                    w.surface,
                    keys + number_keys,
                    df,
                    "number",
                    valued=True,
                    # "10letý": "děti do 12 let"
                    related=_aged_keys(w.surface, lang, whether),
                )
            )
        elif is_number(w.surface):
            valued = tuple(k for k in values.get(w.surface, ()) if k not in keys)
            # "na cestě 14 hodin": a window's range in that unit holds it ("12 až 18 hodin");
            # then only a window can tell that it is absent
            ranged = _measured(w.surface, query, position.get(w.form, i), whether)
            required.append(
                Need(
                    w.surface,
                    keys + valued,
                    df,
                    "number",
                    valued=bool(valued or ranged),
                    related=ranged,
                    designates=() if ranged else _designated(query, position.get(w.form, i)),
                )
            )
        elif is_name(w.surface, at := position.get(w.form, i), lang):
            prefixes = tuple(k for k in w.keys if k[0] == "p")
            pdf = max((key_df.get(k, 0) for k in prefixes), default=0)
            prefixes = prefix_keys_as(NAMED_KEY, prefixes)  # a name or its adjective
            last = required[-1] if required else None
            joined = last is not None and last.kind == "name" and last_at == at - 1
            group = last.group if joined and last is not None else at
            # its stems ("Prodiho": the "Prodi" of a passage), its adjective where the corpus
            # has no word of the name itself ("v Barmě" over "Barmští opozičníci"), or spells
            # the name's "k" as "c" ("z Iráku": "iráckého")
            related = name_keys(w.surface, lang) + spelled + name_adjective_keys(w.keys)
            required.append(
                Need(w.surface, keys, df, "name", prefixes, group, pdf, w.form, related=related)
            )
            last_at = at
        elif names_the_answer(kind, word_lemmas, w.form, lang, timed, shelled):
            continue  # "telefonní číslo", "za kolik koupit": as "jak dlouho" does
        elif frames_a_visit(word_lemmas, forms, position[w.form], lang):
            continue  # "Můžu přijet bez objednání?": whether a visit is possible
        elif bare_employer(query.all_words, position[w.form], lang):
            continue  # "Kolik mi firma dává na stravenky?": the documents' author
        elif position[w.form] in sourced and w.form not in framed:
            # who said it, not what was said: a passage names its source once, in the sentence
            # that reports the statement or the paragraph's first, so no window need hold it;
            # it counts in the chunk's words as every content word does
            pass
        elif w.form not in framed:
            # "syn": a window's "děti", unless the question asks who he is (a child is not the
            # son); "desetiletý": its "do 12 let" (answer_types.aged)
            kin = hypernym_keys(word_lemmas, w.form, lang, rule) if kind not in PERSON_TYPES else ()
            years = _aged_keys(w.surface, lang, whether)
            verb = _a_verb(w.surface, word_lemmas, lang)
            prefixes = tuple(k for k in w.keys if k[0] == "p")
            predicate = verb and (lang != "de" or w.surface[:1].islower())
            need = Need(
                w.surface,
                keys,
                df,
                "focus",
                _prefixes_met(w.surface, w.form, prefixes, lang),
                form=w.form,
                verb=predicate,
                unit=names_a_unit_of_time(word_lemmas, w.form)
                and position[w.form] not in asked_at
                and kind not in _TIMED_KINDS,
                related=families(w.surface, lang)
                + event_families(w.surface, lang)
                + asked_families(w.surface, kind, lang)
                + participle_keys(w.surface, lang)
                + spelled
                + relational_keys(w.surface, prefixes, df, lang)
                # "víkendu": a window's "v sobotu" (answer_types.calendar_kin)
                + calendar_kin(word_lemmas, w.form)
                + years,
                written=said,
                classes=kin,
            )
            if (
                kin
                or years
                or names_money(word_lemmas, w.form)
                or names_paying(word_lemmas, w.form)
            ):
                # "Vrátíte mi peníze za zkoušku, když ji nesložím?", "Může šestiletá dcera do
                # sauny?": money is said by every price and fee (_said_otherwise), a daughter by
                # every rule for children, an age by every range of years, so such a word
                # narrows the question less than any other; it is checked besides the focus
                # words, never in place of one
                besides.append(need)
            else:
                ranked.append((int(verb), df, i, need))
        else:
            continue
        all_keys = tuple(dict.fromkeys([*w.keys, *form_keys.get(w.form, [])]))
        content.append((w.surface, all_keys, idf(df, n)))
    ranked.sort(key=lambda r: r[:3])
    focus = tuple(r[3] for r in ranked[:focus_words])
    if focus_words:
        focus += tuple(besides)
        # the action a how-to question asks the manner of is what it asks about, however many
        # nouns it names: a verb ranks after them, but a window that says how swimming lessons
        # go and not how one signs up for them does not answer (its family holds it: "Na kurzy
        # se přihlašuje ..."; a close vector may stand in for it, as for any focus word: a
        # passage says "zaznamenáváte" for "zapíšu", "požádejte" for "zažádám"). Not a verb in the
        # past tense (an l-participle): "Jak se zkrátila doba ...?" asks by how much.
        manner = next(
            (
                n
                for n in (*(r[3] for r in ranked), *besides)
                if n.verb and n.form == action and not n.surface.lower().endswith(_PAST)
            ),
            None,
        )
        if manner is not None and manner not in focus:
            focus += (manner,)
    else:
        manner = None
    # "kolik telefonů": the thing counted is the question's focus however common it is; a window
    # that counts notebooks does not answer (no verb counts anything: "kolik vydělává")
    counted = counted_word([w.form for w in query.all_words], lang) if focus_words else None
    tally = False
    if counted is not None:
        form = query.all_words[counted].form
        extra = [r[3] for r in ranked if r[3].form == form and not r[0]]
        if extra and extra[0] not in focus:
            focus += (extra[0],)
        # it counts a thing ("Kolik zastupitelů hlasovalo?"): a sum of money counts crowns
        tally = kind == "number" and bool(extra)
    # "Jak se jmenuje vedoucí zákaznické podpory?": the position is what the person asked for
    # holds, however common the word; a window naming another person of the department does not
    # answer (the first position the question names; "vedoucí" ends as "péci" does, so by the
    # table, never by its word class)
    holder = False
    post = None
    if kind in PERSON_TYPES and focus_words:
        post = next(
            (
                r[3]
                for r in ranked
                if is_position([k[2:] for k in r[3].keys if k[0] == "l"], r[3].form, lang)
            ),
            None,
        )
        if post is not None and post not in focus:
            focus += (post,)
        # "Kdo vede účtárnu?", "Kdo šéfuje IT provozu?" (its written verbs: vést, řídit)
        heads = any(
            is_leading([k[2:] for k in r[3].keys + r[3].written if k[0] == "l"], r[3].form, lang)
            for r in ranked
        )
        holder = post is not None or heads
    absent = tuple(
        r.surface for r in required if r.kind != "name" and r.df == 0 and not _groupable(r)
    )
    # A name is absent when no word of it occurs in the corpus, not even by its first letters
    # (an inflected name the lemmatizer misreads still shares them): the refusal is final.
    groups: dict[int, list[Need]] = {}
    strays: tuple[Need, ...] = ()
    for r in required:
        if r.kind == "name":
            groups.setdefault(r.group, []).append(r)
    for members in groups.values():
        # an acronym the corpus lacks may stand in it spelled out ("ČR": "Česká republika")
        spelled_out = len(members) == 1 and is_acronym(members[0].surface)
        missing = [m for m in members if m.df == 0 and m.prefix_df == 0]
        if not spelled_out and len(missing) == len(members):
            absent += tuple(m.surface for m in members)
        elif missing:
            strays += tuple(m for m in missing if not is_acronym(m.surface))
    asked = frozenset(
        {w.form for w in query.all_words}
        | {k[2:] for w in query.all_words for k in w.keys}
        | {n for w in query.all_words for n in _compound_numbers(w.surface)}
        # the written words of its spoken ones: "vedoucí" is no answer to "Kdo šéfuje ...?"
        | {k[2:] for w in query.all_words for k in written_keys(w.surface, lang)}
    )
    phrases: tuple[Phrase, ...] = ()
    beneficiaries: tuple[Phrase, ...] = ()
    if lang in attachment.LANGS:
        # the position a holder is asked by is the question's head noun, whatever its word
        # class ("vedoucí sauny" is the one who heads the sauna, not "the leading saunas"):
        # a window holds it wherever it stands ("vedoucí provozu Radek Vaculík")
        phrases = tuple(
            p
            for p in _phrases(query, read, form_keys, focus, content)
            if post is None or p.modifier != post.surface
        )
        beneficiaries = _beneficiaries(query, read, form_keys)
    needs = QuestionNeeds(
        kind,
        tuple(required),
        focus,
        tuple(content),
        absent,
        asked,
        asks_for_something(forms, lang),
        phrases,
        beneficiaries,
        # and the position a holder is asked by ("Kdo je ředitelem elektrárny?"): a window
        # naming someone near the plant without the position names whoever else
        frozenset(f.surface for f in focus if _czech_verb(f) or f == post)
        if lang == "cs" and kind in PERSON_TYPES
        else frozenset(),
        strays,
        holder,
        tally,
        rule,
        manner.surface if manner is not None else "",
    )
    return replace(needs, plan=_Plan(needs), counts=_counts(query))


# What compares a count rather than states it ("více než dvě", "do třiceti lidí", "asi pět"),
# unaccented: a window's other number does not gainsay a bound.
_BOUNDING = frozenset(
    """vice mene nez pres kolem okolo asi temer skoro zhruba priblizne nejmene nejvyse nejvys
    alespon aspon az bezmala necelych necela necele pod nad do od""".split()
)


def _counts(query: QueryKeys) -> tuple[tuple[str, frozenset[str]], ...]:
    """A Czech question's counts written as words, each with the lemma keys of the noun it
    counts ("Kolik stojí dort pro třicet lidí?": "30" of "lidí"; "sedm českých turistů":
    "turistů"); not a bound ("do třiceti lidí", "od svých devíti let"), a number multiplied
    ("osm milionů"), nor a noun numeral ("Pražská šestnáctka")."""
    if query.lang != "cs":
        return ()
    words = query.all_words
    out = []
    for i, w in enumerate(words[:-1]):
        value = cardinal_value([k[2:] for k in w.keys if k[0] == "l"], "cs")
        if (
            value is None
            or _NOUN_NUMERAL.search(w.form)
            or any(v.form in _BOUNDING for v in words[max(0, i - 2) : i])
        ):
            continue
        at = i + 1
        while at < len(words) - 1 and at <= i + 2 and _adjective(words[at].surface.lower(), "cs"):
            at += 1  # "sedm českých turistů": the noun after its attributes
        noun = words[at]
        lemmas = [k[2:] for k in noun.keys if k[0] == "l"]  # in order: the first decides a verb
        if (
            lemmas
            and noun.surface.isalpha()
            and cardinal_value(lemmas, "cs") is None
            and not any(noun.form.startswith(m) for m, _ in MULTIPLIERS.get("cs", ()))
            and not _adjective(noun.surface.lower(), "cs")
            and not _a_verb(noun.surface, lemmas, "cs")
        ):
            out.append((value, frozenset("l:" + lemma for lemma in lemmas)))
    return tuple(out)


# The endings of the nouns made of numerals (šestnáctka, desítka, stovka, dvojice): a name or
# a thing, no count.
_NOUN_NUMERAL = re.compile(r"(?:k[aouy]|kou|kach|kami|ek|ice|ici|ic)$")


def _counted_otherwise(
    window: str, lang: str, counts: tuple[tuple[str, frozenset[str]], ...]
) -> bool:
    """Whether ``window`` counts a thing the question counts, and never by the question's number
    ("pro 8 lidí ..., pro 16 lidí" for "pro třicet lidí"): it answers for other numbers. A
    bounded count ("až tři děti") is no other number."""
    tokens = analyze(window, lang)
    said: dict[int, set[str]] = {}
    for at, (a, b) in enumerate(zip(tokens, tokens[1:], strict=False)):
        value = a.surface if a.surface.isdigit() else cardinal_value(a.lemmas, lang)
        if value is None or (at > 0 and tokens[at - 1].form in _BOUNDING):
            continue  # "až tři děti" bounds the count of a family ticket: two children fit
        keys = {key for key in search_keys(b) if key[0] == "l"}
        for n, (_, counted) in enumerate(counts):
            if keys & counted:
                said.setdefault(n, set()).add(str(int(value)))
    return any(n in said and value not in said[n] for n, (value, _) in enumerate(counts))


def participle_keys(surface: str, lang: str) -> tuple[str, ...]:
    """The lemma key of a participle's verb ("vedoucí": the "vede" of "Podporu vede ...")."""
    verb = participle_verb(surface, lang)
    return (verb,) if verb is not None else ()


# A sentence's keys of a word's first letters for a focus word the dictionary knows: the first
# four of a word it lacks, the first five of any word (rag.language.lemmas).
UNKNOWN_PREFIX = "u:"
LONG_PREFIX = "q:"
_LONG_PREFIX_LEN = PREFIX_LEN + 1


def _prefix_keys(tokens: list[Token], lang: str) -> list[str]:
    out = []
    words = dictionary_words(lang)
    for t in tokens:
        if not t.prefix:
            continue
        if len(t.form) >= _LONG_PREFIX_LEN:
            out.append(LONG_PREFIX + t.form[:_LONG_PREFIX_LEN])
        if words is not None and unknown_form(t.surface, lang, words):
            out.append(UNKNOWN_PREFIX + t.prefix)
    return out


def _prefixes_met(surface: str, form: str, prefixes: tuple[str, ...], lang: str) -> tuple[str, ...]:
    """The prefix keys by which a focus word meets a window's word of its first letters: for a
    word the dictionary lacks, whose relatives it cannot name, any word's first four ("p:");
    for a word it knows, the first four of a word it lacks ("u:") and the first five of any
    ("q:"). Two words of the dictionary that share only four letters are mostly two words
    ("vodoměry" and "vodovodu", "stravenkovou" and "straně"); five are a root ("přesnosti" and
    "přesné", "povodním" and "povodňová")."""
    words = dictionary_words(lang)
    if words is None or unknown_form(surface, lang, words):
        return prefixes
    longer = (LONG_PREFIX + form[:_LONG_PREFIX_LEN],) if len(form) >= _LONG_PREFIX_LEN else ()
    return prefix_keys_as(UNKNOWN_PREFIX, prefixes) + longer


def _phrases(
    query: QueryKeys,
    read: list[attachment.Word],
    form_keys: dict[str, list[str]],
    focus: tuple[Need, ...],
    content: list[tuple[str, tuple[str, ...], float]],
) -> tuple[Phrase, ...]:
    """The question's attributive adjectives among its content words (``read``: its words as
    :func:`_attachment_words` gives them), with their nouns
    (:func:`rag.language.attachment.question_phrases`)."""
    lang = query.lang
    words = query.all_words
    found = attachment.question_phrases(read, lang)
    if not found:
        return ()
    weighed = {surface: keys for surface, keys, _ in content}
    own = {f.surface: f for f in focus}

    def keys_of(w: QueryWord) -> set[str]:
        keys = {*w.keys, *form_keys.get(w.form, []), *families(w.surface, lang)}
        if w.surface in own:
            keys.update(own[w.surface].related + own[w.surface].written + own[w.surface].classes)
        return keys

    keyed = [(w.form, keys_of(w)) for w in query.words]
    out = []
    for m, h in found:
        modifier, head = words[m], words[h]
        if modifier.surface not in weighed or head.surface not in weighed:
            continue
        mine = keys_of(modifier)
        others = set().union(*(keys for form, keys in keyed if form != modifier.form))
        form = modifier.form
        out.append(
            Phrase(
                modifier.surface,
                frozenset(k for k in mine if k[0] in "lspf"),
                form[:_DERIVED] if len(form) >= _DERIVED else "",
                frozenset(k for k in keys_of(head) if k[0] in "ls"),
                frozenset(k for k in mine - others if k[0] in "lspf"),
            )
        )
    return tuple(out)


def _attachment_words(query: QueryKeys) -> list[attachment.Word]:
    """A question's words as :mod:`rag.language.attachment` reads them."""
    stops = stopword_forms(query.lang)
    return [
        attachment.Word(w.surface, tuple(k[2:] for k in w.keys if k[0] == "l"), w.form in stops)
        for w in query.all_words
    ]


def _beneficiaries(
    query: QueryKeys, read: list[attachment.Word], form_keys: dict[str, list[str]]
) -> tuple[Phrase, ...]:
    """The question's phrases of whom a thing is meant for, each word of one with the keys of
    the noun it restricts (:func:`rag.language.attachment.beneficiaries`; ``read`` as for
    :func:`_phrases`)."""
    lang = query.lang
    words = query.all_words
    out = []
    for at, h in attachment.beneficiaries(read, lang):
        word, head = words[at], words[h]
        keys = {*word.keys, *form_keys.get(word.form, []), *families(word.surface, lang)}
        heads = {*head.keys, *form_keys.get(head.form, [])}
        out.append(
            Phrase(
                word.surface,
                frozenset(k for k in keys if k[0] in "lspf"),
                "",
                frozenset(k for k in heads if k[0] in "ls"),
                frozenset(),
                beneficiary=True,
            )
        )
    return tuple(out)


# a sentence's words as rag.language.attachment reads them, each word's keys, and its form
_Tokens = tuple[list[attachment.Word], list[frozenset[str]], list[str]]


def _detached(
    text: str,
    lang: str,
    sents: tuple[Sentence, ...],
    window: tuple[int, int],
    needs: QuestionNeeds,
) -> tuple[Phrase, ...]:
    """The phrases whose modifier the window holds only outside its noun's phrase, where the
    chunk restricts the noun by another adjective in or before the window: "roční" of "roční
    členství" over "Měsíční členství ... Zmrazit ho můžete jednou ročně", "zimní" of "zimní
    slavnost" over "Na zimní setkání a na letní slavnost". Where the noun is not there, or not
    restricted otherwise ("ručník" of "vlastní ručník" over "vzít ručník ... vlastním zámkem"),
    the modifier is held as it is (:mod:`rag.language.attachment`)."""
    i, j = window
    # the chunk up to the window's end: a kind of the noun the text introduced before is the
    # one its bare mentions in the window speak of ("Měsíční členství ... Členství si
    # zaplatíte ..."); one introduced after the window is not yet spoken of, and a title names
    # the document's subject in its own words ("Směrnice o pracovních cestách" over a
    # question for a "služební cesta")
    before = sents[: j + 1]
    spoken = [p for p in needs.phrases if any(p.head & s.keys for s in before)]
    if not spoken:
        return ()
    # a sentence's tokens are analysed only where its keys say the modifier is there (a
    # token's keys and form beginnings are its sentence's): most windows never need them
    tokens = _reader(text, sents, lang)

    out = []
    for p in spoken:
        seen = False
        held = False
        for n in range(i, j + 1):
            s = sents[n]
            if not (p.keys & s.keys or (p.beginning and p.beginning in s.beginnings)):
                continue
            words, keys, forms = tokens(n)
            is_head = [bool(p.head & k) for k in keys]
            for at, (k, form) in enumerate(zip(keys, forms, strict=True)):
                if not (p.keys & k or (p.beginning and form.startswith(p.beginning))):
                    continue
                seen = True
                adjective = attachment.adjectival(words[at], lang)
                if not is_head[at] and attachment.attached(words, at, is_head, lang, adjective):
                    held = True
                    break
            if held:
                break
        if seen and not held and _restricted_otherwise(before, tokens, p, needs.asked, lang):
            out.append(p)
    return tuple(out)


def _reader(text: str, sents: tuple[Sentence, ...], lang: str) -> Callable[[int], _Tokens]:
    """The tokens of a chunk's sentence by its index (:func:`_read`), each read once."""
    read: dict[int, _Tokens] = {}

    def tokens(n: int) -> _Tokens:
        if n not in read:
            read[n] = _read(text, sents[n], lang)
        return read[n]

    return tokens


def _read(text: str, s: Sentence, lang: str) -> _Tokens:
    """A sentence's words as :mod:`rag.language.attachment` reads them, their keys (families
    included) and forms."""
    read = [r for w in tokenize(text[s.start : s.end]) if (r := _reading(w, lang)) is not None]
    return [r[0] for r in read], [r[1] for r in read], [r[2] for r in read]


@lru_cache(maxsize=_WORD_CACHE)
def _reading(surface: str, lang: str) -> tuple[attachment.Word, frozenset[str], str] | None:
    """One word as :func:`_read` gives it, cached per word: a text's words recur, and the
    modifier check reads every word of the sentences it looks at (a third of judging at 100,000
    chunks, docs/performance.md)."""
    t = analyze_word(surface, lang)
    if t is None:
        return None
    keys = frozenset((*search_keys(t), *held_families(t.surface, lang)))
    return (
        attachment.Word(t.surface, t.lemmas, t.form in stopword_forms(lang) or t.stop),
        keys,
        t.form,
    )


def _restricted_otherwise(
    sents: tuple[Sentence, ...],
    tokens: Callable[[int], _Tokens],
    p: Phrase,
    asked: frozenset[str],
    lang: str,
) -> bool:
    """Whether an occurrence of the phrase's noun in ``sents`` (their tokens by index from
    ``tokens``) is restricted in the same way by a word that is no word of the question: stands
    after another adjective ("Měsíční členství" for "roční členství"), or, for whom it is meant,
    is meant for another ("Kurz plavání pro děti" for "kurz plavání pro kojence")."""
    for n, s in enumerate(sents):
        if not p.head & s.keys:
            continue
        words, keys, forms = tokens(n)
        for h, k in enumerate(keys):
            if not p.head & k:
                continue
            others = (
                attachment.beneficiaries_of(words, h, lang)
                if p.beneficiary
                else attachment.attributes(words, h, lang)
            )
            for a in others:
                if not (p.keys & keys[a] or asked & {*words[a].lemmas, forms[a]}):
                    return True
    return False


def _restricted_kind(
    text: str,
    lang: str,
    sents: tuple[Sentence, ...],
    j: int,
    needs: QuestionNeeds,
    lacking: set[str],
) -> bool:
    """Whether a word the window lacks says whom a noun is meant for, and the chunk, up to the
    window's end, means that noun for another (:func:`_restricted_otherwise`): "Kdy je otevřená
    sauna pro ženy?" over "Sauna pro muže je otevřena ...". The passage speaks of another's,
    and no vector tells the two apart; where it names the noun bare ("Sauna je otevřena ..."),
    it may be the one asked for."""
    before = sents[: j + 1]
    wanted = [
        p
        for p in needs.beneficiaries
        if p.modifier in lacking and any(p.head & s.keys for s in before)
    ]
    tokens = _reader(text, sents, lang)
    return any(_restricted_otherwise(before, tokens, p, needs.asked, lang) for p in wanted)


def _heading(text: str, sents: tuple[Sentence, ...], j: int) -> bool:
    """Whether sentence ``j`` is a heading: a paragraph of its own (blank lines around it) that
    ends without a stop."""
    s = sents[j]
    if text[s.end - 1] in _STOPS:
        return False
    before = text[sents[j - 1].end : s.start] if j > 0 else "\n\n"
    after = text[s.end : sents[j + 1].start] if j + 1 < len(sents) else "\n\n"
    return "\n\n" in before and "\n\n" in after


_ROMAN = re.compile(r"[IVXLCDM]+")


def _designated(query: QueryKeys, at: int) -> tuple[str, ...]:
    """The lemma keys of the name a Czech question's whole number stands right after, or none:
    a number after a name, and before no unit, is part of the name ("Skladník 3", "Praha 6",
    "Apollo 11"), the way a code is ("SOVA T3"). Not after a regnal number ("Alžběta II. 1981":
    a year), and in Czech only: German and Russian evaluation questions name such a thing in
    other words than their passages (a championship game and its number), so that the number
    is what they share (docs/evaluation.md, thirty-third round)."""
    words = query.all_words
    surface = words[at].surface if 0 < at < len(words) else ""
    if query.lang != "cs" or not surface.isdigit() or len(surface) > 4:
        return ()
    name = words[at - 1]
    if _ROMAN.fullmatch(name.surface) or not is_name(name.surface, at - 1, query.lang):
        return ()
    return tuple(k for k in name.keys if k[0] == "l")


def _numbered(text: str, sents: tuple[Sentence, ...], lang: str, need: Need) -> bool:
    """Whether ``sents`` (of ``text``) name the name of a designating number right before that
    number ("Skladníku 2" for the "2" of "Skladník 2")."""
    keys = frozenset(need.designates)
    for s in sents:
        if not keys & s.keys:
            continue
        words, found, _ = _read(text, s, lang)
        if any(
            keys & found[at] and words[at + 1].surface == need.surface
            for at in range(len(words) - 1)
        ):
            return True
    return False


def _aged_keys(surface: str, lang: str, limit: bool) -> tuple[str, ...]:
    """The range keys of the years an adjective of age names ("desetiletý": v:10@rok), and
    where ``limit`` (a question whether it may be done), those of any range of years; or none
    (answer_types.aged)."""
    years = aged(surface, lang)
    if years is None:
        return ()
    unit = unit_keys(years[1], lang)
    return number_keys(years[0], unit) + (any_number_keys(unit) if limit else ())


def _measured(surface: str, query: QueryKeys, at: int, limit: bool) -> tuple[str, ...]:
    """The range keys of a question's whole number followed by a content word, its unit ("14
    hodin": v:14@hodina; rag.language.ranges), and where ``limit`` (a question whether it may
    be done) those of any range in the unit; or none."""
    words = query.all_words
    if not surface.isdigit() or len(surface) > 5 or at + 1 >= len(words):
        return ()
    unit, lang = words[at + 1], query.lang
    if not unit.surface.isalpha() or all(w.form != unit.form for w in query.words):
        return ()
    # a unit is a noun: no verb ("im Hallenpokal 50 spielte"), and in German capitalized
    lemmas = [k[2:] for k in unit.keys if k[0] == "l"]
    if _a_verb(unit.surface, lemmas, lang) or (lang == "de" and not unit.surface[:1].isupper()):
        return ()
    unit_of = unit_keys(unit.surface, lang)
    return number_keys(int(surface), unit_of) + (any_number_keys(unit_of) if limit else ())


def _a_verb(surface: str, lemmas: Sequence[str], lang: str) -> bool:
    """Whether a question word is a verb: its first lemma looks like one and the dictionary does
    not decline it as a noun, or it is a finite form the dictionary lacks."""
    return (
        any(looks_like_verb(lemma, lang) for lemma in lemmas[:1])
        and not nominal_lemma(surface, lang)
    ) or finite_verb(surface, lang)


def _compound_numbers(surface: str) -> tuple[str, ...]:
    compound = numeral_compound(surface) if has_digit(surface) else None
    return compound.numbers if compound is not None else ()


def _groupable(need: Need) -> bool:
    """A number of 4+ digits may be written with digit groups ("10 000") that the corpus's
    statistics do not count as one key, and one with a multiplier may be written in digits
    ("11 tisíc" as "11 000"): only a window can tell that it is absent."""
    return need.kind == "number" and (need.valued or sum(c.isdigit() for c in need.surface) >= 4)


@dataclass
class Answerability:
    """How one candidate's best window answers the question, for evidence and for the gate."""

    window: tuple[int, int] | None  # character offsets into the chunk's text
    answers: bool  # every check passed
    paraphrase: bool  # fails only by focus words: a very close vector may stand in for them
    reason: str | None  # the first failed check: "absent", "required", "count", "focus", "type"
    answer_type: str | None
    type_token: str | None  # the window token that met the answer type
    required: list[dict[str, Any]] = field(default_factory=list)
    focus: list[dict[str, Any]] = field(default_factory=list)
    window_keys: frozenset[str] = frozenset()

    def as_dict(self) -> dict[str, Any]:
        return {
            "window": list(self.window) if self.window else None,
            "answers": self.answers,
            "reason": self.reason,
            "answer_type": self.answer_type,
            "type_token": self.type_token,
            "required": self.required,
            "focus": self.focus,
        }


# The answer types of a question for a time: its units of time say the answer's granularity
# ("V který den a měsíc ...?"), not a condition of it.
_TIMED_KINDS = frozenset({"date", "time", "duration"})


def _names_a_time(need: Need) -> bool:
    """A calendar time or a unit of time: no vector stands in for either."""
    return need.unit or names_a_time((k[2:] for k in need.keys if k.startswith("l:")), need.form)


def _czech_verb(need: Need) -> bool:
    """A Czech verb: its lemma ends as an infinitive does ("vede": vést), and the dictionary does
    not decline it as a noun ("rozpočet", "kontakt", "na starosti")."""
    return any(k.startswith("l:") and is_infinitive(k[2:]) for k in need.keys) and not (
        nominal_lemma(need.surface, "cs")
    )


def _names_a_part_of_day(need: Need) -> bool:
    return names_a_part_of_day(_lemmas(need), need.form)


def _said_otherwise(
    text: str, lang: str, sents: tuple[Sentence, ...], needs: QuestionNeeds
) -> list[tuple[str, frozenset[int]]]:
    """Per focus word, how and in which sentences a passage says what it names in other words: a
    season by two months, a day of the week by a span of days ("úterý" in "Otevírací doba: pondělí
    až pátek 6:00–21:00"), money by what it is ("peníze" in "jízdné vám vrátíme"). The window
    ranking seeks them out and the verdict reads them, so that the window chosen is the one judged
    (not a first sentence that names nothing of the question). Not a part of the day by a clock
    time: most passages of a question for one hold some time, and a window ranked by it would
    leave the sentence holding the question's other words."""
    said: list[tuple[str, frozenset[int]]] = []
    for f in needs.focus:
        lemmas = _lemmas(f)
        says: Callable[[Sentence], bool] | None = None
        if names_a_season(lemmas, f.form):
            how, says = "months", lambda s: spans_months(s.keys)
        elif (day := named_day(lemmas, lang)) is not None:
            how, says = "days", lambda s, day=day: day in spanned_days(text[s.start : s.end], lang)
        elif needs.answer_type is None and (month := named_month(lemmas, lang)) is not None:
            # in a question whether only: a question for a time in the month ("Kdy začíná
            # kurz v únoru?") asks for a date, which a span of months does not give
            how, says = (
                "months",
                lambda s, month=month: month in spanned_months(text[s.start : s.end], lang),
            )
        elif (names_money(lemmas, f.form) or names_paying(lemmas, f.form)) and (
            # "Jak zaplatím kurz?" asks how one pays, which no sum says
            f.surface != needs.manner
        ):
            how, says = (
                "money",
                lambda s: speaks_of_money(
                    text[s.start : s.end], s.keys, any(c == "amount" for c, _ in s.classes), lang
                ),
            )
        if says is None:
            said.append(("", frozenset()))
        else:
            said.append((how, frozenset(j for j, s in enumerate(sents) if says(s))))
    return said


def _lemmas(need: Need) -> list[str]:
    return [k[2:] for k in need.keys if k.startswith("l:")]


def _matched(need: Need, found: frozenset[str]) -> str | None:
    for k in need.keys:
        if k in found and k[0] in "ls":
            return "lemma" if k[0] == "l" else "stem"
    # A name the corpus knows may appear as its derived adjective ("Polsko" ~ "polský",
    # "Francie" ~ "francouzský"): Czech forms these from the same first letters ("n:" keys:
    # a passage's names and adjectives, :func:`_adjective`).
    if need.kind == "name" and need.df > 0 and any(k in found for k in need.prefixes):
        return "prefix"
    if need.kind == "name" and any(k in found for k in need.related):
        return "name"
    if need.kind == "number" and any(k in found for k in need.related):
        return "range"
    return None


def _focus_matched(
    need: Need, found: frozenset[str], beginnings: frozenset[str] = frozenset()
) -> str | None:
    """A focus word matches by lemma or stem; if the corpus knows it, by its first letters
    (:func:`_prefixes_met`: four of a word the dictionary lacks, "otevřený" ~ "otevírací", five
    of any other); and any word by a shared beginning of 6+ letters, a derivation
    the lemmatizer does not join ("rezervace" ~ "rezervujete", "třebíčský" ~ "Třebíči"). Four
    letters are too few for a word the corpus lacks ("kolibřík" ~ "kolik"). ``beginnings``: the
    window's words' first _DERIVED letters (Sentence.beginnings), a set lookup where comparing
    the stem with every word of the window cost a scan per focus word."""
    by = _matched(need, found)
    if by is None and need.df > 0 and any(k in found for k in need.prefixes):
        return "prefix"
    if by is None and len(need.form) >= _DERIVED:
        stem = need.form[:_DERIVED]
        if stem in beginnings:
            return "derived"
    if by is None and any(k in found for k in need.related):
        return "family"
    if by is None and any(k in found for k in need.written):
        return "spoken"
    if by is None and any(k in found for k in need.classes):
        return "class"
    return by


_DERIVED = 6


# The key of a focus word's own bit in a _Plan: no sentence has a key of this form.
_SAID_KEY = "=said:"


class _Plan:
    """A question's needs as bit masks, built once per question: bit b stands for one key (or
    one derived beginning) the checks look for, so that a window's keys are an integer and
    every check is an ``&``."""

    __slots__ = (
        "bits",
        "beginnings",
        "required",
        "focus",
        "said",
        "content",
        "keyset",
        "memo",
    )

    def __init__(self, needs: QuestionNeeds) -> None:
        self.bits: dict[str, int] = {}
        self.beginnings: list[tuple[str, int]] = []
        # (kind is "name", group, mask) in the order of needs.required
        self.required = [
            (
                r.kind == "name",
                r.group,
                self._mask(
                    r.keys, (r.prefixes if r.kind == "name" and r.df > 0 else ()) + r.related
                ),
            )
            for r in needs.required
        ]
        # focus while ranking windows: lemma, stem, a known word's prefix, a derived beginning
        self.focus = []
        # a bit of each focus word's own, which no key sets: a sentence that says the word in
        # other words (_said_otherwise) holds it (its keys' bits may be another need's too: the
        # initials of a name and of the words around it)
        self.said = []
        for n, f in enumerate(needs.focus):
            mask = self._mask(
                f.keys, (f.prefixes if f.df > 0 else ()) + f.related + f.written + f.classes
            )
            if len(f.form) >= _DERIVED:
                mask |= self._beginning(f.form[:_DERIVED])
            said = self._bit(f"{_SAID_KEY}{n}")
            self.said.append(said)
            self.focus.append(mask | said)
        self.content = [
            (self._mask(keys, ()), self._mask((), tuple(k for k in keys if k[0] == "p")), weight)
            for _, keys, weight in needs.content
        ]
        self.keyset = frozenset(self.bits)
        # windows of one question's candidates hold the same few keys over and over
        self.memo: dict[tuple[int, int, float], tuple[int, int, float]] = {}

    def _bit(self, key: str) -> int:
        return 1 << self.bits.setdefault(key, len(self.bits) + len(self.beginnings))

    def _beginning(self, stem: str) -> int:
        bit = 1 << (len(self.bits) + len(self.beginnings))
        self.beginnings.append((stem, bit))
        return bit

    def _mask(self, keys: tuple[str, ...], prefixes: tuple[str, ...]) -> int:
        mask = 0
        for k in keys:
            if k[0] in "ls":
                mask |= self._bit(k)
        for k in prefixes:
            mask |= self._bit(k)
        return mask

    def keys_of(self, s: Sentence) -> int:
        """The sentence's keys as a mask (derived beginnings included)."""
        bits = self.bits
        mask = 0
        for k in s.keys & self.keyset:
            mask |= 1 << bits[k]
        for stem, bit in self.beginnings:
            if stem in s.beginnings:
                mask |= bit
        return mask

    def titled(self, heading: tuple[Sentence, ...]) -> int:
        """A title's keys as a mask, without derived beginnings (they count in windows only)."""
        bits = self.bits
        mask = 0
        for s in heading:
            for k in s.keys & self.keyset:
                mask |= 1 << bits[k]
        return mask

    def required_met(self, found: int) -> int:
        """How many required tokens a window holds; a name counts once any word of it is there
        ("Carter" for "Jimmy Carter")."""
        met = 0
        named: set[int] = set()
        for is_name_, group, mask in self.required:
            if is_name_ and group in named:
                met += 1
            elif mask & found:
                met += 1
                if is_name_:
                    named.add(group)
        return met

    def window(self, found: int, titled: int, prefix_credit: float) -> tuple[int, int, float]:
        """A window's required and focus words met, the focus words only the document's title
        holds for it (as a negative number: fewer rank first), and its idf-weighted coverage."""
        key = (found, titled, prefix_credit)
        hit = self.memo.get(key)
        if hit is None:
            seen = found | titled
            checks = self.required_met(found) + sum(1 for mask in self.focus if mask & seen)
            lent = sum(1 for mask in self.focus if mask & titled and not mask & found)
            hit = self.memo[key] = (checks, -lent, self.cover(found, prefix_credit))
        return hit

    def cover(self, found: int, prefix_credit: float) -> float:
        cover = 0.0
        for full, prefix, weight in self.content:
            if full & found:
                cover += weight
            elif prefix_credit and prefix & found:
                cover += weight * prefix_credit
        return cover


def _persons(s: Sentence, asked: frozenset[str]) -> frozenset[str]:
    """The words of the persons a sentence names, other than the question's own."""
    return frozenset(t for c, tokens in s.classes if c == "person" for t in tokens) - asked


def _owned(persons: list[frozenset[str]] | None, masks: list[int], first: int, last: int) -> bool:
    """Whether the contact in sentence ``last`` of the window ``first``..``last`` may be the one
    asked for: the sentence holds a word of the question, or names no person the window's
    other sentences do not ("Jaký telefon má jednatelka?" over "Jednatelka ... píšete jí na
    e-mail. O vodu se stará Karel Šimek, telefon 604 ...": Šimek's telephone). True for every
    window of a question for anything but a contact (``persons`` None)."""
    if persons is None or masks[last] or not persons[last]:
        return True
    return persons[last] <= frozenset().union(*persons[first:last])


_PRICE_VERBS = frozenset({"stoji", "stal", "stala", "stalo", "staly", "stat", "cini"})


def _prices_another(
    text: str, sents: tuple[Sentence, ...], j: int, lang: str, asked: frozenset[str]
) -> bool:
    """Whether Czech sentence ``j`` says what another thing costs: it names none of the
    question's words (``asked``: its forms, lemmas and stems; the verb of pricing aside), has
    content words before its verb of pricing ("Čipování stojí 450 Kč"), and no sentence before
    it names them: a word named before is the subject spoken of ("Skupinové lekce, jako je
    spinning ... Lekce stojí 120 Kč")."""
    if lang not in ("cs", "sk"):
        return False
    subject: set[str] = set()
    priced = False
    for word, keys, form in zip(*_read(text, sents[j], lang), strict=True):
        if form in _PRICE_VERBS:
            priced = priced or bool(subject)
            continue
        if not form.isalpha() or word.stop:
            continue
        held = {k for k in keys if k[0] in "ls"}
        if form in asked or not asked.isdisjoint(k[2:] for k in held):
            return False  # it speaks of what the question asks about
        if not priced:
            subject.update(held)
    return priced and not any(subject & before.keys for before in sents[:j])


def _answers_type(s: Sentence, kind: AnswerType, needs: QuestionNeeds, text: str) -> bool:
    """Whether the sentence holds a token of a class that answers ``kind``, not the question's own."""
    if needs.holder:
        return bool(_holders(s, needs.asked))
    accepts = accepted_classes(kind)
    return any(
        t not in needs.asked
        for c, tokens in _typed_classes(s, needs, text)
        if c in accepts
        for t in tokens
    )


def _typed_classes(
    s: Sentence, needs: QuestionNeeds, text: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The sentence's token classes as answers to the question: for a count of a thing, its
    numbers less those written as sums of money (:func:`sum_numbers`); for a sum, a price of
    nothing as an amount (``FREE_OF_CHARGE``: "zdarma") in a sentence that names a focus word
    of the question: "Věrnostní kartu dostanete zdarma" prices the card, "čaj a voda jsou
    zdarma" after the breakfast's sentence prices the tea."""
    if (
        needs.answer_type == "amount"
        and not FREE_OF_CHARGE.isdisjoint(s.keys)
        and any(not s.keys.isdisjoint(f.keys + f.related) for f in needs.focus)
    ):
        free = tuple(k[2:] for k in sorted(FREE_OF_CHARGE.intersection(s.keys)))
        return (*s.classes, ("amount", free))
    if not needs.tally or not any(c == "amount" for c, _ in s.classes):
        return s.classes
    sums = sum_numbers(text[s.start : s.end])
    return tuple(
        (c, tuple(t for t in tokens if t not in sums) if c == "number" else tokens)
        for c, tokens in s.classes
    )


def _holders(s: Sentence, asked: frozenset[str]) -> tuple[str, ...]:
    """The names of a sentence that may be a person's: no acronym, none of the question's."""
    return tuple(
        t
        for c, tokens in s.classes
        if c == "name"
        for t in tokens
        if t not in asked and ACRONYM_KEY + t not in s.keys
    )


def assess(
    text: str,
    lang: str,
    needs: QuestionNeeds,
    window_size: int,
    require_type: bool,
    prefix_credit: float = 0.0,
    title: str | None = None,
    sents: tuple[Sentence, ...] | None = None,
) -> Answerability:
    """Find a chunk's best evidence window and check it against the question's needs.

    Args:
        title: the document's title; it names the subject of every passage, so a required
            name or code may stand there instead of in the window ("Skladník 2" over a report
            whose budget paragraph does not repeat it).
        sents: the chunk's sentences as stored at ingestion (:func:`decode_sentences`), or None
            to compute them.
    """
    if sents is None:
        sents = sentences(text, lang)
    if not sents:
        return Answerability(None, False, False, "empty", needs.answer_type, None)
    plan = needs.plan if needs.plan is not None else _Plan(needs)
    heading = sentences(title, lang) if title else ()
    # A passage names its subject once: a required name or code may stand in the document's
    # title or elsewhere in the chunk ("SOVA T3" above the paragraph on its battery), a focus
    # word in the title ("jídelna" of "Provozní řád firemní jídelny").
    titled = plan.titled(heading)
    masks = [plan.keys_of(s) for s in sents]
    said = _said_otherwise(text, lang, sents, needs)
    for bit, (_, where) in zip(plan.said, said, strict=True):
        for j in where:
            masks[j] |= bit
    context = titled
    for m in masks:
        context |= m
    kind = needs.answer_type
    typed = (
        [True] * len(sents)
        if kind is None
        else [_answers_type(s, kind, needs, text) for s in sents]
    )
    # whose contact: the persons each sentence names, other than the question's own; a
    # question of no word but its kind ("Na jaké číslo můžu zavolat?") names no one whose
    # contact another's could be, and asks for the knowledge base's own, which a text gives
    # as its person's ("Za provoz odpovídá vedoucí Radek Holub, tel. ...")
    others = (
        [_persons(s, needs.asked) for s in sents]
        if kind in CONTACT_TYPES and (needs.focus or needs.required)
        else None
    )
    # whose price: a sentence of none of the question's words that prices a thing it names
    # ("Čipování stojí 450 Kč" after the sentence on the vaccination asked about)
    # (read only where a sentence holds a sum: most hold none)
    foreign = (
        [typed[j] and _prices_another(text, sents, j, lang, needs.asked) for j in range(len(sents))]
        if kind == "amount"
        else None
    )
    # a heading opens a window, never closes one: it names the section after it, not the one
    # that ends above it ("Výdejní sklad v Třebíči ..." above "## Zákaznická podpora")
    headings = [_heading(text, sents, j) for j in range(len(sents))]
    # the title names the question's subject (a name or code of it, or all its focus words):
    # the whole text speaks of it, and no sentence comes before the subject is named
    subject_titled = any(mask & titled for _, _, mask in plan.required) or bool(
        plan.focus and all(mask & titled for mask in plan.focus)
    )
    best: tuple[Any, ...] | None = None
    for i in range(len(sents)):
        held = 0
        type_ok = False
        # an answer before every question word of the window: a text names its subject before
        # it says more of it, so what a sentence says before is of what was named before it
        # ("Konzultaci si domluvíte přes sekretariát, tel. 549 .... Studijní poradkyně ...")
        leading = False
        for j in range(i, min(i + window_size, len(sents))):
            if j > i and headings[j]:
                break
            held |= masks[j]
            if typed[j] and _owned(others, masks, i, j) and not (foreign and foreign[j]):
                if not held and not subject_titled:
                    leading = True
                else:
                    type_ok = True
            answered = type_ok or (leading and not held)
            checks, lent, cover = plan.window(held, titled, prefix_credit)
            # of windows alike but for where a focus word stands, the one whose own sentences
            # say it is the evidence, not one the document's title lends it to ("Kde
            # zaparkuji?" under "Kontakty a parkování": the sentence on the parking places,
            # not the address above it)
            score = (checks + int(answered), cover, lent, j - i, -i)
            if best is None or score > best[0]:
                best = (score, i, j, answered)
    assert best is not None
    _, i, j, type_ok = best
    type_token = None
    if kind is not None:
        classes: dict[str, tuple[str, ...]] = {}
        for s in sents[i : j + 1]:
            held_classes = (
                (("person", _holders(s, needs.asked)),)
                if needs.holder
                else _typed_classes(s, needs, text)
            )
            for c, tokens in held_classes:
                classes[c] = classes.get(c, ()) + tokens
        type_token = answer_token("person" if needs.holder else kind, classes, needs.asked)
    found = frozenset().union(*(s.keys for s in sents[i : j + 1]))
    # a modifier the window holds only outside its noun's phrase is not held ("roční" of
    # "roční členství" over "Měsíční členství ... jednou ročně")
    detached = _detached(text, lang, sents, (i, j), needs) if needs.phrases else ()
    loose = {p.modifier for p in detached}
    if detached:
        found = found.difference(*(p.drop for p in detached))
    required = []
    for r, (_, _, mask) in zip(needs.required, plan.required, strict=True):
        by = _matched(r, found)
        if by is None and mask & context:
            by = "context"
        required.append({"word": r.surface, "kind": r.kind, "df": r.df, "matched_by": by})
    # The verdict reads focus words as the window ranking does: a derivation in the window
    # ("rezervace" ~ "rezervujete") or the word in the document's title ("terminálu" of "Ruční
    # skladový terminál SOVA T3" over the paragraph on its battery).
    beginnings = frozenset().union(*(s.beginnings for s in sents[i : j + 1]))
    focus = []
    timed = False  # a calendar time among the focus words the window lacks
    for f, mask, (otherwise, where) in zip(needs.focus, plan.focus, said, strict=True):
        by = None if f.surface in loose else _focus_matched(f, found, beginnings)
        if by is None and mask & titled:
            by = "title"
        if (
            by is None
            and _names_a_part_of_day(f)
            and (
                any(c == "time" for s in sents[i : j + 1] for c, _ in s.classes)
                or not ROUND_THE_CLOCK.isdisjoint(found)
            )
        ):
            # "večer" over "do 22 hodin": the clock time says the part of the day; "v noci"
            # over "funguje nonstop": every hour is said
            by = "time"
        if by is None and f.surface not in loose and any(i <= k <= j for k in where):
            # "v zimě" over "od listopadu do března": the months say the season; "v úterý" over
            # "pondělí až pátek": the span holds the day; "peníze" over "jízdné vám vrátíme"
            # (_said_otherwise)
            by = otherwise
        focus.append({"word": f.surface, "df": f.df, "matched_by": by, "verb": f.verb})
        timed = timed or (by is None and _names_a_time(f))
    reason = None
    met = [bool(mask & context) for _, _, mask in plan.required]
    named = {r.group for r, ok in zip(needs.required, met, strict=True) if ok and r.kind == "name"}
    # "Skladník 3" is one name: its number is held only right after the name, in the chunk or
    # its title; a "3" elsewhere, or a chunk of "Skladník 2", names another thing
    for n, r in enumerate(needs.required):
        if r.designates and met[n]:
            if not (
                _numbered(text, sents, lang, r)
                or (title is not None and _numbered(title, heading, lang, r))
            ):
                met[n] = False
                required[n]["matched_by"] = None
    unmet = [
        r
        for r, ok in zip(needs.required, met, strict=True)
        if not ok and not (r.kind == "name" and r.group in named)
    ]
    # The corpus's statistics count chunks, not titles: a token only the document's title holds
    # ("Super Bowl 50") is not absent from the knowledge base.
    entitled = [bool(mask & titled) for _, _, mask in plan.required]
    entitled_names = {
        r.group for r, ok in zip(needs.required, entitled, strict=True) if ok and r.kind == "name"
    }
    absent = [
        r.surface
        for r, ok in zip(needs.required, entitled, strict=True)
        if r.surface in needs.absent
        and not ok
        and not (r.kind == "name" and r.group in entitled_names)
    ]
    if not absent and needs.strays:
        forms = frozenset().union(*(s.forms for s in (*sents, *heading)))
        absent = [r.surface for r in needs.strays if not spelled_otherwise(r.form, forms)]
    if absent:
        reason = "absent"
    elif unmet:
        reason = "required"
    elif needs.counts and _counted_otherwise(
        text[sents[i].start : sents[j].end], lang, needs.counts
    ):
        reason = "count"
    elif require_type and not type_ok:
        reason = "type"
    elif any(f["matched_by"] is None for f in focus):
        reason = "focus"
    # whom a thing is meant for, where the passage means it for another ("sauna pro ženy" over
    # "Sauna pro muže"): a question for something only; whether it is meant for them is
    # answered by the passage (no, for men)
    restricted = (
        reason == "focus"
        and needs.asks_for
        and bool(needs.beneficiaries)
        and _restricted_kind(
            text, lang, sents, j, needs, {str(f["word"]) for f in focus if f["matched_by"] is None}
        )
    )
    # "Kdo vede muzeum skla?": in a question for a person the verb is the relation asked about,
    # and a passage naming someone near the museum names whoever did anything there
    relation = reason == "focus" and any(
        f["matched_by"] is None and f["word"] in needs.relations for f in focus
    )
    # a relative held by a rule for the family ("manželka": "členové rodiny") is one step from
    # the question's words already; a vector standing in for what the rule is about as well
    # ("Může manželka používat můj firemní mobil?" over the rule for the notebook) is a second
    classed = any(f["matched_by"] == "class" for f in focus)
    return Answerability(
        (sents[i].start, sents[j].end),
        reason is None,
        # a vector may stand in for focus words said in other words, but not for the calendar
        # time a question asks something for ("Kdy ... v sobotu?" over Tuesday's timetable):
        # another member of the set is another time. A question whether ("Je muzeum otevřené
        # v pondělí?") is answered by the times a passage names instead. Nor for whom a thing
        # is meant, where the passage means it for another, nor for what the person asked for
        # does.
        reason == "focus"
        and not (timed and needs.asks_for)
        and not restricted
        and not relation
        and not classed,
        reason,
        needs.answer_type,
        type_token,
        required,
        focus,
        found,
    )
