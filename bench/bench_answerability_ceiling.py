"""How well the evidence the filter reads can tell answerable claims from near-topic ones.

    RAG_EMBED_CACHE=... python bench/bench_answerability_ceiling.py [--eval ../shared/eval]

ctkfacts' "not enough info" claims name the topic of a passage but state a fact it does not
hold. The shipped filter judges them by rules over its evidence (distances, word coverage and
support, the evidence window's checks). This script asks whether *any* weighting of that same
evidence does markedly better: it fits a class-balanced logistic regression over the evidence of
each claim's first candidate (and the best of its first five) on the dev claims, picks its
threshold on dev, and applies both to the test claims. Beside it, measured on the same
retrievals: the shipped pipeline, and the vector distance alone.

Balanced accuracy = (answer recall + share of NEI claims refused) / 2, as `rag eval` counts it:
an answerable claim counts only when its gold passage is among the sources (for the learned
score: the first candidate, so its recall can never exceed the share of claims whose first
candidate is gold, printed as the ceiling).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.answer.engine import Engine, judged
from rag.db import Database
from rag.embedders import make_embedder
from rag.eval.metrics import score
from rag.eval.sets import Case, corpus_owner, external_set, retrieve_all
from rag.search.relevance import FilterParams
from rag.search.retrieve import Retrieval
from rag.settings import Settings

FEATURES = (
    "distance",
    "margin to the second",
    "distance - mean of 10",
    "coverage",
    "support",
    "known",
    "best coverage of 5",
    "best support of 5",
    "a window of 5 answers",
    "its window answers",
    "fails by focus",
    "fails by answer type",
    "fails by a required word",
    "bm25",
    "first in both lists",
    "question words",
)
TOP = 5


@dataclass
class Split:
    name: str
    cases: list[Case]
    retrievals: list[Retrieval]


def permissive(p: FilterParams) -> FilterParams:
    """The shipped knobs with every distance rule open: every candidate's window is judged."""
    return replace(
        p,
        vector_max_distance=2.0,
        support_max_distance=2.0,
        paraphrase_max_distance=2.0,
        topic_max_distance=2.0,
    )


def features(r: Retrieval, params: FilterParams) -> list[float] | None:
    if not r.candidates:
        return None
    hits, _, _ = judged(r, params)
    js = [h.judgement for h in hits[:TOP]]
    first, j = r.candidates[0], js[0]
    dists = sorted(c.distance for c in r.candidates if c.distance is not None)
    d1 = dists[0] if dists else 2.0
    reason = j.answer.reason if j.answer else None
    return [
        d1,
        dists[1] - d1 if len(dists) > 1 else 0.0,
        d1 - float(np.mean(dists[:10])) if dists else 0.0,
        j.coverage,
        j.support,
        j.known,
        max(x.coverage for x in js),
        max(x.support for x in js),
        float(any(x.answer is not None and x.answer.answers for x in js)),
        float(j.answer is not None and j.answer.answers),
        float(reason == "focus"),
        float(reason == "type"),
        float(reason in ("absent", "required")),
        float(first.bm25 or 0.0),
        float(first.fts_rank == 1 and first.vector_rank == 1),
        float(len(r.query.all_words)),
    ]


def table(split: Split, params: FilterParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, label (1 answerable, 0 NEI) and whether the first candidate is gold."""
    xs, ys, gold = [], [], []
    for c, r in zip(split.cases, split.retrievals, strict=True):
        f = features(r, params)
        if f is None:
            f = [2.0] + [0.0] * (len(FEATURES) - 1)
        xs.append(f)
        ys.append(int(c.answerable))
        gold.append(bool(r.candidates) and r.candidates[0].source_id in c.expect)
    return np.array(xs), np.array(ys), np.array(gold)


def fit(
    x: np.ndarray, y: np.ndarray, steps: int = 4000, rate: float = 0.1, l2: float = 1.0
) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray]:
    """Class-balanced logistic regression on standardized features, by gradient descent."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    w, b = np.zeros(z.shape[1]), 0.0
    weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = (p - y) * weight
        w -= rate * (z.T @ g + l2 * w) / len(y)
        b -= rate * g.mean()
    return lambda q: ((q - mu) / sd) @ w + b, w


def balanced(s: np.ndarray, y: np.ndarray, gold: np.ndarray, t: float) -> tuple[float, int, int]:
    """Balanced accuracy at threshold ``t``, answered answerable with gold first, NEI answered."""
    recalled = int(((s > t) & (y == 1) & gold).sum())
    nei_answered = int(((s > t) & (y == 0)).sum())
    ba = (recalled / (y == 1).sum() + 1 - nei_answered / (y == 0).sum()) / 2
    return ba, recalled, nei_answered


def best_threshold(s: np.ndarray, y: np.ndarray, gold: np.ndarray) -> float:
    ts = np.quantile(s, np.linspace(0.005, 0.995, 199))
    return float(max(ts, key=lambda t: balanced(s, y, gold, t)[0]))


def shipped(engine: Engine, split: Split) -> tuple[float, int, int]:
    f = score(engine, split.name, split.cases, split.retrievals, engine.thresholds).figures
    ba = (f.recalled / f.answerable + 1 - f.false_answers / f.no_answer) / 2
    return ba, f.recalled, f.false_answers


def line(name: str, ba: float, recalled: int, nei: int, y: np.ndarray) -> str:
    return f"  {name:34} {ba:.3f}   {recalled:4}/{(y == 1).sum():<4}   {nei:4}/{(y == 0).sum()}"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval"
    )
    args = ap.parse_args(argv)
    ctk = args.eval / "ctkfacts"
    settings = Settings.from_env()
    embedder = make_embedder(settings)
    if embedder is None:
        sys.exit("bench_answerability_ceiling needs an embedder (RAG_EMBEDDER)")
    db = Database(settings)
    engine = Engine(db, settings, embedder)
    splits = []
    for name in ("dev", "test"):
        evalset = external_set(
            ctk / "docs.jsonl",
            [ctk / f"questions_{name}.jsonl"],
            [ctk / f"questions_noanswer_{name}.jsonl"],
            name="ctkfacts",
        )
        _, owner_id = corpus_owner(db, settings, embedder, evalset)
        cases = list(evalset.cases)
        splits.append(Split(name, cases, retrieve_all(engine, owner_id, cases)))
    params = permissive(engine.params)
    (xd, yd, gd), (xt, yt, gt) = (table(s, params) for s in splits)
    learned, weights = fit(xd, yd)
    sd, st = learned(xd), learned(xt)
    t = best_threshold(sd, yd, gd)
    dist_t = best_threshold(-xd[:, 0], yd, gd)
    print("ctkfacts: answerable claims against 'not enough info' claims")
    print(f"  {'':34} BA      recalled    NEI answered")
    for split, x, y, g, s in ((splits[0], xd, yd, gd, sd), (splits[1], xt, yt, gt, st)):
        print(f"{split.name} ({len(split.cases)} claims)")
        print(line("shipped pipeline", *shipped(engine, split), y))
        print(line("vector distance alone", *balanced(-x[:, 0], y, g, dist_t), y))
        print(line("logistic over the evidence", *balanced(s, y, g, t), y))
        ceiling = (g[y == 1].mean() + 1) / 2
        print(
            f"  ceiling of a first-candidate answer: BA {ceiling:.3f} (first candidate gold "
            f"for {int(g[y == 1].sum())}/{(y == 1).sum()})"
        )
    print("logistic weights (standardized features):")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:28} {w:+.2f}")


if __name__ == "__main__":
    main()
