"""Calibration per language relation: the sweep and selection of :mod:`rag.calibrate`, run once on
each relation's cases, and the profile entries that record the outcome.

The cases of a set group by their question's relation to the corpus (:mod:`rag.relations`):
Czech questions over the Czech sample are ``same``, English and Slovak ones ``other``. Each group
with both answerable and not_found cases gets its own sweep, selection and held-out figures; a
group without both keeps the set the profile in force has for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from rag import calibrate as cal
from rag.answer import Engine
from rag.eval_metrics import Report, retrieval_metrics, score
from rag.evaluate import Case
from rag.relations import OTHER, SAME, relation
from rag.relevance import FilterParams
from rag.retrieve import Retrieval
from rag.sweep import Sweep


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

    @property
    def params(self) -> FilterParams:
        assert self.chosen is not None
        return self.sweep.params(self.chosen)


def fit(
    engine: Engine,
    name: str,
    g: Group,
    ceiling: float,
    folds: int,
    current: FilterParams | None,
) -> Fit:
    """Sweep one relation's cases (the set in force joins the sweep) and select a setting."""
    s = cal.sweep(g.cases, g.retrievals, folds=folds, also=[current] if current else [])
    chosen = cal.select(s, ceiling)
    result = Fit(g, s, cal.frontier(s), chosen)
    if chosen is None:
        return result
    params = s.params(chosen)
    result.report = score(engine, name, g.cases, g.retrievals, params)
    result.held_out = cal.held_out(s, ceiling)
    result.side = score(
        engine, name, [c for c, _ in g.aside], [r for _, r in g.aside], params
    ).figures
    return result


def entry(f: Fit, set_name: str, ceiling: float, ungated: Sequence[str]) -> dict[str, Any]:
    """What a profile records about a relation's set besides its params."""
    assert f.report is not None and f.held_out is not None
    return {
        "created": date.today().isoformat(),
        "set": set_name,
        "cases": len(f.group.cases),
        "max_false_answer": ceiling,
        "swept_settings": len(f.sweep),
        "figures": f.report.figures.as_dict(),
        "held_out": f.held_out.as_dict(),
        "retrieval": retrieval_metrics(f.report.results),
        "failed_cases": [r.case.id for r in f.report.failures],
        "ungated_tags": list(ungated),
        "ungated": {"not_found": f.side.no_answer, "answered": f.side.false_answers},
    }
