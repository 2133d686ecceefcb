"""Word keys for Czech and other inflected languages, the same for chunks and questions.

A word becomes namespaced keys ``<ns>:<body>``; a body matches ``[a-z0-9][a-z0-9._/+-]*``, at
most 60 characters, so it is safe inside a quoted tsvector lexeme and inside a LIKE pattern:

- ``l:`` lemma (simplemma), unaccented: "psa", "psem" -> ``l:pes``; "Brně" -> ``l:brno``.
- ``s:`` stem: Snowball on the lower-cased *accented* word, then unaccented ("lišce" -> ``s:lisk``).
  Slovak, which Snowball lacks, uses the Czech stemmer.
- ``p:`` prefix: first 4 characters of the unaccented word, only for words of 4+ characters, without
  digits and not stopwords, so "pes" cannot match "pesto". A half-weight fallback.
- ``m:<form>:<lemma>`` form map (chunk side): the unaccented surface and its lemma. A question
  typed without diacritics ("v Brne", "Novakovi") reaches the lemma of the accented corpus word
  through it, since simplemma cannot lemmatize the unaccented form.
- ``a:<form>:<marks>`` spelling (chunk side): where the accents of a Latin word with diacritics
  sit ("nabití" -> ``a:nabiti:5xed``). A question typed without diacritics is spelled back as the
  corpus spells it (:mod:`rag.language.diacritics`) before it is embedded and keyed.

Tokens with digits (codes, numbers: "INV-2024-0042", "3,8") and overlong tokens are not
lemmatized or stemmed: their lemma and stem are the body itself and they get no prefix.

Lemmas and stems come from :mod:`rag.language.lemmas`, whose docstring gives the case handling before
lemmatizing. At most two lemmas per word. Lemmatizing is the slow part, so each (word, language)
is analysed once per process (``functools.lru_cache``). A question's keys are put together from the
same analysis in :mod:`rag.language.question_keys`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import simplemma
from unidecode import unidecode

from rag.errors import InputError
from rag.language.lemmas import (
    LEMMA_LANGS,
    SUPPORTED_LANGS,
    feminine_form,
    lemma_candidates,
    load_dictionaries,
    snowball_stem,
)
from rag.language.stopwords import STOPWORDS

PREFIX_LEN = 4
MAX_BODY = 60
MAX_POSITION = 16383  # PostgreSQL's largest tsvector position
MAX_POSITIONS_PER_KEY = 256  # PostgreSQL keeps at most this many positions per lexeme
_POSITIONS = [str(i) for i in range(MAX_POSITION + 1)]
_ACCENT_MAX_FORM = 40  # longer words get no spelling entry (they are codes or compounds)
_MAX_WORD = 64  # longer tokens are junk or codes; lemmatizing them only costs time
_CACHE_SIZE = 1 << 18
_DETECT_CHARS = 4000
_DETECT_MARGIN = 0.25  # how far another language must lead before it beats the default

_CYRILLIC_LANGS = frozenset({"ru", "uk", "bg", "mk"})
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
# Letters that point to one language among the supported ones (ä is shared by sk and de).
_LETTER_HINTS: dict[str, frozenset[str]] = {
    "cs": frozenset("řůě"),
    "sk": frozenset("ľĺŕôä"),
    "pl": frozenset("łąęśźżńć"),
    "de": frozenset("ßöüä"),
}

# The letters beyond ASCII each Latin-script language writes: a word holding another is none of
# its words, even where it unaccents to one ("mít" is no German "mit").
_OWN_ALPHABET: dict[str, frozenset[str]] = {
    "cs": frozenset("áčďéěíňóřšťúůýž"),
    "sk": frozenset("áäčďéíĺľňóôŕšťúýž"),
    "pl": frozenset("ąćęłńóśźż"),
    "de": frozenset("äöüß"),
    "en": frozenset(),
}


def _writes(lang: str, word: str) -> bool:
    """Whether ``word`` (lower case) uses only letters ``lang`` writes (any, for a language
    without a table)."""
    own = _OWN_ALPHABET.get(lang)
    return own is None or word.isascii() or all(c.isascii() or c in own for c in word)


# Line-like controls become newlines (PDF page breaks must not glue words together); other
# controls and invisible format characters (soft hyphen, zero-width, BOM) are dropped.
_CONTROL_TABLE: dict[int, str | None] = {
    c: None for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\t\n"
}
_CONTROL_TABLE.update({c: "\n" for c in (0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)})
_CONTROL_TABLE.update({c: None for c in (0xAD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF)})

_WORD_RUN = r"[^\W_](?:[^\W_]|[\u0300-\u036f])*"
# Joiners keep codes, numbers and abbreviations whole: hyphens (e-mail, INV-2024-0042),
# apostrophes before a letter (O'Brien), decimal separators (3.5, 3,8), a dot before a lower-case
# letter or digit (s.r.o, firma.cz; not "Praze.Další") and a slash next to a digit (123/2024).
_JOINER = (
    r"(?:[-\u2010\u2011]|['\u2019](?=[^\W\d_])|(?<=\d)[.,](?=\d)|\.(?=[a-z0-9])|/(?=\d)|(?<=\d)/)"
)
_TOKEN_RE = re.compile(f"{_WORD_RUN}(?:{_JOINER}{_WORD_RUN})*")
_NOT_BODY = re.compile(r"[^a-z0-9._/+-]+")
_YO = str.maketrans({"ё": "е", "Ё": "Е"})  # Russian ё is е with a diaeresis; texts often omit it


def _scrub_surrogates(text: str) -> str:
    """Join valid surrogate pairs, replace lone surrogates with U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def normalize(text: str) -> str:
    """Return ``text`` in NFC without control characters (tabs and newlines kept).

    Lone surrogates become U+FFFD; carriage returns, form feeds and Unicode line separators
    become newlines. Never raises; a non-string gives "".
    """
    if not isinstance(text, str):
        return ""
    text = _scrub_surrogates(text).translate(_CONTROL_TABLE)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


