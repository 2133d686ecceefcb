"""Ranges of whole numbers, and the numbers they hold, as keys.

A table of rules states a range where a question names one number: "Jaké je stravné, když jsem
na cestě 14 hodin?" over "| 12 až 18 hodin | 212 Kč |", "Kolik platí dítě, kterému je 8 let?"
over "děti od 6 do 15 let". A reader takes the row whose range holds the number, measured in
the question's unit. So a sentence holds, for each closed range followed by a word, one key for
every number of the range with that word's lemma and stem (``v:14@hodina``), and a question's
number followed by a word asks for the same keys.

The unit is required on both sides, as the reader requires it: "14 dní" is not met by "12 až
18 hodin", and a bare "1990–2000" names no year of the decade. A range wider than
:data:`MAX_SPAN` states no single value a question could name (a price band "1 000–5 000 Kč";
"1990–2010 Kč" is no list of prices) and holds none; a bound in words ("více než 18 hodin",
"mladší 6 let", "děti do 6 let", "7 a více dní") holds the :data:`MAX_SPAN` whole numbers beyond
it.

The ranges read: "12–18 hodin" (any dash), "12 až 18 hodin", "od 12 do 18 hodin", "mezi 12 a 18
hodinami", and the same in German ("12 bis 18 Stunden", "von 12 bis 18", "zwischen 12 und 18")
and Russian ("от 12 до 18 часов", "с 12 по 18", "между 12 и 18"). A number that is part of a
time, a date or a decimal ("7:00–9:30", "1.–3.", "2,5–3") starts or ends no range. A number in
words bounds a range as its digits do ("od šesti let").

A question whether something may be done is answered by the limit whichever side of it the
number lies ("Může jít čtrnáctiletý syn do vířivky?" over "Do vířivky nesmějí děti do 12 let":
yes), so every range and bound also holds a key of its unit alone (``v:*@rok``,
:func:`any_number_keys`), which such a question asks for beside its number's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.language.answer_types import cardinal_value, names_a_unit_of_time, names_an_hour
from rag.language.keys import analyze_word

MAX_SPAN = 100  # numbers a range may hold, its ends included, less one
# Keys one text may hold: a sentence of nothing but bounds in many units ("více než 5 dní, 6
# týdnů, ...") holds no more than a table of fees does, whatever its length.
MAX_KEYS = 2000
VALUE_KEY = "v:"  # a number in a unit, as a key: v:14@hodina
RANGE_MARK = "@"  # between the number and its unit
ANY_NUMBER = "*"  # in place of the number: any range or bound of the unit (v:*@rok)

# A whole number that is not part of a time, date, decimal or longer number, or a word that may
# be a number's ("od šesti let": :func:`_value` reads it).
_NUM = r"(?<![\w.,:/])(?P<{}>\d{{1,5}}|[^\W\d_]{{3,}})(?![\w:/]|[.,]\d)"
_DASH = r"\s*[-‐‑‒–—]\s*"
# Which words may join the two numbers after which word before the first (None: no word).
_JOINS: dict[str | None, frozenset[str]] = {
    None: frozenset({"až", "bis"}),
    "od": frozenset({"do", "až do", "až"}),
    "mezi": frozenset({"a"}),
    "von": frozenset({"bis"}),
    "zwischen": frozenset({"und"}),
    "от": frozenset({"до"}),
    "с": frozenset({"по"}),
    "между": frozenset({"и"}),
}


def _alternatives(words: set[str]) -> str:
    """A regex alternation of ``words`` (longest first), their spaces any run of spaces."""
    return "|".join(
        r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=lambda w: (-len(w), w))
    )


_RANGE = re.compile(
    rf"(?:\b(?P<before>{_alternatives({w for w in _JOINS if w})})\s+)?"
    + _NUM.format("low")
    + rf"(?P<join>{_DASH}|\s+(?:{_alternatives(set().union(*_JOINS.values()))})\s+)"
    + _NUM.format("high")
    + r"\s+(?P<unit>[^\W\d_]+)",
    re.IGNORECASE,
)


# A bound said in words before a number: "více než 18 hodin" holds 19 hours and more, "mladší 6
# let" 5 years and fewer, "děti do 6 let" 6 years and fewer, "od 65 let" 65 and more (whole
# numbers, at most MAX_SPAN of them beyond the bound).
_ABOVE = (
    "více než", "víc než", "déle než", "starší než", "starší", "nad", "přes",
    "mehr als", "länger als", "älter als", "über",
    "более", "больше", "свыше", "старше",
)  # fmt: skip
_BELOW = (
    "méně než", "míň než", "kratší než", "mladší než", "mladší", "pod",
    "weniger als", "kürzer als", "jünger als", "unter",
    "менее", "меньше", "младше",
)  # fmt: skip
# Inclusive bounds: "od" and "do" (German "ab", "bis zu"; Russian "от", "до") bound a span of time
# ("děti do 6 let", "do 15 minut"), but as often lead somewhere ("do 75 zemí" is into 75
# countries) or tell the time of day ("do 18 hodin" is by six o'clock, "ab 8 Uhr" from eight):
# so only before a unit of time that is no hour (answer_types.names_a_unit_of_time).
_FROM = ("od", "ab", "от")
_UP_TO = ("do", "bis zu", "до")
_BOUNDS = {
    **{b: (1, False) for b in _ABOVE},
    **{b: (1, True) for b in _BELOW},
    **{b: (0, False) for b in _FROM},
    **{b: (0, True) for b in _UP_TO},
}  # a bound's words: (how far past the number the range starts, whether it runs below it)
_BOUND = re.compile(
    r"(?<!\w)(?P<bound>"
    + _alternatives(set(_BOUNDS))
    + r")\s+"
    + _NUM.format("n")
    + r"\s+(?P<unit>[^\W\d_]+)",
    re.IGNORECASE,
)

# A bound said after the number, before or after its unit: "na 7 a více dní", "7 dní a více", "děti
# 3 roky a mladší", "ab 7 Tagen und mehr" (inclusive: the number itself is in).
_AFTER = {
    **{b: False for b in ("a více", "a víc", "a déle", "a starší", "und mehr", "und älter",
                          "и более", "и больше", "и старше")},
    **{b: True for b in ("a méně", "a míň", "a mladší", "und weniger", "und jünger", "и менее",
                         "и меньше", "и младше")},
}  # fmt: skip
_AFTER_WORDS = _alternatives(set(_AFTER))
_TRAILING = re.compile(
    _NUM.format("n")
    + rf"(?:\s+(?P<bound>{_AFTER_WORDS})\s+(?P<unit>[^\W\d_]+)"
    # "30 lidí a více než polovina": a comparison of its own, no bound
    + rf"|\s+(?P<unit2>[^\W\d_]+)\s+(?P<bound2>{_AFTER_WORDS})(?!\w|\s+(?:než|als|чем)\b))",
    re.IGNORECASE,
)


def _value(number: str, lang: str) -> int | None:
    """A number's value: its digits, or a cardinal numeral's ("šesti": 6, "patnácti": 15), or
    None for any other word."""
    if number.isdigit():
        return int(number)
    token = analyze_word(number, lang)
    value = cardinal_value(token.lemmas, lang) if token is not None else None
    return int(value) if value is not None else None


def _a_span_of_time(word: str, lang: str) -> bool:
    token = analyze_word(word, lang)
    return (
        token is not None
        and names_a_unit_of_time(token.lemmas, token.form)
        and not names_an_hour(token.lemmas, token.form)
    )


def unit_keys(word: str, lang: str) -> tuple[str, ...]:
    """The key bodies a unit word is named by in range keys: its lemmas and its stem (none for a
    function word: "od 6 do 15 let" has no unit "do")."""
    token = analyze_word(word, lang)
    if token is None or token.stop:
        return ()
    return tuple(dict.fromkeys((*token.lemmas, token.stem)))


def number_keys(value: int, unit: tuple[str, ...]) -> tuple[str, ...]:
    """The keys a number measured in a unit asks for (``v:14@hodina``)."""
    return tuple(f"{VALUE_KEY}{value}{RANGE_MARK}{u}" for u in unit)


def any_number_keys(unit: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of a unit's range or bound whatever it holds (``v:*@rok``)."""
    return tuple(f"{VALUE_KEY}{ANY_NUMBER}{RANGE_MARK}{u}" for u in unit)


