"""The parts a calibration sweep is built from, and the table it fills.

The grid of knob values and its distance axes, each case's cross-validation fold, the per-case
arrays and the pass-threshold arithmetic the sweep counts with, and the :class:`Sweep` table of
counts. :mod:`rag.eval.calibrate` runs the sweep and selects a setting from it; its docstring gives the
method.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rag.answer.engine import MAX_SOURCES
from rag.eval.metrics import Figures
from rag.eval.sets import Case
from rag.search.pull import PULL_OFF
from rag.search.relevance import FilterParams, agreed, judge, missing_focus
from rag.search.retrieve import Retrieval

DISTANCE_STEP = 0.0025
MAX_DISTANCES = 400
FOLDS = 5
# The tie-break order after false answers (1: lower wins, -1: higher wins).
# Sweep.pick relies on the vector distance coming first, lower winning.
KNOBS: tuple[tuple[str, int], ...] = (
    ("vector_max_distance", 1),
    ("support_max_distance", 1),
    ("topic_max_distance", 1),
    ("vector_margin", 1),
    ("min_coverage", -1),
    ("support_min_coverage", -1),
    ("topic_min_known", -1),
    ("rare_df", 1),
    ("rare_min_chunks", 1),
    ("coverage_mode", 1),
    ("prefix_credit", 1),
    ("paraphrase_max_distance", 1),
    ("focus_words", -1),
    ("answer_window", 1),
    ("require_answer_type", -1),
    ("document_rule", 1),
)
MODES = ("count", "idf")  # simpler first
NEAR_QUANTILES = (30, 55, 80)
PARAPHRASE_QUANTILES = (10, 30)  # "a very close vector": only the closest best candidates
Counts = tuple[np.ndarray, np.ndarray, np.ndarray]  # recalled, refused, false: (distances, folds)


@dataclass(frozen=True)
class Grid:
    """The values swept for each knob. No vector distances: fine steps over the data's range;
    no support or topic distances: 0 (the rule off) and quantiles of the best candidates'
    distances."""

    vector_max_distance: tuple[float, ...] = ()
    # The answerability knobs multiply the sweep; the old knobs' grids are coarser than before
    # it joined (the chosen values of past calibrations are all kept), so that its size stays
    # within a few times the old one's.
    vector_margin: tuple[float, ...] = (0.0, 0.01, 0.05, 1.0)
    min_coverage: tuple[float, ...] = (0.3, 0.5, 0.7, 1.0)
    rare_df: tuple[float, ...] = (0.005, 0.02, 0.05, 0.1)
    rare_min_chunks: tuple[int, ...] = (1, 3, 5)
    coverage_mode: tuple[str, ...] = MODES
    prefix_credit: tuple[float, ...] = (0.0, 0.5, 1.0)
    support_max_distance: tuple[float, ...] = ()
    support_min_coverage: tuple[float, ...] = (0.5, 0.75)
    topic_max_distance: tuple[float, ...] = ()
    topic_min_known: tuple[float, ...] = (0.5, 0.75, 1.0)
    # A setting (RAG_ANSWER_WINDOW); both calibrations chose 2 when (1, 2) was swept, and each
    # value doubles the sweep: pass Grid(answer_window=(1, 2)) to sweep it again.
    answer_window: tuple[int, ...] = (2,)
    focus_words: tuple[int, ...] = (1, 2)
    paraphrase_max_distance: tuple[float, ...] = ()  # 0 and the closer quantiles (near_axis)
    require_answer_type: tuple[bool, ...] = (True,)
    # off, and on: another chunk of a candidate's document admitted by a rule stands for its own
    document_rule: tuple[bool, ...] = (False, True)
    # one value per sweep (rag.eval.relation_fit sweeps an other-language relation with each)
    anchor_support: bool = False
    anchor_min_share: float = 1.0
    # one value per sweep: the missing focus words' least pull for the paraphrase rule
    # (rag.search.pull); rag calibrate --paraphrase-pull sets it
    paraphrase_min_pull: float = PULL_OFF
    # one value per sweep: rarity and idf count an owner as at least this many chunks
    # (FilterParams.stats_min_chunks; rag calibrate keeps the profile in force's)
    stats_min_chunks: int = 1
    # one value per sweep: how far off the chunk both lists put first passes where its window
    # answers (FilterParams.agreement_max_distance; rag calibrate keeps the profile in force's)
    agreement_max_distance: float = 0.0


def fold_of(case_id: str, folds: int = FOLDS) -> int:
    """A case's cross-validation fold: stable across runs, machines and set orderings."""
    return int(hashlib.sha1(case_id.encode("utf-8")).hexdigest(), 16) % folds