class _Transliteration(dict[int, str]):
    """unidecode's replacement of each character (ё read as е), looked up on first sight.

    unidecode replaces a text character by character, in Python: 0.35 ms for a chunk of 620
    characters, which a search paid for each of its ~90 candidates (judge's family bound).
    ``str.translate`` with these replacements gives the same text in C, in 0.08 ms.
    """

    def __missing__(self, codepoint: int) -> str:
        out = unidecode(chr(codepoint).translate(_YO))
        self[codepoint] = out
        return out


_TRANSLITERATION = _Transliteration()


# Characters that NFD leaves without an ASCII letter but Czech and German texts use often (quotes,
# dashes, ß, the no-break space), and the four whose NFD keeps an ASCII character unidecode does
# not ("≠" is "=" and a combining stroke): replaced first by their own transliteration.
_BEFORE_NFD = "„“”‚‘’–—…«»•·°×ß\u00a0\u037e\u2260\u226e\u226f"


def _transliterate(s: str) -> str:
    s = _scrub_surrogates(s)
    if len(s) > _MAX_WORD:
        # A text in Latin letters with diacritics: NFD parts each letter into its ASCII base and
        # combining marks, and dropping what is not ASCII keeps the base, which is the letter's
        # unidecode replacement (checked for every code point in tests/test_transliteration.py).
        # One ASCII character per character of the text says that nothing else was dropped;
        # otherwise (Cyrillic, ł, symbols) the table below. 7.8 instead of 13.3 µs on a Czech
        # chunk.
        t = s
        for ch in _BEFORE_NFD:
            if ch in t:
                t = t.replace(ch, _TRANSLITERATION[ord(ch)])
        plain = unicodedata.normalize("NFD", t).encode("ascii", "ignore")
        if len(plain) == len(t):
            return plain.decode("ascii").lower()
    return s.translate(_TRANSLITERATION).lower()


_unaccent_word = lru_cache(maxsize=_CACHE_SIZE)(_transliterate)


def unaccent(s: str) -> str:
    """Case-fold ``s`` and transliterate it to ASCII ("Žluťoučký" -> "zlutoucky", "Москве" -> "moskve")."""
    if s.isascii():
        return s.lower()
    if len(s) <= _MAX_WORD:
        return _unaccent_word(s)
    return _transliterate(s)


def _body(s: str) -> str:
    """Key body of ``s``: unaccented, only ``[a-z0-9._/+-]``, starting alphanumeric, <= 60 chars."""
    body = _NOT_BODY.sub("", unaccent(s).replace(",", "."))
    return body.lstrip("._/+-")[:MAX_BODY]


