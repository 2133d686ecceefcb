"""Every supported language has every phrase and word table of rag.language.phrases."""

from __future__ import annotations

import pytest

from rag.language import phrases
from rag.language.phrases import LANGUAGES, NOT_FOUND, answer_language

# every per-language table of the module, found by its shape, so that a new one is checked too
TABLES = {
    name: value
    for name, value in vars(phrases).items()
    if isinstance(value, dict) and name.isupper()
}


def test_the_tables_are_found() -> None:
    assert {"NOT_FOUND", "EXTRACTIVE_LABEL", "SOURCES_LABEL", "LANG_NAMES"} <= set(TABLES)
    assert {"CONTINUATIONS", "ANAPHORA", "REWRITE_LABELS"} <= set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_language_has_every_phrase(name: str) -> None:
    table = TABLES[name]
    missing = [lang for lang in LANGUAGES if not table.get(lang)]
    extra = sorted(set(table) - set(LANGUAGES))
    assert not missing and not extra, f"{name}: missing {missing}, not a supported language {extra}"


@pytest.mark.parametrize("name", sorted(TABLES))
def test_phrases_are_trimmed_text(name: str) -> None:
    for lang, value in TABLES[name].items():
        for text in [value] if isinstance(value, str) else value:
            assert isinstance(text, str) and text == text.strip() and text, (name, lang, text)


def test_follow_up_words_are_lowercase_tokens() -> None:
    # is_followup compares them with a question's lowercased tokens
    for word in phrases.CONTINUATION_WORDS | phrases.ANAPHORA_WORDS:
        assert word == word.lower() and " " not in word, word
    assert all(len(p.split()) == 2 for p in phrases.CONTINUATION_PAIRS)


@pytest.mark.parametrize(
    ("lang", "answered_in"), [("cs", "cs"), ("ru", "ru"), ("en", "en"), ("fr", "en"), ("", "en")]
)
def test_an_unsupported_language_is_answered_in_english(lang: str, answered_in: str) -> None:
    assert answer_language(lang) == answered_in
    assert NOT_FOUND[answer_language(lang)]
