"""Calibration per language relation: the sweep and selection of :mod:`rag.eval.calibrate`, run once on
each relation's cases, and the profile entries that record the outcome.

The cases of a set group by their question's relation to the corpus (:mod:`rag.search.relations`):
Czech questions over the Czech sample are ``same``, English and Slovak ones ``other``. Each group
with both answerable and not_found cases gets its own sweep, selection and held-out figures; a
group without both keeps the set the profile in force has for it.

An other-language group is swept once per :data:`CONTRASTS` value (distances judged relative to
the question's neighbourhood, see :mod:`rag.search.relations`), the sweep itself unchanged: its cases'
retrievals are shifted first; and each once with the supported-vector rule counting words, and
once per :data:`ANCHORS` share counting the question's language-independent anchors
(``anchor_support``, ``anchor_min_share``: :mod:`rag.search.anchors`). The combination whose selection
recalls most wins; ties go to fewer false answers, then to the smaller contrast, then to words,
then to the larger share.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from rag.answer.engine import Engine, relative
from rag.eval import calibrate as cal
from rag.eval.metrics import Report, retrieval_metrics, score
from rag.eval.sets import Case
from rag.eval.sweep import Grid, Sweep
from rag.search.pull import PULL_OFF
from rag.search.relations import OTHER, SAME, relation
from rag.search.relevance import FilterParams
from rag.search.retrieve import Retrieval


@dataclass
class Group:
    """One relation's cases, their retrievals, and its ungated cases set aside."""

    name: str
    cases: list[Case]
    retrievals: list[Retrieval]
    aside: list[tuple[Case, Retrieval]]

    @property
    def fittable(self) -> bool:
        return any(c.answerable for c in self.cases) and not all(c.answerable for c in self.cases)


def relation_of(r: Retrieval) -> str:
    """The language relation of a retrieved question to its owner's documents."""
    return relation(r.query.lang, r.owner_langs)


def groups(
    cases: Sequence[Case],
    retrievals: Sequence[Retrieval],
    aside: Sequence[tuple[Case, Retrieval]],
    other_as: str = OTHER,
) -> dict[str, Group]:
    """The set's cases by relation, ``same`` first; ``other_as`` names the other-language set."""
    out: dict[str, Group] = {}

    def group(r: Retrieval) -> Group:
        name = SAME if relation_of(r) == SAME else other_as
        return out.setdefault(name, Group(name, [], [], []))

    for c, r in zip(cases, retrievals, strict=True):
        g = group(r)
        g.cases.append(c)
        g.retrievals.append(r)
    for c, r in aside:
        group(r).aside.append((c, r))
    return dict(sorted(out.items(), key=lambda kv: kv[0] != SAME))


@dataclass
class Fit:
    """A relation's calibration: the sweep, the chosen setting and its figures."""

    group: Group
    sweep: Sweep
    front: list[int]
    chosen: int | None
    report: Report | None = None
    held_out: cal.HeldOut | None = None
    side: Any = None  # Figures of the ungated cases
    contrast: float = 0.0
    swept: tuple[float, ...] = (0.0,)
    anchors_swept: tuple[float | None, ...] = (None,)
    floor: float = 0.0  # the answer recall the selection had to keep

    @property
    def params(self) -> FilterParams:
        assert self.chosen is not None
        return self.sweep.params(self.chosen)


CONTRASTS = (0.0, 1.0, 2.0)
# Across languages the supported-vector rule may count the question's anchors (rag.search.anchors):
# None counts words; a number is the share of anchors a window must hold to stand in for names
# the answerability stage missed (0: the answer type alone)
ANCHORS: tuple[float | None, ...] = (None, 1.0, 0.5, 0.0)
# The grid of an other-language set. Its question words meet few of the corpus's keys (Slovak
# over Czech still meets many), so the word side keeps fewer values than the same-language grid,
# and no focus word is required (a word in another language is no focus the window can hold);
# the sweep stays small enough for the XQuAD pairs' 1,128 dev cases, six times over.
OTHER_GRID = Grid(
    min_coverage=(0.5, 0.7, 1.0),
    rare_df=(0.02, 0.1),
    rare_min_chunks=(1,),
    prefix_credit=(0.0, 0.5),
    support_min_coverage=(0.5, 0.75, 1.0),
    topic_min_known=(0.5, 1.0),
    focus_words=(0,),
    paraphrase_max_distance=(0.0,),
)


