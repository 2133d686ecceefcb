"""Greetings, thanks and request frames around a chat question, which are not what it asks.

People write to a chat as they write to a colleague: "Dobrý den, kolik stojí parkování v Brně?",
"Mohl byste mi prosím říct, kde je shromaždiště?", "Kolik dní dovolené mám za rok? Díky!". The
formula is not content: its words are rare in any corpus, so they weigh in the word coverage and
take the places of the focus words, and they pull the question's vector away from its passage.
Over the shipped set's Czech cases, a trailing "Děkuji." alone cost 113 of 129 answers.

:func:`without_courtesy` cuts such formulas off the beginning of a question (greetings, "please",
request frames such as "chtěl bych se zeptat", "could you tell me", "können Sie mir sagen", and
thanks said in advance) and off its end (thanks), and returns what is left: the text a search
keys and embeds. Formulas are matched on unaccented lower-case words, so "dekuji" and "Děkuji"
are one; "prosím" / "please" / "bitte" may stand anywhere inside a leading formula. Only whole
formulas at the edges go: "Kdo vyřizuje poděkování partnerům?" keeps every word, thanks open a
question only when punctuation closes them ("Díky předem: ..."; "Díky odklonu dopravy ..." is
the preposition "thanks to"), and a message that is nothing but a formula ("Děkuji!") is
searched as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rag.language.keys import unaccent

_WORD = re.compile(r"[^\W_]+")

# Per language, as written; compared after unaccent ("Děkuji" -> "dekuji", "спасибо" -> "spasibo").
_LEADING = {
    "cs": """dobrý den | dobré ráno | dobrý večer | ahoj | ahojte | čau | zdravím | zdravím vás
        | prosím | prosím vás | prosím tě | mám dotaz | mám otázku | mám jeden dotaz
        | chtěl bych se zeptat | chtěla bych se zeptat | chtěl jsem se zeptat | chtěla jsem se zeptat
        | chtěl bych vědět | chtěla bych vědět | rád bych věděl | ráda bych věděla
        | potřebuji vědět | potřeboval bych vědět | potřebovala bych vědět | potřebuju vědět
        | můžete mi říct | můžete mi říci | mohl byste mi říct | mohla byste mi říct
        | mohl byste mi říci | mohla byste mi říci | mohli byste mi říct | mohli byste mi říci
        | můžeš mi říct | mohl bys mi říct | mohla bys mi říct | nevíte | nevíš | víte""",
    "sk": """dobrý deň | ahoj | zdravím | prosím | prosím vás | mám otázku
        | chcel by som sa opýtať | chcela by som sa opýtať | chcem sa opýtať
        | chcel by som vedieť | chcela by som vedieť | potrebujem vedieť
        | môžete mi povedať | mohli by ste mi povedať | viete mi povedať | neviete""",
    "pl": """dzień dobry | cześć | proszę | chciałbym zapytać | chciałabym zapytać
        | chciałbym wiedzieć | chciałabym wiedzieć | czy może mi pan powiedzieć
        | czy może mi pani powiedzieć""",
    "de": """hallo | guten tag | guten morgen | bitte | ich habe eine frage | ich hätte eine frage
        | können sie mir sagen | könnten sie mir sagen | kannst du mir sagen | ich möchte wissen
        | ich würde gerne wissen | wissen sie""",
    "ru": """здравствуйте | добрый день | привет | пожалуйста | скажите | подскажите
        | не подскажете | скажите пожалуйста | подскажите пожалуйста | у меня вопрос""",
    "en": """hi | hello | hey | good morning | good afternoon | please | quick question
        | i have a question | could you tell me | can you tell me | would you tell me
        | i would like to know | i d like to know | i want to know | i need to know | do you know""",
}
_THANKS = {
    "cs": """děkuji | děkuju | díky | dík | děkuji předem | předem děkuji | díky předem
        | předem díky | děkuji moc | moc děkuji | díky moc | moc díky | děkuji za odpověď""",
    "sk": "ďakujem | vďaka | ďakujem vopred | vopred ďakujem | ďakujem pekne",
    "pl": "dziękuję | dzięki | z góry dziękuję | dziękuję z góry",
    "de": "danke | vielen dank | danke schön | danke im voraus | im voraus danke",
    "ru": "спасибо | заранее спасибо | спасибо заранее | большое спасибо",
    "en": "thanks | thank you | thanks in advance | thank you in advance | many thanks | cheers",
}
_DELIMITERS = frozenset(",:;!.-\u2013\u2014")
# words a leading formula may hold anywhere ("Mohl byste mi prosím říct, ...")
_FILLERS = frozenset(unaccent(w) for w in ("prosím", "please", "bitte", "пожалуйста", "proszę"))


def _formulas(table: dict[str, str]) -> tuple[tuple[str, ...], ...]:
    found = {
        tuple(unaccent(w) for w in _WORD.findall(phrase))
        for text in table.values()
        for phrase in text.split("|")
    }
    return tuple(sorted((f for f in found if f), key=len, reverse=True))  # longest first


@lru_cache(maxsize=1)
def _tables() -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    thanks = _formulas(_THANKS)
    return tuple(sorted({*_formulas(_LEADING), *thanks}, key=len, reverse=True)), thanks


def _leading(words: list[str], i: int, formulas: tuple[tuple[str, ...], ...]) -> int:
    """How many words from ``i`` on one leading formula takes (its fillers included), or 0."""
    for formula in formulas:
        k = i
        for w in formula:
            while k < len(words) and words[k] in _FILLERS and w not in _FILLERS:
                k += 1
            if k >= len(words) or words[k] != w:
                break
            k += 1
        else:
            return k - i
    return 0


def _delimited(question: str, spans: list[tuple[int, int]], k: int) -> bool:
    """Whether punctuation follows the ``k``-th word: "Díky předem: ..." thanks, but "Díky
    odklonu dopravy ..." is the preposition "thanks to"."""
    after = question[spans[k][1] : spans[k + 1][0]] if k + 1 < len(spans) else ""
    return any(c in _DELIMITERS for c in after)


