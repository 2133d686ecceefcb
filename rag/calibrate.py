"""Calibration: sweep the relevance filter's knobs over cached retrievals and pick a setting.

Every question is retrieved once (``rag.evaluate.retrieve_all``); a parameter set only re-judges.
The word-side knobs (``rare_df``, ``rare_min_chunks``, ``coverage_mode``, ``prefix_credit``)
decide each candidate's coverage and support, which come from ``rag.relevance.judge`` itself, once
per distinct combination. The thresholds then only compare numbers, so they are swept with arrays:
for fixed other knobs a candidate passes from a distance threshold ``T`` on (``-inf`` when its
words or its supported vector admit it anyway, its distance when it is within the margin, ``inf``
otherwise), and an answerable case is recalled for every ``vector_max_distance`` in
``[T_gold, U)``, where ``U`` is the fifth smallest ``T`` ranked before the gold candidate (the
answer keeps ``MAX_SOURCES`` = 5 sources). The chosen setting is scored again through the engine
(``rag.evaluate.score``) and the two must agree; a test holds them to it.

Selection: the highest answer recall whose false-answer rate is at most the ceiling. Ties go to
the simpler, more conservative setting, in this order: fewer false answers, lower
``vector_max_distance``, lower ``support_max_distance`` (0, the rule off, first), smaller
``vector_margin``, higher ``min_coverage``, higher ``support_min_coverage``, lower ``rare_df``,
lower ``rare_min_chunks``, ``count`` before ``idf``, lower ``prefix_credit``.

Held-out figures: deterministic k-fold cross-validation, a case's fold being SHA-1 of its id
modulo k. For each fold the selection runs on the other folds and is scored on that one; the
pooled held-out counts estimate how the chosen setting does on questions it was not fitted to.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.answer import MAX_SOURCES
from rag.errors import ConfigError, InputError
from rag.evaluate import Case, Figures
from rag.relevance import FilterParams, judge
from rag.retrieve import Retrieval

DISTANCE_STEP = 0.0025
MAX_DISTANCES = 400
FOLDS = 5
# The tie-break order after false answers (1: lower wins, -1: higher wins).
KNOBS: tuple[tuple[str, int], ...] = (
    ("vector_max_distance", 1), ("support_max_distance", 1), ("vector_margin", 1),
    ("min_coverage", -1), ("support_min_coverage", -1), ("rare_df", 1), ("rare_min_chunks", 1),
    ("coverage_mode", 1), ("prefix_credit", 1),
)
MODES = ("count", "idf")   # simpler first
SUPPORT_QUANTILES = (20, 35, 50, 65, 80)


@dataclass(frozen=True)
class Grid:
    """The values swept for each knob. No vector distances: fine steps over the data's range;
    no support distances: 0 (the rule off) and the best candidates' distance quantiles."""

    vector_max_distance: tuple[float, ...] = ()
    vector_margin: tuple[float, ...] = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 1.0)
    min_coverage: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    rare_df: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05, 0.1)
    rare_min_chunks: tuple[int, ...] = (1, 3, 5)
    coverage_mode: tuple[str, ...] = MODES
    prefix_credit: tuple[float, ...] = (0.0, 0.5, 1.0)
    support_max_distance: tuple[float, ...] = ()
    support_min_coverage: tuple[float, ...] = (0.3, 0.45, 0.6, 0.75, 0.9)


def fold_of(case_id: str, folds: int = FOLDS) -> int:
    """A case's cross-validation fold: stable across runs, machines and set orderings."""
    return int(hashlib.sha1(case_id.encode("utf-8")).hexdigest(), 16) % folds


def _best_distances(retrievals: Sequence[Retrieval]) -> list[float]:
    return [min(ds) for r in retrievals
            if (ds := [c.distance for c in r.candidates if c.distance is not None])]


def distance_axis(retrievals: Sequence[Retrieval], step: float = DISTANCE_STEP) -> tuple[float, ...]:
    """Distances in fine steps, from just below the closest best candidate (the vector rule off)
    to the farthest best candidate."""
    best = _best_distances(retrievals)
    if not best:
        return (-1.0,)
    lo = math.ceil(min(best) / step) - 1   # the largest step strictly below every best
    hi = math.ceil(max(best) / step)
    n = hi - lo + 1
    stride = max(1, math.ceil(n / MAX_DISTANCES))
    return tuple(round((lo + i) * step, 6) for i in range(0, n, stride))