def form_of(word: str) -> str:
    """A word's form as a question's words and the keys compare it: its key body, so that a
    table of words meets them as written ("сколько" is "skolko", not "skol'ko")."""
    return _body(word)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into surface tokens (NFC), dropping punctuation, symbols and emoji.

    Numbers, codes, abbreviations and hyphenated names stay one token:
    "INV-2024-0042", "3,8", "e-mail", "s.r.o", "Frýdek-Místek".
    """
    return _TOKEN_RE.findall(normalize(text))


def has_digit(s: str) -> bool:
    """Whether ``s`` holds a digit: codes and numbers are neither lemmatized nor stemmed."""
    return any(c.isdigit() for c in s)


@lru_cache(maxsize=64)
def _stopword_forms(lang: str) -> frozenset[str]:
    return frozenset(_body(w) for w in STOPWORDS.get(lang, ()))


def stopword_forms(lang: str) -> frozenset[str]:
    """The question-side stopwords of ``lang`` as unaccented key bodies."""
    return _stopword_forms(lang)


def _stem(word: str, lang: str) -> str | None:
    """The stem key body of ``word``, or None if ``lang`` has no stemmer."""
    stem = snowball_stem(word, lang)
    return None if stem is None else _body(stem)


def _lemma_bodies(surface: str, lang: str, question: bool) -> tuple[str, ...]:
    """The lemma key bodies of a word: at most two, without repeats."""
    bodies: list[str] = []
    for candidate in lemma_candidates(surface, lang, question):
        body = _body(candidate)
        if body and body not in bodies:
            bodies.append(body)
    return tuple(bodies[:2])


@dataclass(frozen=True, slots=True)
class Token:
    """One word of a text and the key bodies it yields."""

    surface: str  # as written (NFC)
    form: str  # unaccent(surface), reduced to key-body characters
    lemmas: tuple[str, ...]  # lemma key bodies (1 or 2)
    stem: str  # stem key body
    prefix: str | None  # prefix key body, or None (short word, digits, stopword)
    stop: bool  # question-side stopword (incl. interrogatives) in this language


@lru_cache(maxsize=_CACHE_SIZE)
def _word(surface: str, lang: str, question: bool) -> Token | None:
    form = _body(surface)
    if not form:
        return None
    foreign = lang not in _CYRILLIC_LANGS and _CYRILLIC.search(surface) is not None
    if foreign:
        lang = "ru"  # a Cyrillic word inside Latin-script text is analysed as Russian
    stop = form in _stopword_forms(lang)
    if has_digit(surface):
        return Token(surface, form, (form,), form, None, stop)
    lemmas: tuple[str, ...]
    if len(surface) > _MAX_WORD:
        lemmas, stem = (form,), form
    elif foreign:
        # Stem only: the Russian dictionary costs seconds and 150 MB to load for a stray word.
        lemmas, stem = (form,), _stem(surface, lang) or form
    else:
        lemmas = _lemma_bodies(surface, lang, question) or (form,)
        stem = _stem(surface, lang) or lemmas[0]
        woman = feminine_form(surface) if lang == "cs" else None
        if woman is not None and lemmas[0] == _body(woman):
            # a feminine surname (rag.language.lemmas): the stemmer would leave the man's name
            # ("kucer" of Kučerová and Kučera); its stem keeps the "-ov-" that tells them apart
            stem = lemmas[0][:-1]
    prefix = form[:PREFIX_LEN] if len(form) >= PREFIX_LEN and not stop else None
    return Token(surface, form, lemmas, stem, prefix, stop)


def analyze_word(surface: str, lang: str) -> Token | None:
    """One token of :func:`tokenize` as :func:`analyze` reads it (None: it has no key body)."""
    return _word(surface, lang.lower() if isinstance(lang, str) else "", False)


def _analyze(text: str, lang: str, question: bool) -> list[Token]:
    lang = lang.lower() if isinstance(lang, str) else ""
    tokens = (_word(surface, lang, question) for surface in tokenize(text))
    return [token for token in tokens if token is not None]


def analyze(text: str, lang: str) -> list[Token]:
    """Analyse every word of a chunk's text.

    Args:
        text: Any text; hostile input gives sane tokens or none.
        lang: The text's language code ("cs", "de", ...). Unknown codes give unlemmatized words.

    Returns:
        One ``Token`` per word, in text order.
    """
    return _analyze(text, lang, question=False)


def analyze_question(question: str, lang: str) -> list[Token]:
    """Analyse every word of a question, as :func:`analyze` does a chunk's.

    A lower-case word whose capitalized form lemmatizes to a proper noun gets that lemma too
    (see :mod:`rag.language.lemmas`).
    """
    return _analyze(question, lang, question=True)


@dataclass(frozen=True, slots=True)
class ChunkKeys:
    """The keys of one chunk, as stored by the database."""

    tsvector: str  # PostgreSQL tsvector literal, keys sorted, 1-based positions
    token_count: int  # number of word tokens (BM25 document length)
    keys: dict[str, int]  # key -> term frequency (positions listed in ``tsvector``)


def prefix_keys_as(kind: str, keys: Iterable[str]) -> tuple[str, ...]:
    """A word's prefix keys ("p:brne") as keys of another kind ("n:brne"): its first letters,
    asked for where a sentence holds them for a narrower reason (a name's, a relational
    adjective's, an unknown word's)."""
    return tuple(kind + k[2:] for k in keys if k.startswith("p:"))


def search_keys(token: Token) -> list[str]:
    """A word's namespaced lemma, stem and prefix keys: what a chunk stores and a question seeks."""
    keys = [f"l:{lemma}" for lemma in token.lemmas]
    keys.append(f"s:{token.stem}")
    if token.prefix:
        keys.append(f"p:{token.prefix}")
    return keys


