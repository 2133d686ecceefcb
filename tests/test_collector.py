"""The collector as `rag serve` settles it (rag.api.services.settle_collector): a search's
short-lived containers die before a first-generation collection walks them, and what start-up
loaded is frozen out of every later one."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from rag.api.services import settle_collector
from rag.errors import ConfigError
from rag.settings import MAX_GC_THRESHOLD, Settings


@pytest.fixture
def collector() -> Iterator[None]:
    """The process's collector as it was, whatever a test does to it."""
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    yield
    gc.set_threshold(*before)
    if frozen == 0:
        gc.unfreeze()


def young_collections(live: int) -> int:
    """First-generation collections while ``live`` new containers are held at once."""
    runs: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 0:
            runs.append(1)

    gc.collect()
    gc.callbacks.append(count)
    try:
        held = [frozenset((i, str(i))) for i in range(live)]
        assert len(held) == live
    finally:
        gc.callbacks.remove(count)
    return len(runs)


def test_a_larger_threshold_lets_a_searchs_objects_live_without_a_collection(
    collector: None,
) -> None:
    gc.set_threshold(700, *gc.get_threshold()[1:])
    assert young_collections(3000) >= 3  # Python's 700: one collection per 700 held
    settle_collector(5000, freeze=False)
    assert gc.get_threshold()[0] == 5000
    assert young_collections(3000) == 0


def test_settling_keeps_the_older_generations_and_freezes_what_is_loaded(collector: None) -> None:
    gc.unfreeze()
    middle, oldest = gc.get_threshold()[1:]
    loaded = [frozenset({i}) for i in range(1000)]  # what start-up loaded, still referenced
    settle_collector(5000, freeze=True)
    assert gc.get_threshold() == (5000, middle, oldest)
    assert gc.get_freeze_count() >= len(loaded)


def test_zero_leaves_the_collector_as_it_is(collector: None) -> None:
    gc.unfreeze()
    before = gc.get_threshold()
    settle_collector(0, freeze=True)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("threshold", [-1, MAX_GC_THRESHOLD + 1])
def test_a_threshold_out_of_range_is_refused(threshold: int) -> None:
    with pytest.raises(ConfigError, match="gc_threshold must be from 0 to"):
        Settings(gc_threshold=threshold)
