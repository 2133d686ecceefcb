"""A range of whole numbers holds each of its numbers in its unit (rag.language.ranges)."""

from __future__ import annotations

import pytest

from rag.language.question_keys import query_keys
from rag.language.ranges import MAX_KEYS, MAX_SPAN, range_keys
from rag.search.answerability import QuestionNeeds, assess, question_needs

ALLOWANCE = (
    "| délka cesty | stravné |\n| 5 až 12 hodin | 140 Kč |\n| 12 až 18 hodin | 212 Kč |\n"
    "| více než 18 hodin | 333 Kč |"
)


def _values(text: str, lang: str = "cs", unit: str = "hodina") -> list[int]:
    keys = range_keys(text, lang)
    numbers = [k[2:].split("@")[0] for k in keys if k.endswith("@" + unit)]
    # every range and bound holds its unit alone too
    assert ("*" in numbers) is bool(numbers), keys[:5]
    return sorted(int(n) for n in numbers if n != "*")


@pytest.mark.parametrize(
    ("text", "lang", "unit", "values"),
    [
        ("5 až 12 hodin", "cs", "hodina", list(range(5, 13))),
        ("10–15 minut", "cs", "minuta", list(range(10, 16))),
        ("10 - 15 minut", "cs", "minuta", list(range(10, 16))),
        ("děti od 6 do 15 let", "cs", "rok", list(range(6, 16))),
        ("mezi 3 a 5 dny", "cs", "den", [3, 4, 5]),
        ("von 8 bis 10 Stunden", "de", "stunde", [8, 9, 10]),
        ("zwischen 2 und 4 Tagen", "de", "tag", [2, 3, 4]),
        # a bound in words: strictly beyond it
        ("více než 18 hodin", "cs", "hodina", list(range(19, 19 + MAX_SPAN))),
        ("děti mladší 6 let", "cs", "rok", [0, 1, 2, 3, 4, 5]),
        ("Kinder unter 3 Jahren", "de", "jahr", [0, 1, 2]),
        ("děti do 6 let plavou zdarma", "cs", "rok", list(range(7))),  # inclusive
        ("senioři od 65 let", "cs", "rok", list(range(65, 65 + MAX_SPAN))),
        ("děti ve věku od 6 do 15 let", "cs", "rok", list(range(6, 16))),  # no "do 15 let"
        ("do 15 minut", "cs", "minuta", list(range(16))),
        ("na 7 a více dní", "cs", "den", list(range(7, 7 + MAX_SPAN))),  # after the number
        ("7 dní a více", "cs", "den", list(range(7, 7 + MAX_SPAN))),
        ("děti 3 roky a mladší", "cs", "rok", [0, 1, 2, 3]),
        # numbers in words, as digits
        ("Přijímáme děti od šesti let.", "cs", "rok", list(range(6, 6 + MAX_SPAN))),
        ("děti od šesti do patnácti let", "cs", "rok", list(range(6, 16))),
        ("děti mladší dvou let", "cs", "rok", [0, 1]),
        ("Kinder unter drei Jahren", "de", "jahr", [0, 1, 2]),
    ],
)
def test_a_range_holds_its_numbers_in_its_unit(
    text: str, lang: str, unit: str, values: list[int]
) -> None:
    assert _values(text, lang, unit) == values


@pytest.mark.parametrize(
    "text",
    [
        "7:00–9:30 obědy",  # times of day
        "1.–3. května",  # dates
        "12.-18. května",
        "2,5–3 hodiny",  # decimals
        "2 000–5 000 Kč",  # digit groups: a band of prices, no number of its own
        "1990–2100 let",  # wider than MAX_SPAN
        "18–12 hodin",  # no range
        "do 18 hodin",  # "do" and "od" before an hour bound a time of day
        "od 8 hodin",
        "vyváží do 75 zemí",  # "do" that leads somewhere: no span of time
        "zásilky od 5 kusů",
        "12 a 18 hodin",  # "a" joins two numbers only after "mezi"
        "1990–2000",  # no unit
        "přijelo 30 lidí a více než polovina odjela",  # a comparison of its own
        "od pondělí do pátku večer",  # words that are no numbers
        "vstup do konce června",
    ],
)
def test_what_is_no_range_holds_nothing(text: str) -> None:
    assert range_keys(text, "cs") == ()


def _needs(question: str) -> QuestionNeeds:
    q = query_keys(question, "cs")
    key_df = {k: 1 for w in q.words for k in w.keys}
    key_df.update({k: 0 for w in q.words if w.surface.isdigit() for k in w.keys})
    return question_needs(q, {}, key_df, 50, 2)


def test_a_question_for_a_number_in_a_unit_is_answered_by_the_row_whose_range_holds_it() -> None:
    needs = _needs("Jaké je stravné, když jsem na cestě 14 hodin?")
    # the number is nowhere in the corpus as written: only a window can tell
    assert needs.absent == ()
    a = assess(ALLOWANCE, "cs", needs, 2, True)
    assert a.answers, a
    assert a.required == [{"word": "14", "kind": "number", "df": 0, "matched_by": "range"}]
    # the last row's bound in words
    longer = _needs("Jaké je stravné za 20 hodin na cestě?")
    assert assess(ALLOWANCE, "cs", longer, 2, True).answers


@pytest.mark.parametrize(
    "question",
    [
        "Jaké je stravné, když jsem na cestě 14 dní?",  # another unit
        "Jaké je stravné, když jsem na cestě 3 hodiny?",  # below every range
        "Jaké je stravné, když jsem na cestě 14?",  # no unit
    ],
)
def test_a_number_no_range_of_its_unit_holds_is_required_and_missing(question: str) -> None:
    a = assess(ALLOWANCE, "cs", _needs(question), 2, True)
    assert not a.answers and a.reason in ("required", "absent"), a


@pytest.mark.parametrize(
    "question",
    [
        "Smí do vířivky dítě, kterému je 14 let?",
        "Může jít čtrnáctiletý syn do vířivky?",
        "Může jít osmiletý syn do vířivky?",
    ],
)
def test_a_question_whether_is_answered_by_the_limit_on_either_side(question: str) -> None:
    # "do 12 let" says a fourteen-year-old may, as it says an eight-year-old may not
    a = assess("Do vířivky nesmějí děti do 12 let.", "cs", _needs(question), 2, True)
    assert a.answers, a.as_dict()


def test_a_question_for_a_row_needs_the_row_that_holds_its_number() -> None:
    # which price: the row of children up to 15 is not the price of a sixteen-year-old
    a = assess(
        "Vstupné je 80 Kč pro děti od 6 do 15 let.",
        "cs",
        _needs("Kolik zaplatí za vstup dítě, kterému je 16 let?"),
        2,
        True,
    )
    assert not a.answers and a.reason == "required", a.as_dict()


def test_a_text_of_nothing_but_bounds_holds_a_bounded_number_of_keys() -> None:
    units = ["dní", "týdnů", "měsíců", "let", "minut", "kusů", "lidí", "metrů", "korun", "kilo"]
    text = ", ".join(f"více než {n} {u}" for n in range(0, 500, 7) for u in units)
    assert len(range_keys(text, "cs")) == MAX_KEYS
