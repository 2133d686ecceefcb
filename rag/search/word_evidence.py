"""A question's words as the relevance filter weighs them, and what one candidate's keys earn.

The words, their keys and weights are the same for every candidate of a question; only the keys
a candidate (or its window) holds differ, and a question's candidates hold the same few patterns
of its words over and over. So the words' keys are indexed once per question (each lemma, stem,
prefix and family key -> the words it stands for, and how), a candidate's match is one pass over
the keys it holds, and what a pattern of matches earns (its evidence, coverage and support) is
computed once per question and pattern. Pure; no database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence, Set
from dataclasses import dataclass

from rag.language.names import NAMED_KEY

# A word matches by the best kind of key it shares with the candidate, in this order; a rank
# past the last means unmatched.
_KINDS = "lspf"
_MATCHED_BY = ("lemma", "stem", "prefix", "family")
_UNMATCHED = len(_KINDS)
_PREFIX, _FAMILY = 2, 3


def met_as_family(key: str) -> bool:
    """Whether a question word's key matches as a family key does: a family's root ("f:"), or
    the name a relational adjective is derived from (rag.language.names.relational_keys)."""
    return key[0] == "f" or key.startswith(NAMED_KEY)


def _rank(key: str) -> int:
    return _FAMILY if met_as_family(key) else _KINDS.find(key[0])


def idf(df: int, n: int) -> float:
    """BM25 idf; a word absent from the corpus (df 0) gets the largest value."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, slots=True)
class WordEvidence:
    word: str
    df: int
    rare: bool
    weight: float
    credit: float  # 1 lemma/stem match, prefix_credit prefix-only, 0 absent from candidate
    matched_by: str | None  # "lemma" | "stem" | "prefix" | "family" | None


@dataclass(frozen=True, slots=True)
class Word:
    """A question word the filter weighs: its keys (family keys included) and statistics."""

    surface: str
    keys: tuple[str, ...]
    df: int
    rare: bool
    weight: float
    # an interrogative's word ("vysoká" of "Jak vysoká je věž?"): evidence where a candidate
    # holds it ("věž, vysoká 24 metrů"), no lack where it does not ("záloha 30 %")
    optional: bool = False


class QuestionWords:
    """One question's words, indexed by key, with what each pattern of matches earns."""

    __slots__ = (
        "words",
        "n",
        "prefix_credit",
        "total",
        "idf_total",
        "_index",
        "_memo",
        "_families",
        "_unmatched",
        "_each",
    )

    def __init__(self, words: Sequence[Word], n: int, prefix_credit: float) -> None:
        self.words = tuple(words)
        self.n = n
        self.prefix_credit = prefix_credit
        self.total = sum(w.weight for w in self.words if not w.optional)
        self.idf_total = sum(idf(w.df, n) for w in self.words if not w.optional)
        self._index: dict[str, list[tuple[int, int]]] = {}
        for i, w in enumerate(self.words):
            for k in w.keys:
                rank = _rank(k)
                # A word the corpus does not contain cannot be "almost" in a chunk: its prefix
                # twin ("vydělává" ~ "výdejní") is a different word.
                if rank < 0 or (rank == _PREFIX and w.df == 0):
                    continue
                self._index.setdefault(k, []).append((i, rank))
        # a candidate's evidence depends only on each word's best rank: memoised per pattern
        self._memo: dict[tuple[int, ...], tuple[tuple[WordEvidence, ...], float, float]] = {}
        # each word's family keys, and the unmatched ones of each pattern
        self._families = tuple(tuple(k for k in w.keys if met_as_family(k)) for w in self.words)
        self._unmatched: dict[tuple[int, ...], frozenset[str]] = {}
        # each word's evidence at each rank, made once: a pattern's evidence is a choice of them
        self._each = tuple(
            tuple(
                WordEvidence(w.surface, w.df, w.rare, w.weight, self._credit(rank), _by(rank))
                for rank in range(_UNMATCHED + 1)
            )
            for w in self.words
        )

    def ranks(self, matched: Set[str]) -> tuple[int, ...]:
        """Each word's best kind of key among ``matched`` (``_UNMATCHED``: none)."""
        best = [_UNMATCHED] * len(self.words)
        index = self._index
        keys = matched if len(matched) <= len(index) else (k for k in index if k in matched)
        for k in keys:
            for i, rank in index.get(k, ()):
                if rank < best[i]:
                    best[i] = rank
        return tuple(best)

    def unmatched_families(self, ranks: tuple[int, ...]) -> frozenset[str]:
        """The family keys of the words ``ranks`` leaves unmatched: the only family keys that
        could still add to their evidence (a family is the weakest match)."""
        hit = self._unmatched.get(ranks)
        if hit is None:
            hit = self._unmatched[ranks] = frozenset(
                k
                for keys, rank in zip(self._families, ranks, strict=True)
                if rank == _UNMATCHED
                for k in keys
            )
        return hit

    def evidence(
        self, matched: Set[str] | None = None, ranks: tuple[int, ...] | None = None
    ) -> tuple[list[WordEvidence], float, float]:
        """Each word's evidence in a candidate holding the keys ``matched`` (or of its known
        ``ranks``), the rare words' weighted share (coverage) and every word's idf-weighted
        share (support)."""
        if ranks is None:
            ranks = self.ranks(matched or set())
        hit = self._memo.get(ranks)
        if hit is None:
            hit = self._memo[ranks] = self._weigh(ranks)
        evidence, coverage, support = hit
        return list(evidence), coverage, support

    def _weigh(self, ranks: tuple[int, ...]) -> tuple[tuple[WordEvidence, ...], float, float]:
        evidence = tuple(each[rank] for each, rank in zip(self._each, ranks, strict=True))
        covered = sum(e.weight * e.credit for e in evidence if e.rare)
        n, total, idf_total = self.n, self.total, self.idf_total
        for w, e in zip(self.words, evidence, strict=True):
            if w.optional and e.credit:
                # held: it counts as the question's other words do (coverage counts rare ones)
                total += w.weight if w.rare else 0.0
                idf_total += idf(w.df, n)
        coverage = covered / total if total > 0 else 0.0
        support = (
            sum(idf(e.df, n) * e.credit for e in evidence) / idf_total if idf_total > 0 else 0.0
        )
        return evidence, coverage, support

    def _credit(self, rank: int) -> float:
        if rank == _UNMATCHED:
            return 0.0
        # another word of its family ("žádost" for "zažádám") or its prefix: half a match
        return self.prefix_credit if rank in (_PREFIX, _FAMILY) else 1.0


def _by(rank: int) -> str | None:
    return None if rank == _UNMATCHED else _MATCHED_BY[rank]
