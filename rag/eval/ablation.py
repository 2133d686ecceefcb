"""Ablation: what each knob of the filter buys, one knob at a time, on cached retrievals.

Each row judges the whole set with the profile in force but one rule or knob turned off (or set
to its neutral value), and reports recall and false answers beside the profile's own. A knob
earns its place when turning it off costs recall or adds false answers on sets that played no
part in choosing it; one whose row equals the profile's on every held-out set buys nothing there.

Only the same-language threshold set is changed: the other-language sets are calibrated apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rag.answer.engine import Engine
from rag.eval.metrics import Figures, Report, score
from rag.eval.sets import Case
from rag.search.pull import PULL_OFF
from rag.search.relations import SAME
from rag.search.retrieve import Retrieval
from rag.search.thresholds import Thresholds

# (name, what it does, the knobs it changes). "Off" is the value at which the rule can never
# fire or never refuse; a threshold is moved by one step of the calibration's distance grid
# times four (0.01) on each side instead, since it has no "off".
ABLATIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("distance-0.01", "vector_max_distance 0.01 lower", {"vector_max_distance": -0.01}),
    ("distance+0.01", "vector_max_distance 0.01 higher", {"vector_max_distance": +0.01}),
    ("no-margin", "every vector counts as near the best (vector_margin 1)", {"vector_margin": 1.0}),
    ("no-words", "the word-coverage rule off (min_coverage 1)", {"min_coverage": 1.0}),
    (
        "count-mode",
        "coverage counts words instead of weighting them by idf",
        {"coverage_mode": "count"},
    ),
    ("no-prefix", "a prefix-only match earns no credit (prefix_credit 0)", {"prefix_credit": 0.0}),
    (
        "no-stats-floor",
        "rarity over the owner's own chunk count (stats_min_chunks 1)",
        {"stats_min_chunks": 1},
    ),
    (
        "no-support",
        "the supported-vector rule off (support_min_coverage above 1)",
        {"support_min_coverage": 1.01},
    ),
    ("no-topic", "the known-topic rule off (topic_max_distance 0)", {"topic_max_distance": 0.0}),
    ("no-answerability", "no evidence window is asked for (answer_window 0)", {"answer_window": 0}),
    ("window-1", "an evidence window of one sentence", {"answer_window": 1}),
    ("focus-1", "one focus word must be in the window, not two", {"focus_words": 1}),
    (
        "no-paraphrase",
        "a close vector never stands in for missing focus words",
        {"paraphrase_max_distance": 0.0},
    ),
    ("no-pull", "the paraphrase rule without the pull check", {"paraphrase_min_pull": PULL_OFF}),
    (
        "no-answer-type",
        "the window need not hold the asked-for kind of answer",
        {"require_answer_type": False},
    ),
    (
        "no-document-rule",
        "a chunk is not admitted for its document's sake",
        {"document_rule": False},
    ),
)
# knobs whose ablation value is added to the profile's (a shift), not put in its place
SHIFTED = frozenset({"vector_max_distance"})


@dataclass
class Row:
    """One ablation's figures and how many cases changed outcome against the profile's."""

    name: str
    what: str
    params: dict[str, Any]
    figures: Figures
    changed: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "what": self.what,
            "params": self.params,
            "changed": self.changed,
            **self.figures.as_dict(),
        }


def ablated(thresholds: Thresholds, changes: dict[str, Any]) -> Thresholds:
    """``thresholds`` with ``changes`` applied to the same-language set."""
    base = thresholds.get(SAME)
    values = {k: round(getattr(base, k) + v, 6) if k in SHIFTED else v for k, v in changes.items()}
    return thresholds.with_sets({SAME: replace(base, **values)})


def ablate(
    engine: Engine,
    name: str,
    cases: Sequence[Case],
    retrievals: Sequence[Retrieval],
    thresholds: Thresholds,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[Report, list[Row]]:
    """The profile's report and one row per ablation, all from the same cached retrievals."""
    base = score(engine, name, cases, retrievals, thresholds, progress=progress)
    outcomes = [r.outcome for r in base.results]
    rows = []
    for label, what, changes in ABLATIONS:
        t = ablated(thresholds, changes)
        report = score(engine, name, cases, retrievals, t, progress=progress)
        changed = sum(a != r.outcome for a, r in zip(outcomes, report.results, strict=True))
        values = {k: getattr(t.get(SAME), k) for k in changes}
        rows.append(Row(label, what, values, report.figures, changed))
    return base, rows