def _best_distances(retrievals: Sequence[Retrieval]) -> list[float]:
    return [
        min(ds)
        for r in retrievals
        if (ds := [c.distance for c in r.candidates if c.distance is not None])
    ]


def distance_axis(
    retrievals: Sequence[Retrieval], step: float = DISTANCE_STEP
) -> tuple[float, ...]:
    """Distances in fine steps, from just below the closest best candidate (the vector rule off)
    to the farthest best candidate."""
    best = _best_distances(retrievals)
    if not best:
        return (-1.0,)
    lo = math.ceil(min(best) / step) - 1  # the largest step strictly below every best
    hi = math.ceil(max(best) / step)
    n = hi - lo + 1
    stride = max(1, math.ceil(n / MAX_DISTANCES))
    return tuple(round((lo + i) * step, 6) for i in range(0, n, stride))


def near_axis(
    retrievals: Sequence[Retrieval],
    step: float = DISTANCE_STEP,
    quantiles: tuple[int, ...] = NEAR_QUANTILES,
) -> tuple[float, ...]:
    """0 (the rule off) and quantiles of the best candidates' distances, on the step grid."""
    best = _best_distances(retrievals)
    if not best:
        return (0.0,)
    qs = np.percentile(np.asarray(best), quantiles)
    return (0.0, *sorted({round(math.ceil(q / step) * step, 6) for q in qs}))


