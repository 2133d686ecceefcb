"""The chunker: paragraphs packed, long ones cut between sentences, bounded overlap, offsets."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from rag.errors import ConfigError
from rag.ingest.chunking import Chunk, chunk_text, split_sentences

_BLANK_LINE = re.compile(r"\n\s*\n")


def normalized(span: str) -> str:
    """What a chunk's text must be for its span: whitespace collapsed, blank lines as one."""
    parts = (" ".join(p.split()) for p in _BLANK_LINE.split(span))
    return "\n\n".join(p for p in parts if p)


def sentence(i: int, words: int = 8) -> str:
    """A distinct sentence, e.g. 'Smlouva 3 upravuje ... lhůty.'"""
    body = " ".join(["upravuje", "platby", "a", "lhůty", "dodávek"] * 4)[: words * 7]
    return f"Smlouva {i} {body.strip()} konec."


def check_invariants(text: str, chunks: list[Chunk], size: int, overlap: int) -> None:
    """What must hold for any text: bounds, offsets, order, overlap, full coverage."""
    covered = bytearray(len(text))
    for i, c in enumerate(chunks):
        assert c.ordinal == i
        assert c.text, "empty chunk"
        assert c.char_count == len(c.text) <= size, (c.char_count, size)
        assert normalized(text[c.start : c.end]) == c.text
        covered[c.start : c.end] = b"\x01" * (c.end - c.start)
        if i:
            prev = chunks[i - 1]
            assert prev.start < c.start and prev.end < c.end
            assert prev.end - c.start <= overlap, (prev.end - c.start, overlap)
            # Never starts mid-word, unless the previous piece was one over-long "word" cut hard.
            assert text[c.start - 1].isspace() or c.start == prev.end
    missing = [k for k, ch in enumerate(text) if not ch.isspace() and not covered[k]]
    assert not missing, f"characters outside every chunk, first at {missing[0]}"


# --- arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "overlap"), [(99, 0), (100, 50), (100, -1), (1000, 500), (1000, 600)]
)
def test_bad_arguments_are_config_errors(size: int, overlap: int) -> None:
    with pytest.raises(ConfigError):
        chunk_text("Věta.", size=size, overlap=overlap)


def test_smallest_valid_arguments() -> None:
    assert [c.text for c in chunk_text("Krátká věta.", size=100, overlap=49)] == ["Krátká věta."]


@pytest.mark.parametrize("text", ["", "   ", "\n\n \t\n"])
def test_blank_text_has_no_chunks(text: str) -> None:
    assert chunk_text(text) == []


# --- short records --------------------------------------------------------------------------------


def test_short_record_is_one_chunk_equal_to_the_record() -> None:
    text = "Dovolená se hlásí vedoucímu týmu. Schvaluje ji do tří dnů."
    assert chunk_text(text) == [Chunk(0, text, 0, len(text), len(text))]


def test_short_record_whitespace_is_collapsed_and_offsets_kept() -> None:
    text = "  Heslo  se mění\tkaždé\n90 dní.  \n"
    [chunk] = chunk_text(text)
    assert chunk.text == "Heslo se mění každé 90 dní."
    assert (chunk.start, chunk.end) == (2, text.index(".") + 1)


# --- paragraphs -----------------------------------------------------------------------------------


def test_paragraphs_are_packed_while_they_fit() -> None:
    paras = [" ".join(sentence(10 * p + s) for s in range(4)) for p in range(4)]
    assert all(250 < len(p) < 330 for p in paras), [len(p) for p in paras]
    text = "\n\n".join(paras)
    chunks = chunk_text(text, size=1000, overlap=0)
    assert [c.text for c in chunks] == ["\n\n".join(paras[:3]), paras[3]]


def test_a_paragraph_that_fits_is_never_split_even_to_make_room_for_overlap() -> None:
    first = " ".join(sentence(i, words=5) for i in range(2))
    second = " ".join(sentence(10 + i, words=5) for i in range(3))
    # The last sentence of the first paragraph would fit the overlap, but not with the second.
    assert len(sentence(1, words=5)) < 90 and len(sentence(1, words=5)) + 2 + len(second) > 200
    assert len(first) + len(second) > 200 and len(second) <= 200
    text = f"{first}\n\n{second}"
    chunks = chunk_text(text, size=200, overlap=90)
    assert [c.text for c in chunks] == [first, second]


def test_overlap_carries_whole_sentences_across_a_paragraph_break() -> None:
    paras = [" ".join(sentence(10 * p + s, words=5) for s in range(4)) for p in range(3)]
    text = "\n\n".join(paras)
    chunks = chunk_text(text, size=400, overlap=60)
    for k in (1, 2):  # each paragraph gets the last sentence of the one before it
        tail = sentence(10 * (k - 1) + 3, words=5)
        assert len(tail) <= 60
        assert chunks[k].text == f"{tail}\n\n{paras[k]}"
    assert len(chunks) == 3
    check_invariants(text, chunks, 400, 60)


