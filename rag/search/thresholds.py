"""A profile's threshold sets, one per language relation (:mod:`rag.search.relations` says which
relation a question has), each a :class:`~rag.search.relevance.FilterParams`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rag.search.relations import OTHER, SAME, OwnerLangs, pair, relation
from rag.search.relevance import FilterParams


@dataclass(frozen=True)
class Thresholds:
    """A profile's threshold sets: the default (``same``) and one per calibrated relation."""

    default: FilterParams
    sets: Mapping[str, FilterParams] = field(default_factory=dict)
    contrast: Mapping[str, float] = field(default_factory=dict)  # by set name; absent: 0

    def choose(self, lang: str, owner_langs: OwnerLangs) -> tuple[str, str, FilterParams]:
        """The question's relation, the name of the set that judges it, and that set."""
        rel = relation(lang, owner_langs)
        if rel == SAME:
            return rel, SAME, self.sets.get(SAME, self.default)
        key = pair(lang, owner_langs)
        if key in self.sets:
            return rel, key, self.sets[key]
        if OTHER in self.sets:
            return rel, OTHER, self.sets[OTHER]
        return rel, SAME, self.sets.get(SAME, self.default)

    def get(self, name: str) -> FilterParams:
        """The set called ``name``; the default for ``same`` or a set the profile lacks."""
        return self.sets.get(name, self.default)

    def names(self) -> list[str]:
        return [SAME, *sorted(k for k in self.sets if k != SAME)]

    def with_sets(self, sets: Mapping[str, FilterParams]) -> Thresholds:
        """These thresholds with ``sets`` replacing (or adding) the named sets."""
        merged = {**self.sets, **sets}
        return Thresholds(merged.get(SAME, self.default), merged, self.contrast)

    def contrast_of(self, name: str) -> float:
        """How strongly the set ``name`` judges distances relative to the neighbourhood."""
        return float(self.contrast.get(name, 0.0))
