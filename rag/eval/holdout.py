"""Held-out sets: figures of a calibration's settings on cases that played no part in choosing them.

Cross-validation (:func:`rag.eval.calibrate.held_out`) re-selects on part of the calibration set
and so still sees its kind of question. A held-out set is another set of questions, written
after the choice or over another corpus (the natural questions, the small knowledge bases), each
retrieved once; every setting reported is judged on it through the engine, as search judges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag.answer.engine import Engine
from rag.eval.metrics import Figures, score
from rag.eval.sets import Case
from rag.search.relations import SAME
from rag.search.relevance import FilterParams
from rag.search.retrieve import Retrieval
from rag.search.thresholds import Thresholds


@dataclass
class HeldOutSet:
    """One held-out set, retrieved once by its own owner's engine."""

    name: str
    engine: Engine
    cases: list[Case]
    retrievals: list[Retrieval]

    def figures(self, thresholds: Thresholds) -> Figures:
        return score(self.engine, self.name, self.cases, self.retrievals, thresholds).figures


def pooled(figures: Sequence[Figures]) -> Figures:
    """The counts of several sets added up."""
    return sum(figures, Figures())


def with_same(thresholds: Thresholds, params: FilterParams) -> Thresholds:
    """``thresholds`` judging same-language questions with ``params``."""
    return thresholds.with_sets({SAME: params})


def report(
    sets: Sequence[HeldOutSet], thresholds: Thresholds
) -> tuple[list[tuple[str, Figures]], Figures]:
    """Each held-out set's figures under ``thresholds``, and all of them pooled."""
    each = [(s.name, s.figures(thresholds)) for s in sets]
    return each, pooled([f for _, f in each])


def as_dict(each: Sequence[tuple[str, Figures]], total: Figures) -> dict[str, Any]:
    return {
        "sets": [{"set": name, **f.as_dict()} for name, f in each],
        "pooled": total.as_dict(),
    }
