"""Calibration: sweep the relevance filter's knobs over cached retrievals and pick a setting.

Every question is retrieved once (``rag.eval.sets.retrieve_all``); a parameter set only re-judges.
The word-side knobs (``rare_df``, ``rare_min_chunks``, ``coverage_mode``, ``prefix_credit``)
decide each candidate's coverage and support, which come from ``rag.search.relevance.judge`` itself, once
per distinct combination. The thresholds then only compare numbers, so they are swept with arrays.
For fixed other knobs a candidate passes from a distance threshold ``T`` on: ``-inf`` when its
words or its supported vector admit it anyway, its distance when it is within the margin, ``inf``
otherwise. An answerable case is then recalled for every ``vector_max_distance`` in
``[T_gold, U)``, ``U`` being the fifth smallest ``T`` ranked before the gold candidate (the answer
keeps ``MAX_SOURCES`` = 5 sources). The known-topic rule admits, for a question whose words the
corpus knows, every near vector up to ``topic_max_distance``: that question is judged at
``max(vector_max_distance, topic_max_distance)``, a column of the same arrays. Any setting's figures
can be recounted through the engine (``rag.eval.metrics.score``); a test holds the two to agreement.

Selection: the highest answer recall whose false-answer rate is at most the ceiling and whose
answer recall is at least the floor (no setting keeping both: none is chosen). Ties go to
the simpler, more conservative setting, in this order: fewer false answers, lower
``vector_max_distance``, lower ``support_max_distance`` and ``topic_max_distance`` (0, the rule
off, first), smaller ``vector_margin``, higher ``min_coverage``, ``support_min_coverage`` and
``topic_min_known``, lower ``rare_df``, lower ``rare_min_chunks``, ``count`` before ``idf``, lower
``prefix_credit``.

Held-out figures: deterministic k-fold cross-validation, a case's fold being SHA-1 of its id
modulo k. For each fold the selection runs on the other folds and is scored on that one; the
pooled held-out counts estimate how the chosen setting does on questions it was not fitted to.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import ConfigError, InputError
from rag.eval.metrics import Figures
from rag.eval.sets import Case
from rag.eval.sweep import (
    FOLDS,
    MODES,
    PARAPHRASE_QUANTILES,
    Counts,
    Grid,
    Sweep,
    case_arrays,
    coverage_and_support,
    distance_axis,
    fold_counts,
    near_axis,
    outcomes,
    with_topic,
)
from rag.search.pull import PULL_OFF
from rag.search.relevance import PARAPHRASE_MARGIN, FilterParams
from rag.search.retrieve import Retrieval


def sweep(
    cases: Sequence[Case],
    retrievals: Sequence[Retrieval],
    grid: Grid | None = None,
    *,
    folds: int = FOLDS,
    also: Sequence[FilterParams] = (),
) -> Sweep:
    """Count every setting's outcomes per fold without querying the database again.

    Args:
        also: settings to sweep besides the grid (the current profile: calibrating then never
            ends below it on the whole set), each with its own distance on the axis.
    """
    grid = grid or Grid()
    if not cases:
        raise InputError("nothing to calibrate: the set has no cases")
    a = case_arrays(cases, retrievals, folds)
    topics = [d for d in (grid.topic_max_distance or near_axis(retrievals)) if d > 0]
    # topic distances join the distance axis: a question is judged exactly at one of them
    dists = np.array(
        sorted(
            {
                *(grid.vector_max_distance or distance_axis(retrievals)),
                *topics,
                *(p.vector_max_distance for p in also),
                *(p.topic_max_distance for p in also if p.topic_max_distance > 0),
            }
        )
    )
    supports = grid.support_max_distance or near_axis(retrievals)
    paraphrases = grid.paraphrase_max_distance or near_axis(
        retrievals, quantiles=PARAPHRASE_QUANTILES
    )
    support_rules = [(0.0, grid.support_min_coverage[0])] + [
        (sd, sc) for sd in supports if sd > 0 for sc in grid.support_min_coverage
    ]
    topic_rules = [(0.0, grid.topic_min_known[0])] + [
        (td, tk) for td in topics for tk in grid.topic_min_known
    ]
    columns = {
        td: np.maximum(np.arange(len(dists)), int(np.searchsorted(dists, td)))
        for td in dists
        if td > 0
    }
    ans, na = a.answerable, ~a.answerable
    # the owner sizes rarity and idf count, as judge() counts them (stats_min_chunks floors them)
    chunk_counts = sorted({max(r.chunk_count, grid.stats_min_chunks, 1) for r in retrievals})
    far = grid.agreement_max_distance
    # A fold's count never exceeds its cases: most sets fit in one byte.
    biggest = max(np.bincount(a.fold, minlength=folds))
    dtype = np.uint8 if biggest < 2**8 else np.int16 if biggest < 2**15 else np.int32
    judged: dict[tuple[Any, ...], tuple[np.ndarray, ...]] = {}
    first: dict[tuple[Any, ...], int] = {}
    stored: list[tuple[np.ndarray, np.ndarray]] = []
    rows: list[tuple[float, ...]] = []
    names = (
        "vector_margin",
        "min_coverage",
        "rare_df",
        "rare_min_chunks",
        "coverage_mode",
        "prefix_credit",
        "support_max_distance",
        "support_min_coverage",
        "topic_max_distance",
        "topic_min_known",
        "paraphrase_max_distance",
        "answer_window",
        "focus_words",
        "require_answer_type",
        "document_rule",
    )

    def thresholds(
        key: tuple[Any, ...],
        margin: float,
        cov_min: float,
        sd: float,
        sc: float,
        pd: float,
        by_document: bool = False,
    ) -> np.ndarray:
        cov, sup, answers, paraphrase = judged[key]
        near = a.margin <= margin  # nan margin: never
        fixed = (cov > cov_min) | (near & (a.dist <= sd) & (sup >= sc))
        # the distance at which a rule admits the candidate, before its window is read
        ruled = np.where(fixed, -np.inf, np.where(near, a.dist, np.inf))
        # The answerability gate: a window that does not answer keeps a candidate out at any
        # distance, unless a close vector may stand in for its missing focus words.
        close = near & (a.margin <= PARAPHRASE_MARGIN)  # the paraphrase rule's own margin
        gate = answers | (paraphrase & close & (a.dist <= pd))
        t = np.where(gate, ruled, np.inf)
        # rule agreement (both lists' first, within the support distance): its window must
        # answer, no paraphrase stands in
        agree = (
            near & (a.dist <= sd) & a.agreed
            if sd > 0 and not grid.anchor_support and a.agreed.shape == a.dist.shape
            else np.zeros(a.dist.shape, dtype=bool)
        )
        # further off, up to agreement_max_distance, where its window answers
        if far > 0 and not grid.anchor_support and a.agreed.shape == a.dist.shape:
            agree = agree | (near & (a.dist <= far) & a.agreed & answers)
        t = np.minimum(t, np.where(agree & answers, -np.inf, np.inf))
        ruled = np.minimum(ruled, np.where(agree, -np.inf, np.inf))
        if by_document:
            # a window that answers passes once a rule admits a chunk of its document
            t = np.minimum(t, np.where(answers, a.document_min(ruled), np.inf))
        return t

    def word_key(
        rdf: float, rmc: int, mode: str, credit: float, answer: tuple[int, int, bool]
    ) -> tuple[Any, ...]:
        if mode not in MODES:
            raise ConfigError(f"Unsupported coverage_mode: {mode} (choose from count, idf)")
        # Settings with the same rare limit for every owner judge words identically.
        key = (tuple(max(rdf * n, rmc) for n in chunk_counts), mode, credit, answer)
        if key not in judged:
            window, focus, typed = answer
            judged[key] = coverage_and_support(
                retrievals,
                a.dist.shape[1],
                FilterParams(
                    0.0,
                    0.0,
                    rdf,
                    rmc,
                    0.0,
                    mode,
                    credit,
                    answer_window=window,
                    focus_words=focus,
                    require_answer_type=typed,
                    anchor_support=grid.anchor_support,
                    anchor_min_share=grid.anchor_min_share,
                    paraphrase_min_pull=grid.paraphrase_min_pull,
                    stats_min_chunks=grid.stats_min_chunks,
                ),
            )
        return key

    def store(ck: tuple[Any, ...], rules: Sequence[tuple[float, float]]) -> None:
        first[(ck, tuple(rules))] = len(stored)
        recalled, _, answered = outcomes(thresholds(*ck), a, dists)
        for td, tk in rules:
            rec, fa = recalled, answered
            if td > 0:
                rec = with_topic(recalled, a.known[ans] >= tk, columns[td])
                fa = with_topic(answered, a.known[na] >= tk, columns[td])
            stored.append(
                (
                    fold_counts(rec, a.fold[ans], folds).astype(dtype),
                    fold_counts(fa, a.fold[na], folds).astype(dtype),
                )
            )

    answers = list(
        itertools.product(grid.answer_window, grid.focus_words, grid.require_answer_type)
    )
    document_rules = grid.document_rule
    for rdf, rmc, mode, credit, answer in itertools.product(
        grid.rare_df, grid.rare_min_chunks, grid.coverage_mode, grid.prefix_credit, answers
    ):
        key = word_key(rdf, rmc, mode, credit, answer)
        # Without the stage, or with no focus word to miss, the paraphrase rule is moot.
        pds = (0.0,) if answer[0] == 0 else paraphrases
        # without the stage no window is read: the document rule would admit on words alone
        drs = (False,) if answer[0] == 0 else document_rules
        for margin, cov_min, (sd, sc), pd, dr in itertools.product(
            grid.vector_margin, grid.min_coverage, support_rules, pds, drs
        ):
            ck = (key, margin, cov_min, sd, sc, pd, dr)
            if (ck, tuple(topic_rules)) not in first:
                store(ck, topic_rules)
            for j, (td, tk) in enumerate(topic_rules):
                rows.append(
                    (
                        margin,
                        cov_min,
                        rdf,
                        rmc,
                        MODES.index(mode),
                        credit,
                        sd,
                        sc,
                        td,
                        tk,
                        pd,
                        *answer,
                        dr,
                        first[(ck, tuple(topic_rules))] + j,
                    )
                )
    # A setting in ``also`` joins as it is and with each document rule the grid sweeps: a
    # profile fitted before the rule existed meets it at its own thresholds.
    extra = [
        (p, dr)
        for p in also
        for dr in dict.fromkeys(
            (p.document_rule, *grid.document_rule) if p.answer_window > 0 else (False,)
        )
    ]
    for p, dr in extra:
        answer = (p.answer_window, p.focus_words, p.require_answer_type)
        key = word_key(p.rare_df, p.rare_min_chunks, p.coverage_mode, p.prefix_credit, answer)
        sd = p.support_max_distance if p.support_max_distance > 0 else 0.0
        pd = max(p.paraphrase_max_distance, 0.0)
        ck = (key, p.vector_margin, p.min_coverage, sd, p.support_min_coverage, pd, dr)
        rule = [(max(p.topic_max_distance, 0.0), p.topic_min_known)]
        store(ck, rule)
        rows.append(
            (
                p.vector_margin,
                p.min_coverage,
                p.rare_df,
                p.rare_min_chunks,
                MODES.index(p.coverage_mode),
                p.prefix_credit,
                sd,
                p.support_min_coverage,
                *rule[0],
                pd,
                *answer,
                dr,
                len(stored) - 1,
            )
        )
    table = np.array(rows, dtype=float)
    blocks = {name: table[:, i] for i, name in enumerate(names)}

    @lru_cache(maxsize=64)
    def recount(block: int) -> Counts:
        v = {k: blocks[k][block].item() for k in names}
        key = (
            tuple(max(v["rare_df"] * n, v["rare_min_chunks"]) for n in chunk_counts),
            MODES[int(v["coverage_mode"])],
            v["prefix_credit"],
            (int(v["answer_window"]), int(v["focus_words"]), bool(v["require_answer_type"])),
        )
        out = outcomes(
            thresholds(
                key,
                v["vector_margin"],
                v["min_coverage"],
                v["support_max_distance"],
                v["support_min_coverage"],
                v["paraphrase_max_distance"],
                bool(v["document_rule"]),
            ),
            a,
            dists,
        )
        if v["topic_max_distance"] > 0:
            col = columns[v["topic_max_distance"]]
            qualifies = a.known >= v["topic_min_known"]
            out = (
                with_topic(out[0], qualifies[ans], col),
                with_topic(out[1], qualifies[ans], col),
                with_topic(out[2], qualifies[na], col),
            )
        return (
            fold_counts(out[0], a.fold[ans], folds),
            fold_counts(out[1], a.fold[ans], folds),
            fold_counts(out[2], a.fold[na], folds),
        )

    return Sweep(
        blocks,
        table[:, -1].astype(int),
        dists,
        np.stack([x[0] for x in stored]),
        np.stack([x[1] for x in stored]),
        np.bincount(a.fold[ans], minlength=folds),
        np.bincount(a.fold[na], minlength=folds),
        recount,
        {
            **(
                {"anchor_support": True, "anchor_min_share": grid.anchor_min_share}
                if grid.anchor_support
                else {}
            ),
            **(
                {"paraphrase_min_pull": grid.paraphrase_min_pull}
                if grid.paraphrase_min_pull > PULL_OFF
                else {}
            ),
            **({"stats_min_chunks": grid.stats_min_chunks} if grid.stats_min_chunks > 1 else {}),
            **(
                {"agreement_max_distance": grid.agreement_max_distance}
                if grid.agreement_max_distance > 0
                else {}
            ),
        },
    )


def select(
    s: Sweep, ceiling: float, folds: Sequence[int] | None = None, floor: float = 0.0
) -> int | None:
    """The best setting on ``folds`` (default all) whose false-answer rate is <= ``ceiling``
    and whose answer recall is >= ``floor``; None when no setting keeps both."""
    recalled, false = s.result_totals(folds)
    allowed = math.floor(ceiling * int(s.no_answer[s._folds(folds)].sum()) + 1e-9)
    needed = math.ceil(floor * int(s.answerable[s._folds(folds)].sum()) - 1e-9)
    feasible = (false <= allowed) & (recalled >= needed)
    if not feasible.any():
        return None
    tied = feasible & (recalled == recalled[feasible].max())
    return s.pick(tied & (false == false[tied].min()))


def least_false(s: Sweep, folds: Sequence[int] | None = None) -> int:
    """The setting with the fewest false answers on ``folds`` (then the most recall)."""
    recalled, false = s.result_totals(folds)
    low = false == false.min()
    return s.pick(low & (recalled == recalled[low].max()))


def frontier(s: Sweep) -> list[int]:
    """Settings no other beats on both rates, fewest false answers first (one per step)."""
    recalled, false = s.result_totals(None)
    best = np.full(int(s.no_answer.sum()) + 1, -1)
    np.maximum.at(best, false.ravel(), recalled.ravel())
    out, top = [], -1
    for f, r in enumerate(best):
        if r > top:
            out.append(s.pick((false == f) & (recalled == r)))
            top = int(r)
    return out


@dataclass
class HeldOut:
    """Cross-validated figures of the selection rule."""

    folds: list[dict[str, Any]] = field(default_factory=list)
    pooled: Figures = field(default_factory=Figures)

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": f"{len(self.folds)}-fold cross-validation, fold = sha1(case id) mod "
            f"{len(self.folds)}",
            "pooled": self.pooled.as_dict(),
            "folds": self.folds,
        }


def held_out(s: Sweep, ceiling: float, floor: float = 0.0) -> HeldOut:
    """Select on all folds but one, score on that one; a fold with no feasible setting on its
    training part falls back to the setting with the fewest false answers there."""
    n = len(s.answerable)
    result = HeldOut()
    for k in range(n):
        train = [f for f in range(n) if f != k]
        i = select(s, ceiling, train, floor)
        feasible = i is not None
        if i is None:
            i = least_false(s, train)
        test = s.figures(i, [k])
        result.pooled += test
        result.folds.append(
            {
                "fold": k,
                "feasible": feasible,
                "params": s.params(i).as_dict(),
                "train": s.figures(i, train).as_dict(),
                "test": test.as_dict(),
            }
        )
    return result


def distance_curve(s: Sweep, i: int) -> list[int]:
    """The settings that differ from ``i`` only in vector_max_distance, by distance."""
    block = i // len(s.distances)
    return [block * len(s.distances) + d for d in np.argsort(s.distances, kind="stable")]


def plot(
    s: Sweep,
    chosen: int,
    ceiling: float,
    path: Path,
    title: str,
    held: Sequence[tuple[float, float]] = (),
) -> None:
    """Draw false answers vs answer recall: the frontier, the distance curve, the chosen point;
    with ``held`` ((false-answer rate, recall) of each frontier setting on held-out sets), what
    the frontier's settings do on questions that played no part in choosing them."""
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
    if held:
        ax.plot(
            [h[0] for h in held],
            [h[1] for h in held],
            "s--",
            color="tab:orange",
            ms=4,
            lw=1,
            label="the frontier's settings on the held-out sets",
        )
    cx, cy = xy(distance_curve(s, chosen))
    ax.plot(
        cx,
        cy,
        ".",
        color="tab:gray",
        alpha=0.6,
        ms=4,
        label="chosen setting, vector_max_distance varied",
    )
    x, y = xy([chosen])
    p = s.params(chosen)
    ax.plot(
        x,
        y,
        "o",
        color="tab:red",
        ms=9,
        label=f"chosen: distance {p.vector_max_distance:g}, margin {p.vector_margin:g}, "
        f"coverage {p.min_coverage:g}",
    )
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
