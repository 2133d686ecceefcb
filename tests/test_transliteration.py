"""unaccent() of a long text takes a shortcut through NFD; it must give what the character table
gives, character by character, for every text."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from rag.language import keys
from rag.language.keys import _BEFORE_NFD, _MAX_WORD, _TRANSLITERATION, unaccent


def by_table(s: str) -> str:
    return keys._scrub_surrogates(s).translate(_TRANSLITERATION).lower()


def test_nfd_keeps_the_replacement_of_every_code_point() -> None:
    # the shortcut's premise: where NFD leaves exactly one ASCII character, it is the character's
    # replacement, and NFD never leaves two
    wrong = []
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp < 0xE000:
            continue
        ch = chr(cp)
        plain = unicodedata.normalize("NFD", ch).encode("ascii", "ignore")
        assert len(plain) <= 1, f"U+{cp:04X} leaves {plain!r}"
        if len(plain) == 1 and ch not in _BEFORE_NFD and plain.decode() != _TRANSLITERATION[cp]:
            wrong.append(f"U+{cp:04X}")
    assert not wrong, f"NFD's ASCII is not the replacement of {wrong}"


@pytest.mark.parametrize(
    "text",
    [
        "Příliš žluťoučký kůň úpěl ďábelské ódy „na louce“ – a pak… odešel.",
        "Die Straße ist 5\u00a0km lang; «Grüße» an Jürgen.",
        "Kaczyński a Łódź: ł nemá v NFD základ.",
        "Москва и Ёлка: кириллица идёт по таблице.",
        "a ≠ b, a Greek question mark\u037e and e\u0301 written apart",
        "ASCII only, nothing to replace at all in this text.",
    ],
)
def test_a_long_text_unaccents_as_the_table_does(text: str) -> None:
    long = (text + " ") * 4
    assert len(long) > _MAX_WORD
    assert unaccent(long) == by_table(long)
