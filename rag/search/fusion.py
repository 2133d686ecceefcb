"""Reciprocal Rank Fusion's knobs, and choosing them per embedding model on dev questions.

The SQL of :mod:`rag.search.sql` fuses the full-text and vector lists as
``w_fts / (k + fts_rank) + w_vec / (k + vector_rank)`` over the top ``candidates`` of each list,
ties broken by the better single rank and then by chunk id. :func:`fuse` does the same in Python
over a retrieval made once with deeper lists, so that a grid of settings can be scored without
searching again; :func:`choose` picks the setting that calibration stores in the model's profile
(a ``"fusion"`` section, read by :func:`rag.search.profiles.fusion_settings`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from rag.search.retrieve import Candidate, Retrieval

MRR_DEPTH = 10


@dataclass(frozen=True, slots=True)
class Fusion:
    rrf_k: int = 60
    rrf_weight_fts: float = 1.0
    rrf_weight_vector: float = 1.0
    candidates: int = 50

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def fuse(candidates: Iterable[Candidate], f: Fusion) -> list[Candidate]:
    """The candidates in the order the fused SQL list would have them under ``f``."""
    scored = []
    for c in candidates:
        fr = c.fts_rank if c.fts_rank is not None and c.fts_rank <= f.candidates else None
        vr = c.vector_rank if c.vector_rank is not None and c.vector_rank <= f.candidates else None
        if fr is None and vr is None:
            continue
        rrf = (f.rrf_weight_fts / (f.rrf_k + fr) if fr else 0.0) + (
            f.rrf_weight_vector / (f.rrf_k + vr) if vr else 0.0
        )
        best = min(fr or 10**9, vr or 10**9)
        scored.append((-rrf, best, c.chunk_id, c))
    scored.sort(key=lambda t: t[:3])
    return [t[3] for t in scored]


def single(candidates: Iterable[Candidate], mode: str, depth: int) -> list[Candidate]:
    """One retriever's list alone (mode ``fts`` or ``vector``), to its first ``depth``."""
    attr = "fts_rank" if mode == "fts" else "vector_rank"
    ranked = [c for c in candidates if (getattr(c, attr) or depth + 1) <= depth]
    return sorted(ranked, key=lambda c: getattr(c, attr))


def metrics(lists: Sequence[Sequence[Candidate]], gold: Sequence[set[str]]) -> dict[str, float]:
    """hit@1, hit@5 and MRR@10 over distinct source ids."""
    n = len(gold)
    out = {"hit@1": 0.0, "hit@5": 0.0, "mrr@10": 0.0}
    if not n:
        return out
    for ranked, relevant in zip(lists, gold, strict=True):
        sources = list(dict.fromkeys(c.source_id for c in ranked))
        rank = next((i for i, s in enumerate(sources, 1) if s in relevant), None)
        if rank is not None:
            out["hit@1"] += (rank <= 1) / n
            out["hit@5"] += (rank <= 5) / n
            out["mrr@10"] += (1 / rank if rank <= MRR_DEPTH else 0.0) / n
    return out


WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.1, 1.25)
# Across languages full text finds little (names and numbers a question shares with a passage in
# another language): the vector list may need to outweigh it several times over.
OTHER_WEIGHTS = (*WEIGHTS, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)


def grid(depths: Sequence[int] = (20, 30, 50), weights: Sequence[float] = WEIGHTS) -> list[Fusion]:
    """The settings calibration tries: k, the vector list's weight (full text's is 1), depth."""
    return [Fusion(k, 1.0, w, d) for k in (1, 2, 3, 5, 10, 20, 60) for w in weights for d in depths]


@dataclass
class SetScores:
    """One question set's retrievals (made with lists of at least the grid's deepest depth)."""

    name: str
    retrievals: list[Retrieval]
    gold: list[set[str]]

    def hybrid(self, f: Fusion) -> dict[str, float]:
        return metrics([fuse(r.candidates, f) for r in self.retrievals], self.gold)

    def best_single(self, depth: int) -> dict[str, float]:
        per_mode = [
            metrics([single(r.candidates, m, depth) for r in self.retrievals], self.gold)
            for m in ("fts", "vector")
        ]
        return {k: max(m[k] for m in per_mode) for k in per_mode[0]}


def choose(sets: Sequence[SetScores], settings: Sequence[Fusion]) -> tuple[Fusion, float]:
    """The setting with the best mean MRR@10 among those whose fused list is at least as good as
    the better single list on hit@1 and MRR@10 in every set; if none is, the one whose worst
    shortfall is smallest. Ties: the shallower depth, then the larger k.

    Returns:
        The setting and its mean MRR@10.
    """
    best_single = {
        (s.name, d): s.best_single(d) for s in sets for d in {f.candidates for f in settings}
    }

    def key(f: Fusion) -> tuple[float, float, int, int]:
        scores = [(s.hybrid(f), best_single[(s.name, f.candidates)]) for s in sets]
        shortfall = min(min(h["hit@1"] - b["hit@1"], h["mrr@10"] - b["mrr@10"]) for h, b in scores)
        mean = sum(h["mrr@10"] for h, _ in scores) / len(scores)
        return (min(shortfall, 0.0), mean, -f.candidates, f.rrf_k)

    ranked = sorted(settings, key=key, reverse=True)
    top = ranked[0]
    return top, key(top)[1]
