"""Split a document's text into chunks that respect paragraphs and sentences (pure, no I/O).

Paragraphs (separated by blank lines) that fit in ``size`` are never split; consecutive ones are
packed into one chunk while they fit. A longer paragraph is cut between sentences, found by a
Czech-aware splitter, and a sentence longer than ``size`` is cut at whitespace. Each chunk after
the first repeats the whole trailing sentences (at most ``overlap`` characters) of the one before.

Sizes are measured on the original text, where a run of whitespace counts in full; the chunk's
text, whose whitespace is collapsed, is therefore never longer than ``size``. Text from
:mod:`rag.ingest.loaders` has its whitespace collapsed already, so the two lengths agree there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.errors import ConfigError
from rag.language.stopwords import STOPWORDS

MIN_SIZE = 100
# Bumped when the same text and settings give other chunks (2: an ordinal's period, "18.
# Jahrhundert", ends no sentence; 3: the stopwords of KEYS_VERSION 12 and 15, conjunctions and
# German possessives among them, open a sentence after a number as every function word does:
# "Ich bin 25. Mein Bruder ..."; 5: those of KEYS_VERSION 18, "Jeden" among them; 4: a trial;
# 6: "Jedna" of KEYS_VERSION 19):
# stored documents' hashes and evaluation owners change with it.
CHUNKING_VERSION = 6

# A blank line: a newline, any whitespace, another newline.
_PARA_BREAK = re.compile(r"\n\s*\n")
# A candidate sentence end: terminators, closing quotes or brackets, the whitespace after (group
# "gap"), and the first letter or digit of what follows (checked for upper case).
_SENT_END = re.compile(
    r"(?P<term>[.!?…]+)[\"'’”“»«)\]]*(?P<gap>\s+)(?=[\"'„“‘«»(\[]*(?P<first>\w))"
)
# The same, matched as the last candidate of a range (the greedy prefix backtracks in C).
_LAST_SENT_END = re.compile(r"(?s:.*)" + _SENT_END.pattern)
_WORD_START = re.compile(r"\s\S")
# A one- or two-digit number: before a period, an ordinal ("18. Jahrhundert").
_ORDINAL = re.compile(r"\d{1,2}")
_FUNCTION_WORDS = frozenset(w.lower() for words in STOPWORDS.values() for w in words)
# Characters that may open a sentence before its first (upper-case) letter.
_OPENERS = "\"'„“‘«»(["

# Words that end in a period without ending the sentence, lower-cased, without the final period.
# Czech first (titles, legal and everyday abbreviations, company forms), then a few English and
# German ones common in Czech teams' documents. Single letters ("p.", "č.", "J.") are handled by
# a rule, not listed here.
ABBREVIATIONS = frozenset(
    """
    např tj tzn tzv atd apod aj resp popř příp mj vč cca zejm viz srov al
    ing mgr mudr judr phdr rndr mvdr paeddr thdr bc doc prof csc drsc dis ph.d dr arch
    str čl odst písm sb zák obr tab kap stol tis mil mld hod min max tel ul nám sv pí
    s.r.o a.s spol v.o.s k.s o.p.s z.s n.p t.j t.zv
    e.g i.e etc vs mr mrs ms inc ltd fig approx cf
    z.b bzw usw ca nr d.h
    """.split()  # a word list reads best as words
)
# "nám" is also a pronoun ("dal to nám."): treating it as an abbreviation only ever merges two
# sentences, which costs a chunk nothing, while splitting "nám. Míru" would break an address.
# Czech "co" and "no" are words, so the English "Co." and "No." are left out.


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document, as stored and retrieved."""

    ordinal: int
    text: str
    start: int
    end: int
    char_count: int