# Pictographs and other symbols ("🙂", "👍", "✓") say nothing a passage could answer, and an
# embedding model reads them as words: a trailing "🙂" cost 14 of the shipped set's answers.
_SYMBOLS = re.compile(
    "[\u2190-\u21ff\u2300-\u23ff\u2460-\u27bf\u2900-\u2bff\u3030\u303d\u3297\u3299"
    "\U0001f000-\U0001faff\ufe0e\ufe0f\u200d]+"
)


def core_question(question: str) -> str:
    """What ``question`` asks, as a search should read it: pictographs out, a question typed in
    capitals alone ("KOLIK STOJÍ PARKOVÁNÍ?") in ordinary case (capitals mark names and codes,
    and shouting marks every word), and the courtesy formulas at its edges cut off."""
    text = _SYMBOLS.sub(" ", question)
    if text != question:
        text = " ".join(text.split())
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= 4 and not any(c.islower() for c in letters):
        lowered = text.lower()
        text = lowered[:1].upper() + lowered[1:]
    return without_courtesy(text) if text else question


def without_courtesy(question: str) -> str:
    """``question`` without the greeting, request frame or thanks at its edges.

    Returns:
        What it asks ("Dobrý den, kolik stojí parkování? Díky!" -> "Kolik stojí parkování?"),
        capitalized as the question was; the question itself when it holds no formula or
        nothing but formulas.
    """
    spans = [(m.start(), m.end()) for m in _WORD.finditer(question)]
    if len(spans) < 2:
        return question
    words = [unaccent(question[a:b]) for a, b in spans]
    leading, thanks = _tables()
    i = 0
    while i < len(words) and (n := _leading(words, i, leading)):
        if _leading(words, i, thanks) == n and not _delimited(question, spans, i + n - 1):
            break  # thanks at the start only as a formula of its own
        i += n
    j = len(words)
    while j > i:
        end = next((len(f) for f in thanks if tuple(words[j - len(f) : j]) == f), 0)
        if not end:
            break
        j -= end
    if i >= j or (i == 0 and j == len(words)):
        return question
    start, stop = spans[i][0], spans[j - 1][1]
    tail = question[stop : spans[j][0] if j < len(words) else len(question)]
    core = question[start:stop] + ("?" if "?" in tail else tail.rstrip() if j == len(words) else "")
    if question[:1].isupper() and core[:1].islower():
        core = core[:1].upper() + core[1:]
    return core