def range_keys(text: str, lang: str) -> tuple[str, ...]:
    """The keys of every number that a range or a bound of ``text`` holds, with its unit (at
    most :data:`MAX_KEYS`, the first ones read)."""
    out: dict[str, None] = {}
    for values, unit in _held(text, lang):
        if not unit:
            continue  # a function word after the number ("od 6 do 15 let": "6 do")
        out.update(dict.fromkeys(any_number_keys(unit)))
        for value in values:
            out.update(dict.fromkeys(number_keys(value, unit)))
            if len(out) >= MAX_KEYS:
                return tuple(out)[:MAX_KEYS]
    return tuple(out)


def _held(text: str, lang: str) -> Iterator[tuple[range, tuple[str, ...]]]:
    """The numbers each range or bound of ``text`` holds, and its unit's key bodies."""
    spans: list[tuple[int, int]] = []  # the closed ranges: "od 6 do 15 let" holds no "do 15 let"
    for m in _RANGE.finditer(text):
        before = m.group("before")
        join = " ".join(m.group("join").split()).lower()
        lead = before.lower() if before else None
        dashed = not join.strip(" -‐‑‒–—")
        # "až" and "bis" join two numbers whatever word comes before ("od 5 až 12" too)
        if not dashed and join not in _JOINS.get(lead, frozenset()) | _JOINS[None]:
            continue
        low, high = _value(m.group("low"), lang), _value(m.group("high"), lang)
        if low is None or high is None or not 0 < high - low <= MAX_SPAN:
            continue
        spans.append(m.span())
        yield range(low, high + 1), unit_keys(m.group("unit"), lang)
    for m in _BOUND.finditer(text):
        if any(start <= m.start("n") < end for start, end in spans):
            continue
        n = _value(m.group("n"), lang)
        if n is None:
            continue
        strict, below = _BOUNDS[" ".join(m.group("bound").lower().split())]
        if not strict and not _a_span_of_time(m.group("unit"), lang):
            continue
        if below:
            values = range(max(0, n - MAX_SPAN), n + 1 - strict)
        else:
            values = range(n + strict, n + strict + MAX_SPAN)
        yield values, unit_keys(m.group("unit"), lang)
    for m in _TRAILING.finditer(text):
        n = _value(m.group("n"), lang)
        if n is None:
            continue
        below = _AFTER[" ".join((m.group("bound") or m.group("bound2")).lower().split())]
        values = range(max(0, n - MAX_SPAN), n + 1) if below else range(n, n + MAX_SPAN)
        yield values, unit_keys(m.group("unit") or m.group("unit2"), lang)
