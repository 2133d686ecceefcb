"""Language-independent anchors: what a question shares with a passage in another language.

Across languages a question's content words meet none of a passage's keys, but its identifiers
("ZX-4411"), numbers and proper names are written alike, or alike once transliterated. Both
sides are compared unaccented (:func:`rag.language.keys.unaccent`: "Берлин" is "berlin"); a name also
matches by a form that differs only in its ending (inflection: "berline", "berlinom"), and by its
consonant skeleton, which absorbs the usual differences of transliteration ("Panthers" and
"Пэнтерс", "Schwarzenegger" and "Шварценеггер" both reduce to the same consonants).

A question's anchors are its identifiers, numbers and names (:func:`rag.language.answer_types.is_name`);
German capitalizes every noun, so there a capitalized word inside the question is a *soft*
anchor: held, it counts as one; missing, it does not count against the passage (a common noun
is not expected in a Russian paragraph). A passage holds the anchors of its best window of up
to ``window`` sentences (the answerability stage's sentences), which should also offer a token
of the question's expected answer type (:mod:`rag.language.answer_types`).

The relevance filter uses the share of anchors a window holds as the supported-vector rule's
evidence for a threshold set calibrated with ``anchor_support`` (:mod:`rag.search.relevance`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag.language.answer_types import (
    AnswerType,
    answer_token,
    is_identifier,
    is_name,
    is_number,
    numeral_compound,
)
from rag.language.question_keys import QueryKeys
from rag.search.answerability import Sentence, sentences

# A name's ending may differ by this many letters ("berlin" ~ "berlinom").
ENDING = 3
# Shorter skeletons say too little: "Maria" and "Mauer" share "mr"; a name and a word as long
# as it and an ending may differ by one more consonant.
MIN_SKELETON = 3
_NOT_DIGIT = re.compile(r"[^0-9]")
# Transliteration variants first (longest first), then letters that sound alike in one class.
_SPELLINGS = (
    ("dsch", "j"),
    ("dzh", "j"),
    ("tsch", "c"),
    ("sch", "s"),
    ("shch", "s"),
    ("kh", "h"),
    ("ch", "c"),
    ("sh", "s"),
    ("zh", "s"),
    ("ts", "s"),
    ("tz", "s"),
    ("ck", "k"),
    ("ph", "f"),
    ("th", "t"),
)
_CLASSES = str.maketrans(
    {
        **dict.fromkeys("aeiouyj'", ""),
        **dict.fromkeys("bp", "b"),
        **dict.fromkeys("fvw", "v"),
        **dict.fromkeys("gkqxhc", "k"),
        **dict.fromkeys("dt", "t"),
        **dict.fromkeys("sz", "s"),
    }
)


@lru_cache(maxsize=65536)
def skeleton(form: str) -> str:
    """A word's consonant classes, repeats collapsed ("panthers" and "penters": "bntrs")."""
    s = form
    for old, new in _SPELLINGS:
        s = s.replace(old, new)
    s = s.translate(_CLASSES)
    return "".join(ch for i, ch in enumerate(s) if ch.isalpha() and (i == 0 or s[i - 1] != ch))


@dataclass(frozen=True, slots=True)
class Anchor:
    surface: str
    kind: str  # "identifier" | "number" | "name" | "soft" (a German capitalized word)
    form: str  # unaccented; a number's digits only

    @property
    def strict(self) -> bool:
        return self.kind != "soft"


def question_anchors(query: QueryKeys) -> tuple[Anchor, ...]:
    """The question's identifiers, numbers and names, each once."""
    out: dict[str, Anchor] = {}
    for i, w in enumerate(query.all_words):
        compound = numeral_compound(w.surface)
        if is_identifier(w.surface):
            anchor = Anchor(w.surface, "identifier", w.form)
        elif compound is not None:  # "5-Zylinder": the number 5 ("70ern": the 70s)
            anchor = Anchor(w.surface, "number", compound.decade or compound.numbers[0])
        elif is_number(w.surface):
            anchor = Anchor(w.surface, "number", _NOT_DIGIT.sub("", w.surface))
        elif is_name(w.surface, i, query.lang):
            anchor = Anchor(w.surface, "name", w.form)
        elif query.lang == "de" and i > 0 and w.surface[:1].isupper() and len(w.form) > 2:
            anchor = Anchor(w.surface, "soft", w.form)
        else:
            continue
        if len(anchor.form) > 1 or anchor.kind == "number":  # "I" names nobody
            out.setdefault(anchor.form, anchor)
    return tuple(out.values())