def chunk_text(text: str, *, size: int = 1000, overlap: int = 150) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``size`` characters.

    Args:
        text: the document text; paragraphs are separated by blank lines.
        size: the longest chunk, in characters (at least 100).
        overlap: at most this many characters of whole trailing sentences of a chunk start the
            next one (0 <= overlap < size / 2).

    Returns:
        Chunks in document order. ``text[chunk.start:chunk.end]`` with its whitespace collapsed
        (blank lines kept as one ``"\\n\\n"``) is ``chunk.text``. Empty for blank text.

    Raises:
        ConfigError: ``size`` or ``overlap`` is out of range.
    """
    if size < MIN_SIZE:
        raise ConfigError(f"chunk size must be at least {MIN_SIZE} characters, got {size}")
    if not 0 <= overlap < size / 2:
        raise ConfigError(
            f"chunk overlap must be at least 0 and below half the chunk size {size}, got {overlap}"
        )
    paras = _paragraphs(text)
    chunks: list[Chunk] = []
    pi = 0
    pos = paras[0][0] if paras else 0  # where the text not yet in any chunk begins
    mid_sentence = False  # the previous chunk was cut inside a sentence
    prev_start = prev_end = 0
    while pi < len(paras):
        p_start, p_end = paras[pi]
        # A paragraph that fits in a chunk is never split, so the overlap must leave it room.
        fit_end = p_end if pos == p_start and p_end - p_start <= size else pos
        start = pos
        if chunks and overlap:
            start = _overlap_start(
                text, prev_start, prev_end, pos, fit_end, size, overlap, mid_sentence
            )
        end, next_pi, next_pos = _fill(text, paras, pi, pos, start + size, size)
        if end is None and start != pos and not mid_sentence:
            # Not one whole sentence fits behind the overlapping sentences: give them up.
            start = pos
            end, next_pi, next_pos = _fill(text, paras, pi, pos, start + size, size)
        mid_sentence = end is None
        if end is None:
            end, next_pos = _cut_at_whitespace(text, pos, start + size)
        body = _normalize(text[start:end])
        chunks.append(Chunk(len(chunks), body, start, end, len(body)))
        prev_start, prev_end = start, end
        pi, pos = next_pi, next_pos
    return chunks


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` by the chunker's rules, each with its whitespace collapsed.

    Args:
        text: any text; a blank line ends a sentence.

    Returns:
        The non-empty sentences in order.
    """
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where the sentences of :func:`split_sentences` lie in ``text``: (start, end) offsets,
    outer whitespace excluded, empty sentences skipped. A blank line ends a sentence whatever
    precedes it: a heading ("## Zákaznická podpora") or a list item has no full stop, and read
    into the next sentence its capital looked like a name inside one ("... podpora Sedm
    kolegů")."""
    out: list[tuple[int, int]] = []
    for p_start, p_end in _paragraphs(text) if "\n" in text else [(0, len(text))]:
        s = p_start
        for m in _SENT_END.finditer(text, p_start, p_end):
            if _ends_sentence(m):
                _add_trimmed(text, s, m.start("gap"), out)
                s = m.end()
        _add_trimmed(text, s, p_end, out)
    return out


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank paragraph, without its surrounding whitespace."""
    out: list[tuple[int, int]] = []
    pos = 0
    for m in _PARA_BREAK.finditer(text):
        _add_trimmed(text, pos, m.start(), out)
        pos = m.end()
    _add_trimmed(text, pos, len(text), out)
    return out


def _add_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append((start, end))


def _fill(
    text: str, paras: list[tuple[int, int]], pi: int, pos: int, limit: int, size: int
) -> tuple[int | None, int, int]:
    """Pack text from ``pos`` (inside paragraph ``pi``) into a chunk ending by ``limit``.

    Paragraphs are taken whole while they fit. Of a paragraph longer than a chunk, or one whose
    beginning went into an earlier chunk, the whole sentences that fit are taken.

    Returns:
        The end of the packed text (None if not one sentence fits), then the paragraph and the
        position where the next chunk's new text begins.
    """
    end = None
    n = len(paras)
    while pi < n:
        p_start, p_end = paras[pi]
        if p_end <= limit:
            end = p_end
            pi += 1
            if pi < n:
                pos = paras[pi][0]
            continue
        if pos != p_start or p_end - p_start > size:
            found = _last_sentence_end(text, pos, limit)
            if found is not None:
                end, pos = found
        break
    return end, pi, pos


def _ends_sentence(m: re.Match[str]) -> bool:
    """Whether the candidate ``m`` (of ``_SENT_END`` or ``_LAST_SENT_END``) ends a sentence.

    It does when an upper-case letter follows (possibly after an opening quote or bracket),
    unless the word before a single period is an abbreviation, a single letter (an initial,
    "p.", "č.") or a number of one or two digits: an ordinal, which German follows by a capital
    ("Mitte des 18. Jahrhunderts", "am 28. Februar", "im 2. Weltkrieg") and a numbered heading
    by its title ("3. Pracovní stanice"). Merging two sentences costs a chunk nothing; a false
    split breaks a date. A decimal ("3.5") or a date with its month in digits ("31.12.") is no
    such number: its period may end a sentence. Czech ordinals in dates ("1. ledna",
    "31. 12. 2024") are followed by a lower-case letter or a digit anyway.
    """
    if not m.group("first").isupper():
        return False
    if m.group("term") == ".":
        text, dot = m.string, m.start("term")
        w = max(text.rfind(" ", 0, dot), text.rfind("\n", 0, dot)) + 1
        word = text[w:dot].lstrip(_OPENERS).lower()
        if (len(word) == 1 and word.isalpha()) or word in ABBREVIATIONS:
            return False
        if _ORDINAL.fullmatch(word) and not _counted(text, w) and not _opens(text, m.end()):
            return False
    return True


def _opens(text: str, start: int) -> bool:
    """Whether the word at ``start`` is a function word (a stopword of any language: "It",
    "Der", "Tam"), which opens a sentence after a number ("Section 2. It applies."); an
    ordinal is followed by the word it counts ("18. Jahrhunderts", "3. Pracovní")."""
    end = start
    while end < len(text) and text[end].isalpha():
        end += 1
    return text[start:end].lower() in _FUNCTION_WORDS


def _counted(text: str, w: int) -> bool:
    """Whether the word before ``text[w]`` is an abbreviation that counts what follows ("p. 12.",
    "č. 5.", "str. 3."): there the number is a cardinal, and its period may end a sentence."""
    before = text[:w].rstrip()
    if not before.endswith("."):
        return False
    v = max(before.rfind(" "), before.rfind("\n")) + 1
    word = before[v:-1].lstrip(_OPENERS).lower()
    return (len(word) == 1 and word.isalpha()) or word in ABBREVIATIONS


def _last_sentence_end(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """The last sentence end in (``lo``, ``hi``] and where the next sentence starts, or None."""
    # Room past `hi` for closing quotes, the gap and the next sentence's first letter.
    endpos = min(len(text), hi + 40)
    while True:
        m = _LAST_SENT_END.match(text, lo, endpos)
        if m is None:
            return None
        if m.start("gap") <= hi and _ends_sentence(m):
            return m.start("gap"), m.end()
        endpos = m.start("term")


def _cut_at_whitespace(text: str, start: int, limit: int) -> tuple[int, int]:
    """Cut an over-long sentence by ``limit``: (end of this piece, start of the next)."""
    # A line break in the back half of the window is a better cut than the last space.
    cut = text.rfind("\n", start + (limit - start) // 2, limit + 1)
    if cut <= start:
        cut = max(text.rfind(" ", start + 1, limit + 1), text.rfind("\t", start + 1, limit + 1))
    if cut <= start:
        cut = limit  # one "word" longer than a chunk (a URL, base64): no better place
    end = cut
    while end > start and text[end - 1].isspace():
        end -= 1
    nxt = cut
    while nxt < len(text) and text[nxt].isspace():
        nxt += 1
    return end, nxt


def _normalize(span: str) -> str:
    """Collapse whitespace; a blank line becomes exactly one ``"\\n\\n"``."""
    # Most spans (all of rag.ingest.loaders' text) are collapsed already, and checking is several times
    # cheaper than rebuilding. isprintable() is False for all whitespace but the ASCII space.
    if (
        "  " not in span
        and "\n\n\n" not in span
        and " \n" not in span
        and "\n " not in span
        and span.replace("\n\n", "").isprintable()
        and span[:1] != " "
        and span[-1:] != " "
    ):
        return span
    return "\n\n".join(
        " ".join(words) for part in _PARA_BREAK.split(span) if (words := part.split())
    )


def _overlap_start(
    text: str,
    prev_start: int,
    prev_end: int,
    pos: int,
    fit_end: int,
    size: int,
    overlap: int,
    mid_sentence: bool,
) -> int:
    """Where the next chunk starts: in the previous chunk's tail, or at ``pos`` (no overlap)."""
    # The repeated tail is at most `overlap` long, leaves text up to `fit_end` room, and is never
    # the whole previous chunk.
    lo = max(prev_end - overlap, fit_end - size, prev_start + 1)
    if lo >= prev_end:
        return pos
    if mid_sentence:
        # The cut fell inside one over-long sentence: carry its trailing whole words instead.
        m = _WORD_START.search(text, lo - 1, prev_end)
        return m.start() + 1 if m else pos
    best = pos
    for m in _SENT_END.finditer(text, max(prev_start, lo - 40), prev_end):
        if lo <= m.end() and _ends_sentence(m):
            best = m.end()
            break
    # A paragraph start counts too: a heading without a final period still ends a sentence.
    for m in _PARA_BREAK.finditer(text, max(prev_start, lo - 40), prev_end):
        if lo <= m.end() < best:
            nxt = m.end()
            while text[nxt].isspace():
                nxt += 1
            best = min(best, nxt)
            break
    return best