@lru_cache(maxsize=_CACHE_SIZE)
def _chunk_entries(surface: str, lang: str) -> tuple[str, ...]:
    token = _word(surface, lang, False)
    if token is None:
        return ()
    keys = search_keys(token)
    if not token.stop:  # a question never asks for a stopword, so its form map is dead weight
        keys.extend(f"m:{token.form}:{lemma}" for lemma in token.lemmas if lemma != token.form)
        accent = _accent_entry(surface, token.form)
        if accent:
            keys.append(accent)
    return tuple(dict.fromkeys(keys))


def _accent_entry(surface: str, form: str) -> str | None:
    """The spelling entry ``a:<form>:<marks>`` of a Latin word with diacritics, or None.

    ``<marks>`` lists each accented letter as ``<index>x<code point in hex>``, joined by dots:
    "nabití" -> ``a:nabiti:5xed``, "Úplně" -> ``a:uplne:0xfa.4x11b``. Only a word whose letters
    map one to one onto its form gets one (not "Straße", not Cyrillic), so the form and the
    marks give the spelling back (:func:`spelling_from_accent_key`).
    """
    if surface.isascii() or len(form) > _ACCENT_MAX_FORM:
        return None
    low = surface.lower()
    if len(low) != len(form):
        return None
    marks = []
    for i, (ch, plain) in enumerate(zip(low, form, strict=True)):
        if ch == plain:
            continue
        if ch.isascii() or "LATIN" not in unicodedata.name(ch, "") or unaccent(ch) != plain:
            return None
        marks.append(f"{i}x{ord(ch):x}")
    return f"a:{form}:{'.'.join(marks)}" if marks else None


def accent_prefix(form: str) -> str:
    """The LIKE prefix of the spelling entries of ``form``: "nabiti" -> "a:nabiti:"."""
    return f"a:{_body(form)}:"


def spelling_from_accent_key(key: str) -> str | None:
    """The lower-case spelling a spelling entry records ("a:nabiti:5xed" -> "nabití"), or None
    for anything that is not a well-formed entry."""
    namespace, _, rest = key.partition(":")
    form, _, marks = rest.partition(":")
    if namespace != "a" or not form or not marks:
        return None
    chars = list(form)
    try:
        for mark in marks.split("."):
            index, _, code = mark.partition("x")
            i, c = int(index), int(code, 16)
            if not 0 <= i < len(chars) or c < 0x80:
                return None
            ch = chr(c)
            if "LATIN" not in unicodedata.name(ch, ""):
                return None
            chars[i] = ch
    except (ValueError, OverflowError):
        return None
    return "".join(chars)


def chunk_keys(text: str, lang: str) -> ChunkKeys:
    """Compute the keys of a chunk: lemma, stem, prefix and form-map entries with positions.

    Args:
        text: The chunk's text.
        lang: The chunk's document language.

    Returns:
        The tsvector literal (safe to cast with ``::tsvector``), the word count and the
        term frequencies. Positions stop at 16383 and at 256 per key, as in PostgreSQL;
        a term frequency counts the positions kept.
    """
    lang = lang.lower() if isinstance(lang, str) else ""
    # This loop runs for every word ingested: positions are kept as strings, appended without
    # checks (a word's keys are distinct), and trimmed once at the end.
    positions: defaultdict[str, list[str]] = defaultdict(list)
    count = 0
    for surface in tokenize(text):
        entries = _chunk_entries(surface, lang)
        if not entries:
            continue
        count += 1
        if count < MAX_POSITION:
            position = _POSITIONS[count]
            for key in entries:
                positions[key].append(position)
        else:  # every later word shares the last position, which a key keeps once
            last = _POSITIONS[MAX_POSITION]
            for key in entries:
                found = positions[key]
                if not found or found[-1] != last:
                    found.append(last)
    if count > MAX_POSITIONS_PER_KEY:
        for found in positions.values():
            del found[MAX_POSITIONS_PER_KEY:]
    ordered = sorted(positions)
    lists = [positions[key] for key in ordered]
    literal = " ".join(
        [f"'{key}':{','.join(pos)}" for key, pos in zip(ordered, lists, strict=True)]
    )
    return ChunkKeys(literal, count, dict(zip(ordered, map(len, lists), strict=True)))


