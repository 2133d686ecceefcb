"""The sweep's selection arithmetic, without a database: Sweep.pick must choose exactly what a
full lexicographic ranking of every marked setting would, while ranking only the settings at the
lowest marked distance."""

from __future__ import annotations

import numpy as np
import pytest

from rag.eval.sweep import KNOBS, Sweep


def _sweep(rng: np.random.Generator, blocks: int, results: int, distances: int) -> Sweep:
    values = {
        k: rng.choice([0.0, 0.5, 1.0], size=blocks) for k, _ in KNOBS if k != "vector_max_distance"
    }
    return Sweep(
        blocks=values,
        result=rng.integers(0, results, size=blocks),
        distances=np.sort(rng.choice(np.arange(1, 200) / 400, size=distances, replace=False)),
        recalled=np.zeros((results, distances, 2), dtype=np.uint8),
        false_answers=np.zeros((results, distances, 2), dtype=np.uint8),
        answerable=np.array([1, 1]),
        no_answer=np.array([1, 1]),
    )


def _ranked_first(s: Sweep, chosen: np.ndarray) -> int:
    """Every marked setting ranked on every knob at once (what pick must equal)."""
    idx = np.flatnonzero(chosen[s.result])
    block, d = np.divmod(idx, len(s.distances))
    keys = [
        sign * (s.distances[d] if k == "vector_max_distance" else s.blocks[k][block])
        for k, sign in reversed(KNOBS)
    ]
    return int(idx[np.lexsort(keys)[0]])


@pytest.mark.parametrize("seed", range(20))
def test_pick_equals_the_full_ranking(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = _sweep(rng, blocks=300, results=40, distances=25)
    for density in (0.02, 0.3, 1.0):
        chosen = rng.random((40, 25)) < density
        chosen[rng.integers(40), rng.integers(25)] = True  # never empty
        assert s.pick(chosen) == _ranked_first(s, chosen)


def test_the_lowest_distance_wins_before_any_other_knob() -> None:
    s = _sweep(np.random.default_rng(1), blocks=50, results=5, distances=10)
    chosen = np.zeros((5, 10), dtype=bool)
    chosen[:, 7] = True
    chosen[int(s.result[0]), 3] = True
    block, d = divmod(s.pick(chosen), 10)
    assert d == 3 and s.result[block] == s.result[0]