# The grid of the same-language relation: only the knobs whose ablation (rag eval --ablate,
# docs/evaluation.md) changes recall or false answers on sets that played no part in choosing
# them are swept. The others are fixed at the value the ablations support: the distance margin
# off (vector_margin 1: on the held-out sets it only cost recall), the known-topic rule off (it
# changed 1 of 161 held-out answerable cases), idf weighting, full prefix credit, rarity from one
# chunk up, a two-sentence window that must hold the answer's type, and the document rule on.
# Every swept setting is one more chance to fit the calibration set's own near misses.
SAME_GRID = Grid(
    vector_margin=(1.0,),
    rare_min_chunks=(1,),
    coverage_mode=("idf",),
    prefix_credit=(1.0,),
    topic_max_distance=(0.0,),
    topic_min_known=(1.0,),
    document_rule=(True,),
)


def fit(
    engine: Engine,
    name: str,
    g: Group,
    ceiling: float,
    folds: int,
    current: FilterParams | None,
    current_contrast: float = 0.0,
    contrasts: Sequence[float] = CONTRASTS,
    grid: Grid | None = None,
    anchors: Sequence[float | None] = ANCHORS,
    min_pull: float = PULL_OFF,
    stats_min_chunks: int = 1,
    floor: float = 0.0,
    agreement_max_distance: float = 0.0,
) -> Fit:
    """Sweep one relation's cases (the set in force joins the sweep) and select a setting;
    an other-language relation once per contrast and anchor evidence (without first)."""
    best: Fit | None = None
    other = name != SAME
    for contrast, anchored in itertools.product(
        contrasts if other else (0.0,), anchors if other else (None,)
    ):
        shifted = Group(
            g.name,
            g.cases,
            [relative(r, contrast) for r in g.retrievals],
            [(c, relative(r, contrast)) for c, r in g.aside],
        )
        same_anchors = current is not None and (
            (current.anchor_support, current.anchor_min_share)
            == (anchored is not None, 1.0 if anchored is None else anchored)
        )
        also = [current] if current and contrast == current_contrast and same_anchors else []
        swept = replace(
            grid or (OTHER_GRID if other else SAME_GRID),
            anchor_support=anchored is not None,
            anchor_min_share=1.0 if anchored is None else anchored,
            paraphrase_min_pull=min_pull,
            stats_min_chunks=stats_min_chunks,
            agreement_max_distance=agreement_max_distance,
        )
        s = cal.sweep(shifted.cases, shifted.retrievals, swept, folds=folds, also=also)
        chosen = cal.select(s, ceiling, floor=floor)
        f = Fit(shifted, s, cal.frontier(s), chosen, contrast=contrast)
        if best is None or _better(f, best):
            best = f
    assert best is not None
    best.swept = tuple(contrasts)
    best.floor = floor
    best.anchors_swept = tuple(anchors) if other else (None,)
    if best.chosen is None:
        return best
    g, params = best.group, best.params
    best.report = score(engine, name, g.cases, g.retrievals, params)
    best.held_out = cal.held_out(best.sweep, ceiling, floor)
    best.side = score(
        engine, name, [c for c, _ in g.aside], [r for _, r in g.aside], params
    ).figures
    return best


def _better(f: Fit, than: Fit) -> bool:
    if f.chosen is None:
        return False
    if than.chosen is None:
        return True
    a, b = f.sweep.figures(f.chosen), than.sweep.figures(than.chosen)
    return (a.recalled, -a.false_answers) > (b.recalled, -b.false_answers)


def entry(f: Fit, set_name: str, ceiling: float, ungated: Sequence[str]) -> dict[str, Any]:
    """What a profile records about a relation's set besides its params."""
    assert f.report is not None and f.held_out is not None
    return {
        "created": date.today().isoformat(),
        "set": set_name,
        "cases": len(f.group.cases),
        "max_false_answer": ceiling,
        "min_answer_recall": f.floor,
        "swept_settings": len(f.sweep),
        "contrasts_swept": list(f.swept) if f.group.name != SAME else [0.0],
        "anchor_min_share_swept": list(f.anchors_swept),  # null: words, not anchors
        "figures": f.report.figures.as_dict(),
        "held_out": f.held_out.as_dict(),
        "retrieval": retrieval_metrics(f.report.results),
        "failed_cases": [r.case.id for r in f.report.failures],
        "ungated_tags": list(ungated),
        "ungated": {"not_found": f.side.no_answer, "answered": f.side.false_answers},
    }