def form_map_prefix(form: str) -> str:
    """The LIKE prefix of the form-map entries of ``form``: "Brne" -> "m:brne:".

    Bodies never contain ``%``, ``_`` or backslashes, so the result needs no LIKE escaping.
    """
    return f"m:{_body(form)}:"


def lemma_from_form_map_key(key: str) -> str:
    """The lemma key a form-map entry points to: "m:brne:brno" -> "l:brno".

    Raises:
        InputError: ``key`` is not a form-map entry.
    """
    namespace, _, rest = key.partition(":")
    form, _, lemma = rest.partition(":")
    if namespace != "m" or not form or not lemma:
        raise InputError(f"Not a form-map key: {key!r}")
    return f"l:{lemma}"


def detect_language(
    text: str, candidates: Sequence[str] = SUPPORTED_LANGS, default: str = "cs"
) -> str:
    """Guess the language of ``text`` among ``candidates``.

    The script decides between Cyrillic and Latin languages; then each language scores the
    share of words that are its stopwords or carry its telltale letters (ř, ľ, ł, ß ...). Only
    when no language leads clearly does simplemma add the share of words its dictionaries
    know. Short questions rarely decide cleanly, so ``default`` wins near-ties.

    Args:
        text: A document or a question.
        candidates: Languages to choose from (e.g. the ones the owner's corpus holds).
        default: Preferred language on ties or low confidence.

    Returns:
        One of ``candidates`` (``default`` if there are none).
    """
    langs = tuple(dict.fromkeys(c.lower() for c in candidates if isinstance(c, str) and c))
    if not langs:
        return default
    fallback = default if default in langs else langs[0]
    if len(langs) == 1:
        return langs[0]
    sample = normalize(text[:_DETECT_CHARS])
    words = [w.lower() for w in _TOKEN_RE.findall(sample) if not has_digit(w)]
    if not words:
        return fallback
    # Cyrillic text often quotes Latin names, Latin text rarely whole Cyrillic phrases.
    cyrillic = sum(1 for w in words if _CYRILLIC.search(w)) * 3 >= len(words)
    pool = [c for c in langs if (c in _CYRILLIC_LANGS) == cyrillic] or list(langs)
    if len(pool) == 1:
        return pool[0]
    scores = dict.fromkeys(pool, 0.0)
    for lang in pool:
        stops = _stopword_forms(lang)
        hints = _LETTER_HINTS.get(lang, frozenset())
        scores[lang] += sum(_body(w) in stops and _writes(lang, w) for w in words) / len(words)
        scores[lang] += sum(not hints.isdisjoint(w) for w in words) / len(words)
    ranked = sorted(pool, key=lambda c: (scores[c], c == fallback), reverse=True)
    if scores[ranked[0]] - scores[ranked[1]] >= _DETECT_MARGIN:
        return ranked[0]
    # Undecided by function words and letters: ask simplemma, but only about the two leaders
    # and the default, because each dictionary takes seconds and 30-400 MB to load.
    contenders = tuple(dict.fromkeys([*ranked[:2], *([fallback] if fallback in scores else [])]))
    # simplemma samples words of 3+ letters; a hit on a lone such word says little ("lisce" is
    # Polish too, "v Brne" is Slovak too), so its share counts half from two words, fully from three.
    weight = min(1.0, max(0, sum(1 for w in words if len(w) >= 3) - 1) / 2)
    lemma_langs = tuple(c for c in contenders if c in LEMMA_LANGS)
    if weight and lemma_langs:
        try:
            load_dictionaries(lemma_langs)
            shares = simplemma.langdetect(sample, lang=lemma_langs)
        except Exception:  # noqa: BLE001 - a hint only; function words and letters still count
            shares = []
        for lang, share in shares:
            if lang in scores:
                scores[lang] += share * weight
    best = max(contenders, key=lambda c: (scores[c], c == fallback))
    if fallback in scores and scores[best] - scores[fallback] < _DETECT_MARGIN:
        return fallback
    return best