def support_axis(retrievals: Sequence[Retrieval], step: float = DISTANCE_STEP) -> tuple[float, ...]:
    """0 (the supported-vector rule off) and quantiles of the best candidates' distances."""
    best = _best_distances(retrievals)
    if not best:
        return (0.0,)
    qs = np.percentile(np.asarray(best), SUPPORT_QUANTILES)
    return (0.0, *sorted({round(math.ceil(q / step) * step, 6) for q in qs}))


@dataclass
class Sweep:
    """Counts per setting and fold. A setting is a block (every knob but the vector distance)
    and a distance; blocks that judge alike share one result (arrays of shape (distances, folds))."""

    blocks: dict[str, np.ndarray]      # knob -> value per block (coverage_mode: index in MODES)
    result: np.ndarray                 # block -> index into the results
    distances: np.ndarray
    recalled: list[np.ndarray]
    refused: list[np.ndarray]
    false_answers: list[np.ndarray]
    answerable: np.ndarray             # per fold
    no_answer: np.ndarray              # per fold

    def __len__(self) -> int:
        return len(self.result) * len(self.distances)

    def params(self, i: int) -> FilterParams:
        block, d = divmod(i, len(self.distances))
        v: dict[str, Any] = {k: self.blocks[k][block].item() for k, _ in KNOBS if k in self.blocks}
        v["vector_max_distance"] = self.distances[d].item()
        v["coverage_mode"] = MODES[int(v["coverage_mode"])]
        v["rare_min_chunks"] = int(v["rare_min_chunks"])
        return FilterParams(**v)

    def _folds(self, folds: Sequence[int] | None) -> list[int]:
        return list(range(len(self.answerable))) if folds is None else list(folds)

    def figures(self, i: int, folds: Sequence[int] | None = None) -> Figures:
        f = self._folds(folds)
        block, d = divmod(i, len(self.distances))
        r = int(self.result[block])
        return Figures(int(self.answerable[f].sum()), int(self.no_answer[f].sum()),
                       int(self.recalled[r][d, f].sum()), int(self.refused[r][d, f].sum()),
                       int(self.false_answers[r][d, f].sum()))

    def totals(self, folds: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Recalled and false answers of every setting on ``folds``, flat in setting order."""
        f = self._folds(folds)
        rec = np.stack([x[:, f].sum(axis=1) for x in self.recalled])[self.result].ravel()
        false = np.stack([x[:, f].sum(axis=1) for x in self.false_answers])[self.result].ravel()
        return rec, false

    def best(self, idx: np.ndarray) -> int:
        """The simplest, most conservative of the settings ``idx`` (equal on the figures)."""
        block, d = np.divmod(idx, len(self.distances))
        keys = []
        for k, sign in reversed(KNOBS):
            values = self.distances[d] if k == "vector_max_distance" else self.blocks[k][block]
            keys.append(sign * values)
        return int(idx[np.lexsort(keys)[0]])


@dataclass
class _CaseArrays:
    dist: np.ndarray      # (Q, K) nan where no distance
    margin: np.ndarray
    answerable: np.ndarray
    fold: np.ndarray
    gold_rows: np.ndarray  # answerable-row and column of every gold candidate, row-major
    gold_cols: np.ndarray


def _arrays(cases: Sequence[Case], retrievals: Sequence[Retrieval], folds: int) -> _CaseArrays:
    q, k = len(cases), max([len(r.candidates) for r in retrievals] + [1])
    dist, margin = np.full((q, k), np.nan), np.full((q, k), np.nan)
    gold = np.zeros((q, k), dtype=bool)
    probe = FilterParams(0.0, 0.0, 0.0, 0, 1.0)
    for i, (case, r) in enumerate(zip(cases, retrievals, strict=True)):
        for j, (c, judgement) in enumerate(zip(r.candidates, judge(r, probe), strict=True)):
            if judgement.distance is not None and judgement.margin is not None:
                dist[i, j], margin[i, j] = judgement.distance, judgement.margin
            gold[i, j] = c.source_id in case.expect
    answerable = np.array([c.answerable for c in cases], dtype=bool)
    rows, cols = np.nonzero(gold[answerable])
    return _CaseArrays(dist, margin, answerable,
                       np.array([fold_of(c.id, folds) for c in cases], dtype=int), rows, cols)


def _judged(retrievals: Sequence[Retrieval], k: int, params: FilterParams) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and support of every candidate under ``params`` (-1 where no candidate)."""
    cov, sup = np.full((len(retrievals), k), -1.0), np.full((len(retrievals), k), -1.0)
    for i, r in enumerate(retrievals):
        for j, judgement in enumerate(judge(r, params)):
            cov[i, j], sup[i, j] = judgement.coverage, judgement.support
    return cov, sup


def _fold_counts(hit: np.ndarray, folds: np.ndarray, n_folds: int) -> np.ndarray:
    """(cases, D) booleans summed per fold -> (D, folds)."""
    onehot = np.eye(n_folds, dtype=np.int32)[folds]
    return hit.astype(np.int32).T @ onehot


def _threshold_counts(
    t: np.ndarray, a: _CaseArrays, dists: np.ndarray, n_folds: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """recalled, refused, false answers per (distance, fold) for pass thresholds ``t``."""
    passes_any = t.min(axis=1)[:, None] <= dists[None, :]
    ans, na = a.answerable, ~a.answerable
    false = _fold_counts(passes_any[na], a.fold[na], n_folds)
    refused = _fold_counts(~passes_any[ans], a.fold[ans], n_folds)
    ta = t[ans]
    recalled_case = np.zeros((len(ta), len(dists)), dtype=bool)
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
        recalled_case[rows[starts]] = np.logical_or.reduceat(inside, starts, axis=0)
    recalled = _fold_counts(recalled_case, a.fold[ans], n_folds)
    return recalled, refused, false


def sweep(
    cases: Sequence[Case], retrievals: Sequence[Retrieval], grid: Grid | None = None,
    *, folds: int = FOLDS,
) -> Sweep:
    """Count every setting's outcomes per fold without querying the database again."""
    grid = grid or Grid()
    if not cases:
        raise InputError("nothing to calibrate: the set has no cases")
    a = _arrays(cases, retrievals, folds)
    dists = np.array(grid.vector_max_distance or distance_axis(retrievals), dtype=float)
    supports = grid.support_max_distance or support_axis(retrievals)
    chunk_counts = sorted({max(r.chunk_count, 1) for r in retrievals})
    judged: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
    results: dict[tuple[Any, ...], int] = {}
    counts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rows: list[tuple[float, ...]] = []
    names = ("vector_margin", "min_coverage", "rare_df", "rare_min_chunks", "coverage_mode",
             "prefix_credit", "support_max_distance", "support_min_coverage")
    for rdf, rmc, mode, credit in itertools.product(
        grid.rare_df, grid.rare_min_chunks, grid.coverage_mode, grid.prefix_credit
    ):
        if mode not in MODES:
            raise ConfigError(f"Unsupported coverage_mode: {mode} (choose from count, idf)")
        # Settings with the same rare limit for every owner judge words identically.
        key = (tuple(max(rdf * n, rmc) for n in chunk_counts), mode, credit)
        if key not in judged:
            judged[key] = _judged(retrievals, a.dist.shape[1],
                                  FilterParams(0.0, 0.0, rdf, rmc, 0.0, mode, credit))
        cov, sup = judged[key]
        for margin, cov_min, sd, sc in itertools.product(
            grid.vector_margin, grid.min_coverage, supports, grid.support_min_coverage
        ):
            if sd <= 0 and sc != grid.support_min_coverage[0]:
                continue   # the rule is off: its coverage does not matter
            ck = (key, margin, cov_min, sd, sc)
            if ck not in results:
                near = a.margin <= margin                          # nan margin: never
                fixed = (cov > cov_min) | (near & (a.dist <= sd) & (sup >= sc))
                t = np.where(fixed, -np.inf, np.where(near, a.dist, np.inf))
                results[ck] = len(counts)
                counts.append(_threshold_counts(t, a, dists, folds))
            rows.append((margin, cov_min, rdf, rmc, MODES.index(mode), credit, sd, sc, results[ck]))
    table = np.array(rows, dtype=float)
    blocks = {name: table[:, i] for i, name in enumerate(names)}
    return Sweep(blocks, table[:, -1].astype(int), dists, [c[0] for c in counts],
                 [c[1] for c in counts], [c[2] for c in counts],
                 np.bincount(a.fold[a.answerable], minlength=folds),
                 np.bincount(a.fold[~a.answerable], minlength=folds))


def select(s: Sweep, ceiling: float, folds: Sequence[int] | None = None) -> int | None:
    """The best setting on ``folds`` (default all) whose false-answer rate is <= ``ceiling``."""
    f = s._folds(folds)
    recalled, false = s.totals(f)
    allowed = math.floor(ceiling * int(s.no_answer[f].sum()) + 1e-9)
    feasible = false <= allowed
    if not feasible.any():
        return None
    top = recalled[feasible].max()
    tied = np.flatnonzero(feasible & (recalled == top))
    fewest = false[tied].min()
    return s.best(tied[false[tied] == fewest])


def least_false(s: Sweep, folds: Sequence[int] | None = None) -> int:
    """The setting with the fewest false answers on ``folds`` (then the most recall)."""
    recalled, false = s.totals(folds)
    low = np.flatnonzero(false == false.min())
    return s.best(low[recalled[low] == recalled[low].max()])


def frontier(s: Sweep) -> list[int]:
    """Settings no other beats on both rates, fewest false answers first (one per step)."""
    recalled, false = s.totals()
    best = np.full(int(s.no_answer.sum()) + 1, -1)
    np.maximum.at(best, false, recalled)
    out, top = [], -1
    for f, r in enumerate(best):
        if r > top:
            out.append(s.best(np.flatnonzero((false == f) & (recalled == r))))
            top = int(r)
    return out


@dataclass
class HeldOut:
    """Cross-validated figures of the selection rule."""

    folds: list[dict[str, Any]] = field(default_factory=list)
    pooled: Figures = field(default_factory=Figures)

    def as_dict(self) -> dict[str, Any]:
        return {"method": f"{len(self.folds)}-fold cross-validation, fold = sha1(case id) mod "
                          f"{len(self.folds)}", "pooled": self.pooled.as_dict(),
                "folds": self.folds}


def held_out(s: Sweep, ceiling: float) -> HeldOut:
    """Select on all folds but one, score on that one; a fold with no feasible setting on its
    training part falls back to the setting with the fewest false answers there."""
    n = len(s.answerable)
    result = HeldOut()
    pooled = result.pooled
    for k in range(n):
        train = [f for f in range(n) if f != k]
        i = select(s, ceiling, train)
        feasible = i is not None
        if i is None:
            i = least_false(s, train)
        test = s.figures(i, [k])
        for name in ("answerable", "no_answer", "recalled", "refused", "false_answers"):
            setattr(pooled, name, getattr(pooled, name) + getattr(test, name))
        result.folds.append({"fold": k, "feasible": feasible, "params": s.params(i).as_dict(),
                             "train": s.figures(i, train).as_dict(), "test": test.as_dict()})
    return result


def distance_curve(s: Sweep, i: int) -> list[int]:
    """The settings that differ from ``i`` only in vector_max_distance, by distance."""
    block = i // len(s.distances)
    return [block * len(s.distances) + d for d in np.argsort(s.distances, kind="stable")]


def plot(s: Sweep, chosen: int, ceiling: float, path: Path, title: str) -> None:
    """Draw false answers vs answer recall: the frontier, the distance curve, the chosen point."""
    try:
        # matplotlib is optional (the plot extra) and slow to import; only --plot pays for it.
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ConfigError("--plot needs matplotlib: pip install 'rag[plot]'") from e

    def xy(idx: list[int]) -> tuple[list[float], list[float]]:
        figs = [s.figures(i) for i in idx]
        return [f.false_answer_rate or 0.0 for f in figs], [f.answer_recall or 0.0 for f in figs]

    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    fx, fy = xy(frontier(s))
    ax.step(fx, fy, where="post", color="tab:blue", label="best recall at each false-answer rate")
    cx, cy = xy(distance_curve(s, chosen))
    ax.plot(cx, cy, ".", color="tab:gray", alpha=0.6, ms=4,
            label="chosen setting, vector_max_distance varied")
    x, y = xy([chosen])
    p = s.params(chosen)
    ax.plot(x, y, "o", color="tab:red", ms=9,
            label=f"chosen: distance {p.vector_max_distance:g}, margin {p.vector_margin:g}, "
                  f"coverage {p.min_coverage:g}")
    ax.axvline(ceiling, color="tab:red", ls="--", lw=1, label=f"ceiling {ceiling:.0%}")
    ax.set_xlabel("false-answer rate (not_found cases given sources)")
    ax.set_ylabel("answer recall (gold source among the answer's sources)")
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.grid(alpha=0.3)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)