def _word_matches(anchor: str, form: str) -> bool:
    if anchor == form:
        return True
    short, long = sorted((anchor, form), key=len)
    if len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= ENDING:
        return True
    if len(long) - len(short) > ENDING:
        return False
    a, f = skeleton(anchor), skeleton(form)
    if a == f:
        return len(a) >= MIN_SKELETON
    short, long = sorted((a, f), key=len)
    # one more consonant: an ending ("brln" ~ "brlnm"), from four on
    return len(short) > MIN_SKELETON and long.startswith(short) and len(long) - len(short) == 1


def held(anchor: Anchor, forms: frozenset[str], keys: frozenset[str]) -> bool:
    """Whether a sentence (its unaccented words and its keys) holds ``anchor``."""
    if anchor.kind == "number":
        return anchor.form in forms or f"l:{anchor.form}" in keys
    if anchor.kind == "identifier":
        return anchor.form in forms
    return any(_word_matches(anchor.form, f) for f in forms if not f[:1].isdigit())


@dataclass(frozen=True, slots=True)
class AnchorEvidence:
    """What a passage's best window holds of a question's anchors."""

    held: tuple[str, ...]  # the anchors held, as the question writes them
    strict: int  # the question's identifiers, numbers and names
    strict_held: int
    soft_held: int
    typed: bool  # the window offers a token of the expected answer type (or none is expected)

    @property
    def share(self) -> float:
        """Anchors held over the strict ones and the soft ones held; 0 without any."""
        total = self.strict + self.soft_held
        return (self.strict_held + self.soft_held) / total if total else 0.0

    def enough(self, min_share: float) -> bool:
        """The answer type offered and at least ``min_share`` of the anchors held (0: the type
        alone): across languages a name is often translated, not transliterated ("Суперкубок"
        for "Super Bowl"), so a set may require fewer than all of them."""
        if not self.typed:
            return False
        return min_share <= 0 or (bool(self.held) and self.share >= min_share)

    @property
    def complete(self) -> bool:
        """Every strict anchor held, at least one anchor in all, and the answer type offered."""
        return self.typed and self.strict_held == self.strict and bool(self.held)


def evidence(
    text: str,
    lang: str,
    anchors: tuple[Anchor, ...],
    window: int,
    kind: AnswerType | None,
    asked: frozenset[str],
    sents: tuple[Sentence, ...] | None = None,
) -> AnchorEvidence:
    """The best window of up to ``window`` sentences of a chunk (``sents``: its stored analysis,
    or None to compute it): most strict anchors, then most anchors, then the answer type
    offered."""
    strict = sum(a.strict for a in anchors)
    if sents is None:
        sents = sentences(text, lang)
    per = [frozenset(i for i, a in enumerate(anchors) if held(a, s.forms, s.keys)) for s in sents]
    best: tuple[tuple[int, int, int], frozenset[int], bool] | None = None
    for i in range(len(sents)):
        for j in range(i, min(i + max(window, 1), len(sents))):
            got = frozenset().union(*per[i : j + 1])
            typed = kind is None
            if kind is not None:
                classes: dict[str, tuple[str, ...]] = {}
                for s in sents[i : j + 1]:
                    for c, tokens in s.classes:
                        classes[c] = classes.get(c, ()) + tokens
                typed = answer_token(kind, classes, asked) is not None
            score = (sum(anchors[k].strict for k in got), len(got), int(typed))
            if best is None or score > best[0]:
                best = (score, got, typed)
    if best is None:
        return AnchorEvidence((), strict, 0, 0, kind is None)
    (strict_held, n, _), got, typed = best
    return AnchorEvidence(
        tuple(anchors[k].surface for k in sorted(got)), strict, strict_held, n - strict_held, typed
    )
