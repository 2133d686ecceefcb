"""Every sentence and small word table the answer path has in each supported language.

Adding a language means adding it to :data:`LANGUAGES` and giving it a row in every table below
(``tests/test_phrases.py`` checks that none is missing), plus its stopwords (rag.language.stopwords), its
lemma handling (rag.language.lemmas) and its answer-type tables (rag.language.answer_types).

The follow-up tables are matched against a question's lowercased tokens whatever language it was
detected in: a follow-up ("A on?") is too short to detect reliably, so
:data:`CONTINUATION_WORDS` and :data:`ANAPHORA_WORDS` are the unions of the per-language rows.
"""

from __future__ import annotations

LANGUAGES = ("cs", "sk", "pl", "de", "ru", "en")
FALLBACK = "en"  # the language of the answer to a question in any other language


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# The answer when the knowledge base holds none (status ``not_found``).
NOT_FOUND = {
    "cs": "V znalostní bázi to není.",
    "sk": "V databáze znalostí to nie je.",
    "pl": "Nie ma tego w bazie wiedzy.",
    "de": "Das steht nicht in der Wissensbasis.",
    "ru": "Этого нет в базе знаний.",
    "en": "Not in the knowledge base.",
}
# What an extractive answer (no chat model, or a failed one) starts with.
EXTRACTIVE_LABEL = {
    "cs": "Výňatek ze zdroje",
    "sk": "Výňatok zo zdroja",
    "pl": "Fragment źródła",
    "de": "Auszug aus der Quelle",
    "ru": "Выдержка из источника",
    "en": "Excerpt from the source",
}
# The heading of the cited sources after a chat answer (/v1/chat/completions).
SOURCES_LABEL = {
    "cs": "Zdroje",
    "sk": "Zdroje",
    "pl": "Źródła",
    "de": "Quellen",
    "ru": "Источники",
    "en": "Sources",
}
# The language the chat model is told to answer in (rag/answer/prompts/system.txt).
LANG_NAMES = {
    "cs": "Czech",
    "sk": "Slovak",
    "pl": "Polish",
    "de": "German",
    "ru": "Russian",
    "en": "English",
}

# Openings (one or two words) that continue the previous question rather than start a new one.
CONTINUATIONS: dict[str, tuple[str, ...]] = {
    "cs": ("a", "ale", "i", "také", "taky", "tak", "no"),
    "sk": ("a", "ale", "i", "tak", "no"),
    "pl": ("a", "i", "oraz", "zaś"),
    "de": ("und", "aber", "auch"),
    "ru": ("а", "и", "но", "тоже"),
    "en": ("and", "also", "but", "what about", "how about"),
}
# Words that refer back to something named before; none of them is also a common content word.
ANAPHORA: dict[str, tuple[str, ...]] = {
    "cs": _words(
        """on ona ono oni ony jeho jí ní něj něho němu mu jemu ho jim nim nich jejich její
        tam tom tomu něm"""
    ),
    "sk": _words("on ona ono oni ony jeho jej mu jemu ho nim nich tam tom tomu ňom nemu ich im"),
    "pl": _words("on ona ono oni jego jej mu ich im niego niej tym tam"),
    "de": _words("er ihm ihn ihnen sein seine seinen seinem seiner dort dessen deren"),
    "ru": _words("он она оно они его её ее ему ей их им нём нем ней там"),
    "en": _words("he she him his her it its they them their"),
}
# Labels a chat model may put before its rewrite of a follow-up ("Question: ..."), dropped.
REWRITE_LABELS: dict[str, tuple[str, ...]] = {
    "cs": ("Otázka:",),
    "sk": ("Otázka:",),
    "pl": ("Pytanie:",),
    "de": ("Frage:",),
    "ru": ("Вопрос:",),
    "en": ("Standalone question:", "Question:"),
}
# Languages that capitalize every noun, so that a capital letter does not mark a name.
NOUNS_CAPITALIZED = frozenset({"de"})

CONTINUATION_WORDS = frozenset(p for row in CONTINUATIONS.values() for p in row if " " not in p)
CONTINUATION_PAIRS = frozenset(p for row in CONTINUATIONS.values() for p in row if " " in p)
ANAPHORA_WORDS = frozenset(w for row in ANAPHORA.values() for w in row)
# English first: "Standalone question:" must go before "Question:" does.
REWRITE_PREFIXES = tuple(
    dict.fromkeys(p for lang in reversed(LANGUAGES) for p in REWRITE_LABELS[lang])
)


def answer_language(lang: str) -> str:
    """The language an answer is written in: the question's when supported, else English."""
    return lang if lang in NOT_FOUND else FALLBACK