def test_heading_stays_with_the_start_of_a_long_paragraph() -> None:
    body = " ".join(sentence(i) for i in range(20))
    text = f"Úvod\n\n{body}"
    chunks = chunk_text(text, size=300, overlap=0)
    assert chunks[0].text.startswith("Úvod\n\nSmlouva 0 ")
    assert all(c.text.endswith("konec.") for c in chunks)


# --- sentences ------------------------------------------------------------------------------------


def test_long_paragraph_is_cut_between_sentences() -> None:
    sentences = [sentence(i) for i in range(30)]
    text = " ".join(sentences)
    chunks = chunk_text(text, size=300, overlap=0)
    assert len(chunks) > 3
    rebuilt = []
    for c in chunks:
        parts = split_sentences(c.text)
        assert all(p in sentences for p in parts), c.text
        rebuilt.extend(parts)
    assert rebuilt == sentences


# (text, sentences) as the splitter gives them; the abbreviations, initials and dates stay inside.
SENTENCE_CASES = [
    ("Viz např. Obr. 3 níže. Další věta.", ["Viz např. Obr. 3 níže.", "Další věta."]),
    ("Přijde Ing. Novák. Potom MUDr. Svobodová.", ["Přijde Ing. Novák.", "Potom MUDr. Svobodová."]),
    ("Přišla Mgr. Malá, tj. Vedoucí týmu.", ["Přišla Mgr. Malá, tj. Vedoucí týmu."]),
    ("Firma ABC s.r.o. Praha dodala zboží.", ["Firma ABC s.r.o. Praha dodala zboží."]),
    ("Narodil se 1. ledna 1990. Pak odjel.", ["Narodil se 1. ledna 1990.", "Pak odjel."]),
    ("Platíme do 31. 12. 2024. Lhůta je pevná.", ["Platíme do 31. 12. 2024.", "Lhůta je pevná."]),
    ("Dle zák. č. 89/2012 Sb. Nový režim platí.", ["Dle zák. č. 89/2012 Sb. Nový režim platí."]),
    ("Je to na p. 12. Tam hledej.", ["Je to na p. 12.", "Tam hledej."]),
    # "atd." is kept inside even where it happens to end a sentence: merging two is harmless.
    ("Jablka, hrušky atd. Ovoce je zdravé.", ["Jablka, hrušky atd. Ovoce je zdravé."]),
    ("Zavolal T. G. Masaryk. Nikdo nepřišel.", ["Zavolal T. G. Masaryk.", "Nikdo nepřišel."]),
    ("Opravdu? Ano! Dobře… Konec.", ["Opravdu?", "Ano!", "Dobře…", "Konec."]),
    ("„Přijdu,“ řekl. „Určitě.“ Pak odešel.", ["„Přijdu,“ řekl.", "„Určitě.“", "Pak odešel."]),
    ("Stojí to 5 Kč. 10 lidí platí.", ["Stojí to 5 Kč. 10 lidí platí."]),
    ("See e.g. Section 2. It applies.", ["See e.g. Section 2.", "It applies."]),
    ("Konec řádku.\nDalší řádek.", ["Konec řádku.", "Další řádek."]),
    # a blank line ends a sentence without a stop: a heading is no part of the next sentence
    (
        "## Zákaznická podpora\n\nSedm kolegů odpovídá.\n\n## IT provoz",
        ["## Zákaznická podpora", "Sedm kolegů odpovídá.", "## IT provoz"],
    ),
    # An ordinal's period ends no sentence, though German follows it by a capital; a function
    # word after a number opens one; a number an abbreviation counts is a cardinal.
    (
        "Die Glashütte entstand Mitte des 18. Jahrhunderts am Rand der Stadt Brünn. Sie wuchs.",
        [
            "Die Glashütte entstand Mitte des 18. Jahrhunderts am Rand der Stadt Brünn.",
            "Sie wuchs.",
        ],
    ),
    ("Er starb am 28. Februar 2008 in Berlin.", ["Er starb am 28. Februar 2008 in Berlin."]),
    ("Das war im 2. Weltkrieg. Danach nicht.", ["Das war im 2. Weltkrieg.", "Danach nicht."]),
    (
        "Kapitola 3. Pracovní stanice má dva monitory.",
        ["Kapitola 3. Pracovní stanice má dva monitory."],
    ),
    # a possessive and a conjunction are function words too
    ("Ich bin 25. Mein Bruder ist 30.", ["Ich bin 25.", "Mein Bruder ist 30."]),
    ("Přišlo jich 12. Protože pršelo, odešli.", ["Přišlo jich 12.", "Protože pršelo, odešli."]),
    ("Es gab 100. Dann mehr.", ["Es gab 100.", "Dann mehr."]),
    ("Platí do 31.12. Pak ne.", ["Platí do 31.12.", "Pak ne."]),
    ("Hodnota je 3.5. Další věta.", ["Hodnota je 3.5.", "Další věta."]),
    ("Byl to rok 12. Tam začal.", ["Byl to rok 12.", "Tam začal."]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCE_CASES)
def test_czech_aware_sentence_splitting(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_chunks_are_not_cut_after_abbreviations() -> None:
    # Every "sentence end" candidate except the real ones is an abbreviation or a date ordinal.
    unit = (
        "Smlouvu podepsal Ing. Jan Dvořák dne 1. ledna 2024 za firmu Stavby s.r.o. Brno, "
        "tj. Dodavatele, např. Pro účely auditu."
    )
    text = " ".join(unit for _ in range(12))
    for c in chunk_text(text, size=300, overlap=0):
        assert c.text.startswith("Smlouvu podepsal"), c.text[:40]
        assert c.text.endswith("Pro účely auditu."), c.text[-40:]


def test_sentence_longer_than_size_is_cut_at_whitespace() -> None:
    words = [f"slovo{i}" for i in range(120)]
    text = " ".join(words)  # one sentence of about 900 characters, no punctuation
    chunks = chunk_text(text, size=150, overlap=40)
    check_invariants(text, chunks, 150, 40)
    assert len(chunks) >= 6
    for c in chunks:
        assert all(w in words for w in c.text.split()), c.text


def test_sentence_cut_prefers_a_line_break() -> None:
    lines = [f"- položka seznamu číslo {i} bez tečky" for i in range(12)]
    text = "\n".join(lines)
    for c in chunk_text(text, size=150, overlap=0):
        assert c.text.startswith("- položka"), c.text
        assert c.text.endswith("bez tečky"), c.text


def test_word_longer_than_size_is_cut_hard() -> None:
    text = "Odkaz: " + "x" * 450 + " konec."
    chunks = chunk_text(text, size=100, overlap=30)
    check_invariants(text, chunks, 100, 30)
    assert "".join(c.text for c in chunks).replace(" ", "") == text.replace(" ", "")


# --- overlap --------------------------------------------------------------------------------------


@pytest.mark.parametrize("overlap", [0, 1, 60, 150, 499])
def test_overlap_is_whole_trailing_sentences_within_the_bound(overlap: int) -> None:
    sentences = [sentence(i, words=n) for i, n in enumerate([3, 6, 9, 4] * 15)]
    assert max(map(len, sentences)) < 100
    text = " ".join(sentences)
    chunks = chunk_text(text, size=1000, overlap=overlap)
    check_invariants(text, chunks, 1000, overlap)
    overlaps = 0
    for prev, cur in itertools.pairwise(chunks):
        shared = prev.end - cur.start
        if shared <= 0:
            continue
        overlaps += 1
        repeated = normalized(text[cur.start : prev.end])
        assert prev.text.endswith(repeated) and cur.text.startswith(repeated)
        assert all(s in sentences for s in split_sentences(repeated)), repeated
    assert len(chunks) > 3
    if overlap >= 100:  # every sentence is shorter, so each chunk repeats at least one
        assert overlaps == len(chunks) - 1
    elif overlap < 25:  # every sentence is longer, so none is repeated
        assert overlaps == 0


def test_overlap_inside_an_over_long_sentence_is_whole_words() -> None:
    text = " ".join(f"w{i:03d}" for i in range(300))
    chunks = chunk_text(text, size=200, overlap=50)
    check_invariants(text, chunks, 200, 50)
    for prev, cur in itertools.pairwise(chunks):
        assert 0 < prev.end - cur.start <= 50
        assert cur.text.split()[0] in prev.text.split()


# --- any text -------------------------------------------------------------------------------------

_PIECES = [
    "slovo",
    "Praha",
    "např.",
    "Ing.",
    "1.",
    "ledna",
    "s.r.o.",
    "konec.",
    "Konec!",
    "proč?",
    "„Ano.“",
    "Ahoj.",
    "č.",
    "5.",
    "A.",
    "…",
    "(Tak)",
    "atd.",
    "Sb.",
    "žluťoučký",
]
_SPACES = [" ", " ", " ", "  ", "\t", "\n", "\n\n", "\n \n", "\n\n\n", "\u00a0", "\r\n\r\n"]


def random_text(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(0, 500)):
        roll = rng.random()
        out.append("y" * rng.randint(40, 400) if roll < 0.01 else rng.choice(_PIECES))
        out.append(rng.choice(_SPACES) if rng.random() < 0.3 else " ")
    return "".join(out)


@pytest.mark.parametrize("seed", range(40))
def test_invariants_hold_for_random_text(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        text = random_text(rng)
        size = rng.choice([100, 173, 400, 1000])
        overlap = rng.randint(0, (size - 1) // 2)
        chunks = chunk_text(text, size=size, overlap=overlap)
        check_invariants(text, chunks, size, overlap)
        # Paragraphs that fit are kept whole in some chunk.
        for para in _BLANK_LINE.split(text):
            flat = " ".join(para.split())
            if flat and len(para.strip()) <= size:
                assert any(flat in c.text for c in chunks), flat[:60]


def test_chunking_is_deterministic() -> None:
    text = random_text(random.Random(99))
    assert chunk_text(text, size=300, overlap=80) == chunk_text(text, size=300, overlap=80)