@dataclass
class Sweep:
    """Recalled and false answers per setting and fold. A setting is a block (every knob but the
    vector distance) and a distance; blocks that judge alike share one result."""

    blocks: dict[str, np.ndarray]  # knob -> value per block (coverage_mode: index in MODES)
    result: np.ndarray  # block -> index into the results
    distances: np.ndarray
    recalled: np.ndarray  # (results, distances, folds)
    false_answers: np.ndarray
    answerable: np.ndarray  # per fold
    no_answer: np.ndarray  # per fold
    # every count of one block, at every distance (refusals are not kept for all settings)
    recount: Callable[[int], Counts] | None = None
    fixed: dict[str, Any] = field(default_factory=dict)  # knobs every setting shares

    def __len__(self) -> int:
        return len(self.result) * len(self.distances)

    def params(self, i: int) -> FilterParams:
        block, d = divmod(i, len(self.distances))
        v: dict[str, Any] = {k: self.blocks[k][block].item() for k, _ in KNOBS if k in self.blocks}
        v["vector_max_distance"] = self.distances[d].item()
        v["coverage_mode"] = MODES[int(v["coverage_mode"])]
        v["rare_min_chunks"] = int(v["rare_min_chunks"])
        for k in ("answer_window", "focus_words"):
            if k in v:
                v[k] = int(v[k])
        for k in ("require_answer_type", "document_rule"):
            if k in v:
                v[k] = bool(v[k])
        return FilterParams(**{**v, **self.fixed})

    def _folds(self, folds: Sequence[int] | None) -> list[int]:
        return list(range(len(self.answerable))) if folds is None else list(folds)

    def figures(self, i: int, folds: Sequence[int] | None = None) -> Figures:
        f = self._folds(folds)
        block, d = divmod(i, len(self.distances))
        if self.recount is not None:
            recalled, refused, false = (x[d, f].sum() for x in self.recount(block))
        else:
            r = int(self.result[block])
            recalled, refused, false = (
                self.recalled[r, d, f].sum(),
                0,
                self.false_answers[r, d, f].sum(),
            )
        return Figures(
            int(self.answerable[f].sum()),
            int(self.no_answer[f].sum()),
            int(recalled),
            int(refused),
            int(false),
        )

    def totals(self, folds: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Recalled and false answers of every setting on ``folds``, flat in setting order."""
        f = self._folds(folds)
        rec = self.recalled[:, :, f].sum(axis=2, dtype=np.int32)[self.result].ravel()
        false = self.false_answers[:, :, f].sum(axis=2, dtype=np.int32)[self.result].ravel()
        return rec, false

    def result_totals(self, folds: Sequence[int] | None) -> tuple[np.ndarray, np.ndarray]:
        """Recalled and false answers per result and distance on ``folds``."""
        f = self._folds(folds)
        return (
            self.recalled[:, :, f].sum(axis=2, dtype=np.int32),
            self.false_answers[:, :, f].sum(axis=2, dtype=np.int32),
        )

    def pick(self, chosen: np.ndarray) -> int:
        """The simplest setting among those whose (result, distance) is marked in ``chosen``.

        The first tie-break is the lower vector distance, so only the lowest chosen distance's
        settings reach :meth:`best`: on a small set most settings tie, and ranking all of them
        (blocks x distances x knobs) would take gigabytes for the same answer.
        """
        columns = np.flatnonzero(chosen.any(axis=0))
        d = int(columns[np.argmin(self.distances[columns])])
        blocks = np.flatnonzero(chosen[self.result, d])
        return self.best(blocks * len(self.distances) + d)

    def best(self, idx: np.ndarray) -> int:
        """The simplest, most conservative of the settings ``idx`` (equal on the figures)."""
        block, d = np.divmod(idx, len(self.distances))
        keys = []
        for k, sign in reversed(KNOBS):
            values = self.distances[d] if k == "vector_max_distance" else self.blocks[k][block]
            keys.append(sign * values)
        return int(idx[np.lexsort(keys)[0]])


@dataclass
class CaseArrays:
    """The cases' candidates as arrays, a row per case and a column per candidate."""

    dist: np.ndarray  # (Q, K) nan where no distance
    margin: np.ndarray
    known: np.ndarray  # (Q,) share of the question's words the corpus knows
    answerable: np.ndarray
    fold: np.ndarray
    gold_rows: np.ndarray  # answerable-row and column of every gold candidate, row-major
    gold_cols: np.ndarray
    # the candidates grouped by (case, document): flat indices in group order, group starts
    doc_order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    doc_starts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # (Q, K) first in both lists (rag.search.relevance.agreed); empty: no candidate is
    agreed: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def document_min(self, t: np.ndarray) -> np.ndarray:
        """Per candidate, the least of ``t`` over the candidates of its document in its case
        (``inf`` where no candidate)."""
        out = np.full(t.size, np.inf)
        if len(self.doc_order):
            mins = np.minimum.reduceat(t.ravel()[self.doc_order], self.doc_starts)
            sizes = np.diff(np.r_[self.doc_starts, len(self.doc_order)])
            out[self.doc_order] = np.repeat(mins, sizes)
        return out.reshape(t.shape)


def case_arrays(cases: Sequence[Case], retrievals: Sequence[Retrieval], folds: int) -> CaseArrays:
    """Each case's candidate distances, margins and gold marks, as arrays the sweep counts on."""
    q, k = len(cases), max([len(r.candidates) for r in retrievals] + [1])
    dist, margin = np.full((q, k), np.nan), np.full((q, k), np.nan)
    known = np.zeros(q)
    gold = np.zeros((q, k), dtype=bool)
    doc = np.full((q, k), -1, dtype=np.int64)
    first = np.zeros((q, k), dtype=bool)
    probe = FilterParams(0.0, 0.0, 0.0, 0, 1.0)
    for i, (case, r) in enumerate(zip(cases, retrievals, strict=True)):
        for j, (c, judgement) in enumerate(zip(r.candidates, judge(r, probe), strict=True)):
            if judgement.distance is not None and judgement.margin is not None:
                dist[i, j], margin[i, j] = judgement.distance, judgement.margin
            gold[i, j] = c.source_id in case.expect
            doc[i, j] = c.document_id
            first[i, j] = agreed(c)
            known[i] = judgement.known
    answerable = np.array([c.answerable for c in cases], dtype=bool)
    rows, cols = np.nonzero(gold[answerable])
    present = np.flatnonzero(doc.ravel() >= 0)
    row_of = present // k
    order = present[np.lexsort((doc.ravel()[present], row_of))]
    keyed = np.stack([order // k, doc.ravel()[order]], axis=1)
    starts = (
        np.flatnonzero(np.r_[True, (keyed[1:] != keyed[:-1]).any(axis=1)]) if len(order) else order
    )
    return CaseArrays(
        dist,
        margin,
        known,
        answerable,
        np.array([fold_of(c.id, folds) for c in cases], dtype=int),
        rows,
        cols,
        order,
        starts,
        first,
    )


def coverage_and_support(
    retrievals: Sequence[Retrieval], k: int, params: FilterParams
) -> tuple[np.ndarray, ...]:
    """Coverage and support of every candidate under ``params`` (-1 where no candidate), and
    whether its evidence window answers the question, or would as a paraphrase (a close vector
    standing in for missing focus words). Without the answerability stage every window answers.
    """
    shape = (len(retrievals), k)
    cov, sup = np.full(shape, -1.0), np.full(shape, -1.0)
    answers, paraphrase = np.ones(shape, dtype=bool), np.zeros(shape, dtype=bool)
    for i, r in enumerate(retrievals):
        asked: dict[tuple[str, ...], list[int]] = {}
        for j, judgement in enumerate(judge(r, params)):
            cov[i, j], sup[i, j] = judgement.coverage, judgement.support
            if judgement.answer is not None:
                answers[i, j] = judgement.answer.answers
                paraphrase[i, j] = judgement.answer.paraphrase
                if judgement.answer.paraphrase:
                    asked.setdefault(missing_focus(judgement.answer), []).append(j)
        if params.paraphrase_min_pull > PULL_OFF and r.pull is not None:
            # a close vector stands in for missing words only where they pull toward the passage
            for words, js in asked.items():
                pulls = r.pull([r.candidates[j].chunk_id for j in js], words) if words else {}
                for j in js:
                    p = pulls.get(r.candidates[j].chunk_id)
                    paraphrase[i, j] = p is None or p >= params.paraphrase_min_pull
    return cov, sup, answers, paraphrase


def fold_counts(hit: np.ndarray, folds: np.ndarray, n_folds: int) -> np.ndarray:
    """(cases, D) booleans summed per fold -> (D, folds)."""
    onehot = np.eye(n_folds, dtype=np.int32)[folds]
    return hit.astype(np.int32).T @ onehot


def outcomes(t: np.ndarray, a: CaseArrays, dists: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per case and distance, for pass thresholds ``t``: recalled and refused (answerable cases),
    answered (not_found cases)."""
    passes_any = t.min(axis=1)[:, None] <= dists[None, :]
    ta = t[a.answerable]
    recalled = np.zeros((len(ta), len(dists)), dtype=bool)
    rows, cols = a.gold_rows, a.gold_cols
    if len(rows):
        width = int(cols.max()) + 1
        if width > MAX_SOURCES:
            # the answer is full before a gold candidate once five earlier candidates pass
            earlier = np.where(np.arange(width)[None, :] < cols[:, None], ta[rows, :width], np.inf)
            u = np.partition(earlier, MAX_SOURCES - 1, axis=1)[:, MAX_SOURCES - 1]
        else:
            u = np.full(len(rows), np.inf)
        inside = (ta[rows, cols][:, None] <= dists) & (dists < u[:, None])
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        recalled[rows[starts]] = np.logical_or.reduceat(inside, starts, axis=0)
    return recalled, ~passes_any[a.answerable], passes_any[~a.answerable]


def with_topic(outcome: np.ndarray, qualifies: np.ndarray, column: np.ndarray) -> np.ndarray:
    """Cases whose words the corpus knows are judged at max(distance, topic distance)."""
    return np.where(qualifies[:, None], outcome[:, column], outcome)
