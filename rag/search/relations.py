"""Language relations: which calibrated threshold set judges a question over an owner's corpus.

A multilingual embedding model places a question further from every passage when the two are in
different languages: the distance an English question keeps from the Czech paragraph that answers
it is about what a Czech off-topic question keeps from the same corpus. One set of distance
thresholds cannot serve both, so a profile holds one set per relation:

* ``same``: the question's language holds at least :data:`SAME_SHARE` of the owner's documents
  (an owner without documents counts as same);
* ``other``: any other question;
* a pair ``<question>><corpus>`` (``de>ru``: a German question over a mostly Russian corpus), when
  a profile was calibrated on that pair; it wins over ``other`` for exactly those questions.

A profile without a set for the relation falls back to ``other`` (for a pair) and then to its
default parameters (``same``): an old single-set profile judges every question as before.

Across languages the absolute distance says less than how much closer the best passage is than
the question's other neighbours: a German question sits about as far from every Russian
paragraph as a Czech off-topic claim does, but from its own paragraph markedly closer than from
the rest. A set may therefore judge distances relative to the question's neighbourhood:
``distance + contrast * (2 - reference)``, the reference being the mean distance of the
question's vector candidates (the top ``candidates`` of the vector list, at no extra query), 2
the largest cosine distance: ordered as ``distance - contrast * reference``, and never negative,
so a threshold of 0 still turns a rule off. ``contrast`` 0 (the default, and the same-language
sets') judges raw distances. The shift is the same for every candidate of a question, so margins
between candidates do not change.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

SAME = "same"
MAX_DISTANCE = 2.0  # the largest cosine distance
OTHER = "other"
# A language this share of the owner's documents is written in is one of the corpus's own: an
# owner with 60 % Czech and 40 % English documents answers English questions from English text.
SAME_SHARE = 1 / 3

OwnerLangs = Sequence[tuple[str, int]]  # (language, documents), most documents first


def relation(lang: str, owner_langs: OwnerLangs) -> str:
    """``same`` or ``other``: how a question in ``lang`` relates to the owner's documents."""
    total = sum(n for _, n in owner_langs)
    if total <= 0:
        return SAME
    share = sum(n for code, n in owner_langs if code == lang) / total
    return SAME if share >= SAME_SHARE else OTHER


def pair(lang: str, owner_langs: OwnerLangs) -> str:
    """The pair key of a question in ``lang`` over the owner's main language (``en>cs``)."""
    main = owner_langs[0][0] if owner_langs else lang
    return f"{lang}>{main}"


def set_for(names: Collection[str], lang: str, owner_langs: OwnerLangs) -> str | None:
    """Which of the relation sets ``names`` applies to a question in ``lang``: the pair over
    ``other`` across languages, ``same`` within; None when none of them does."""
    if relation(lang, owner_langs) == SAME:
        return SAME if SAME in names else None
    key = pair(lang, owner_langs)
    return key if key in names else OTHER if OTHER in names else None


def is_relation_key(key: str) -> bool:
    """Whether ``key`` names a relation a profile may hold a set for."""
    if key in (SAME, OTHER):
        return True
    q, sep, c = key.partition(">")
    return bool(sep) and q.isalpha() and c.isalpha() and q != c and len(q) == len(c) == 2


def reference_distance(distances: Sequence[float]) -> float:
    """The mean distance of a question's vector candidates (0 without any)."""
    return sum(distances) / len(distances) if distances else 0.0
