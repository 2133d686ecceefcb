"""Questions typed without diacritics, spelled back as the corpus spells them.

Czech, Slovak and Polish are often typed without their accents in chat ("Jak dlouho trva uplne
nabiti?"). The words then still reach the corpus through the form map (:mod:`rag.language.keys`),
but the embedding model has seen such text rarely: on the sample corpus an unaccented question
sits 0.01-0.02 further from its passage than the same question with its accents, which is the
width of the band the distance rules decide in. So before a question typed entirely in ASCII is
embedded and keyed, each of its words that the owner's corpus writes with diacritics is spelled
the way the corpus writes it most often (its ``a:`` spelling entries, counted per owner like
every key). Stopwords have no spelling entries; they are spelled from the language's stopword
list when only one accented spelling exists ("jaky" -> "jaký"; "ze" stays, "že" and "ze" are
both words). A word the corpus never writes with accents stays as typed.

A word the corpus does not hold is spelled from the language's lemma dictionary (simplemma's,
Czech only: built once per process, about a second and 40 MB) when the dictionary knows exactly
one accented spelling of it and the unaccented spelling is not a word of its own: "manzelky" ->
"manželky", while "byt" (a flat, or "být") and "stala" ("stala" or "stála") stay as typed. A
word the model has never seen moves a question's vector towards whatever passage is closest in
its other words; spelled, the word counts.

Only questions in a language whose writers commonly drop its diacritics in chat are spelled back:
Czech, Slovak and Polish. A German question without umlauts is ordinary German ("schon" is a
word, and so is "schön"), and an English question's words are English: neither is touched.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import lru_cache

from unidecode import unidecode

from rag.language.keys import normalize, tokenize, unaccent
from rag.language.lemmas import dictionary_words
from rag.language.stopwords import STOPWORDS

_MIN_LETTERS = 2  # a single letter ("a", "i", "o") is too ambiguous to restore
# languages typed without their diacritics in chat (rag.language.question_keys gives an ASCII
# question of one of them the corpus's language)
RESTORED_LANGS = frozenset({"cs", "sk", "pl"})
# languages whose lemma dictionary also spells words the corpus lacks (Slovak's is 2.5 times
# Czech's, Polish's larger still)
DICTIONARY_LANGS = frozenset({"cs"})

_dictionary_lock = threading.Lock()
_dictionaries: dict[str, dict[str, str]] = {}


def may_restore(question: str) -> bool:
    """Whether ``question`` is typed without any diacritic: only then is it spelled back."""
    return question.isascii() and any(c.isalpha() for c in question)


@lru_cache(maxsize=64)
def _stopword_spellings(lang: str) -> dict[str, str]:
    spellings: dict[str, set[str]] = {}
    for word in STOPWORDS.get(lang, ()):
        spellings.setdefault(unaccent(word), set()).add(word)
    return {
        form: next(iter(words))
        for form, words in spellings.items()
        if len(words) == 1 and not next(iter(words)).isascii()
    }


def dictionary_spellings(lang: str) -> Mapping[str, str]:
    """Unaccented form -> the one accented spelling the language's lemma dictionary knows, for
    forms that are not words of the dictionary unaccented. Built on first use, once."""
    if lang not in DICTIONARY_LANGS:
        return {}
    found = _dictionaries.get(lang)
    if found is None:
        with _dictionary_lock:
            found = _dictionaries.get(lang)
            if found is None:
                found = _build_dictionary(lang)
                _dictionaries[lang] = found
    return found


def _build_dictionary(lang: str) -> dict[str, str]:
    words = dictionary_words(lang)
    if words is None:  # questions are then spelled from the corpus alone
        return {}
    spellings: dict[str, str] = {}
    for word in words:
        if word.isascii():
            continue
        low = word.lower()
        form = unidecode(low)
        if len(form) != len(low):
            continue
        known = spellings.get(form)
        if known is None:
            spellings[form] = low
        elif known != low:
            spellings[form] = ""  # two spellings: the dictionary cannot tell
    return {
        form: spelling
        for form, spelling in spellings.items()
        if spelling and not any(w in words for w in (form, form.capitalize(), form.upper()))
    }


def restorable_forms(question: str) -> list[str]:
    """The forms of the question's words that a spelling entry could restore, in order."""
    if not may_restore(question):
        return []
    forms = [t.lower() for t in tokenize(question) if _plain_word(t)]
    return list(dict.fromkeys(forms))


def _plain_word(token: str) -> bool:
    return len(token) >= _MIN_LETTERS and token.isalpha() and token.isascii()


def _cased(typed: str, spelling: str) -> str:
    return "".join(s.upper() if t.isupper() else s for t, s in zip(typed, spelling, strict=True))


def restore(question: str, lang: str, spellings: Mapping[str, str]) -> str:
    """``question`` with its unaccented words spelled as ``spellings`` or the stopword list say.

    Args:
        question: The question as typed; anything but an all-ASCII question comes back as it is.
        lang: The question's language: only Czech, Slovak and Polish questions are restored,
            and its stopword list applies.
        spellings: Lower-case form -> the corpus's lower-case spelling of it ("" where the
            corpus mostly writes it unaccented: kept as typed). A form it lacks is spelled from
            the stopword list, then from the language's dictionary.

    Returns:
        The question with each restorable word replaced, its capitals kept where typed.
    """
    if lang not in RESTORED_LANGS or not may_restore(question):
        return question
    stop = _stopword_spellings(lang)
    dictionary = dictionary_spellings(lang)
    text = normalize(question)
    out: list[str] = []
    cursor = 0
    for token in tokenize(text):
        at = text.find(token, cursor)
        if at < 0:  # cannot happen for ASCII text; keep the rest as typed
            break
        spelling = None
        if _plain_word(token):
            form = token.lower()
            spelling = spellings.get(form)
            if spelling is None:
                spelling = stop.get(form) or dictionary.get(form)
        if spelling and len(spelling) == len(token) and unaccent(spelling) == form:
            out.append(text[cursor:at])
            out.append(_cased(token, spelling))
            cursor = at + len(token)
    out.append(text[cursor:])
    return "".join(out)
