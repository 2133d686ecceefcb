"""Calibrate RRF fusion (k, the vector list's weight, the depth) for the configured embedder.

    RAG_EMBED_CACHE=... python bench/bench_fusion.py [--eval ../shared/eval] [--write]
    RAG_EMBED_CACHE=... python bench/bench_fusion.py --relations [--write]

Tunes on dev questions, reports on test questions: ctkfacts has dev and test files; the xquad
sets have one file each, split by their gold paragraph (sha1 of its id, even: dev, odd: test),
so that no paragraph's questions are in both halves. Each set is retrieved once per split with
lists of the grid's deepest depth; every setting of :func:`rag.search.fusion.grid` is scored by fusing
those lists again (:func:`rag.search.fusion.fuse`, the SQL's arithmetic). Prints hit@1, hit@5 and
MRR@10 of full text, vector, the settings' fusion and the chosen one on dev and test; with
--write, stores the chosen setting as the "fusion" section of the model's shipped profile.

With --relations, the sets are other-language questions instead: German XQuAD questions over the
Russian paragraphs and Russian over German (gold ids mapped, split as ``rag eval --split``
splits them), with the English and Slovak cases of the shipped regression set over rag/sample
reported beside; the choice is the ``other`` relation's (``relations.other.fusion``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.db import Database
from rag.embedders import make_embedder
from rag.eval.sets import (
    Case,
    EvalSet,
    corpus_owner,
    external_set,
    regression_set,
    split_of,
)
from rag.search.fusion import OTHER_WEIGHTS, Fusion, SetScores, choose, fuse, grid, metrics, single
from rag.search.profiles import SHIPPED_DIR, fusion_settings, slug
from rag.search.relations import OTHER, relation
from rag.search.retrieve import retrieve
from rag.settings import Settings

DEPTH = 50


def half(case: Case) -> str:
    return "dev" if int(hashlib.sha1(case.expect[0].encode()).hexdigest(), 16) % 2 == 0 else "test"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--eval", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval"
    )
    ap.add_argument("--write", action="store_true", help="store the choice in the shipped profile")
    ap.add_argument(
        "--relations",
        action="store_true",
        help="fit the other-language relation's fusion (XQuAD de>ru and ru>de)",
    )
    args = ap.parse_args()
    settings = Settings.from_env()
    embedder = make_embedder(settings)
    if embedder is None:
        sys.exit("bench_fusion needs an embedder (RAG_EMBEDDER)")
    deep = settings.replace(candidates=DEPTH)
    db = Database(settings)
    sets: dict[str, dict[str, SetScores]] = {"dev": {}, "test": {}}
    owners: dict[str, int] = {}
    test_vectors: dict[str, np.ndarray] = {}

    def add(name: str, split: str, cases: list[Case], owner_id: int) -> None:
        cases = [c for c in cases if c.answerable]
        questions = [c.question for c in cases]
        vectors = np.vstack(
            [
                embedder.embed(questions[i : i + 64], kind="query")
                for i in range(0, len(questions), 64)
            ]
        )
        retrievals = [
            retrieve(db, deep, embedder, owner_id, q, vector=v)
            for q, v in zip(questions, vectors, strict=True)
        ]
        if args.relations:  # the other-language questions only (the regression set has Czech)
            keep = [relation(r.query.lang, r.owner_langs) == OTHER for r in retrievals]
            retrievals = [r for r, k in zip(retrievals, keep, strict=True) if k]
            vectors = vectors[np.asarray(keep, dtype=bool)]
            cases = [c for c, k in zip(cases, keep, strict=True) if k]
        sets[split][name] = SetScores(name, retrievals, [set(c.expect) for c in cases])
        if split == "test":
            test_vectors[name] = vectors
        print(f"{name} {split}: {len(cases)} questions", flush=True)

    if args.relations:
        for q, c in (("de", "ru"), ("ru", "de")):
            whole = external_set(
                args.eval / f"xquad_{c}" / "docs.jsonl",
                [args.eval / f"xquad_{q}" / "questions.jsonl"],
                [],
                f"xquad_{q}_{c}",
                ((f"xquad-{q}-", f"xquad-{c}-"),),
            )
            _, owners[whole.name] = corpus_owner(db, settings, embedder, whole)
            for s in ("dev", "test"):
                add(
                    whole.name,
                    s,
                    [x for x in whole.cases if split_of(x.id) == s],
                    owners[whole.name],
                )
        shipped_set: EvalSet = regression_set()
        _, owners["regression"] = corpus_owner(db, settings, embedder, shipped_set)
        add("regression", "test", shipped_set.cases, owners["regression"])
        relations_main(args, db, settings, embedder, sets, owners, test_vectors)
        return
    for name in ("ctkfacts", "xquad_de", "xquad_ru"):
        folder = args.eval / name
        if name == "ctkfacts":
            files = {s: [folder / f"questions_{s}.jsonl"] for s in ("dev", "test")}
            whole = external_set(folder / "docs.jsonl", files["dev"] + files["test"], [], name)
            split = {
                s: [c for c in external_set(folder / "docs.jsonl", f, [], name).cases]
                for s, f in files.items()
            }
        else:
            whole = external_set(folder / "docs.jsonl", [folder / "questions.jsonl"], [], name)
            split = {s: [c for c in whole.cases if half(c) == s] for s in ("dev", "test")}
        _, owner_id = corpus_owner(db, settings, embedder, whole)
        owners[name] = owner_id
        for s, cases in split.items():
            add(name, s, cases, owner_id)

    shipped = Fusion(settings.rrf_k, settings.rrf_weight_fts, settings.rrf_weight_vector, 50)
    chosen, mean = choose(list(sets["dev"].values()), grid())
    print(f"\nchosen on dev: {chosen.as_dict()} (mean MRR@10 {mean:.3f})")
    report: dict[str, dict[str, dict[str, float]]] = {}
    for s in ("dev", "test"):
        print(f"\n{s:<5} {'set':<10} {'list':<28} hit@1  hit@5  MRR@10")
        for name, sc in sets[s].items():
            rows = {
                "full text": metrics(
                    [single(r.candidates, "fts", 50) for r in sc.retrievals], sc.gold
                ),
                "vector": metrics(
                    [single(r.candidates, "vector", 50) for r in sc.retrievals], sc.gold
                ),
                "hybrid, k 60 equal weights": sc.hybrid(shipped),
                "hybrid, chosen": sc.hybrid(chosen),
            }
            report.setdefault(s, {})[name] = rows["hybrid, chosen"]
            for label, m in rows.items():
                print(
                    f"      {name:<10} {label:<28} {m['hit@1']:.3f}  {m['hit@5']:.3f}  {m['mrr@10']:.3f}"
                )
    # the fused SQL must order as fuse() does: check it on the first test questions of each set
    check = settings.replace(**chosen.as_dict())
    differ = 0
    for name, sc in sets["test"].items():
        for r, v in list(zip(sc.retrievals, test_vectors[name], strict=True))[:100]:
            again = retrieve(db, check, embedder, owners[name], r.question, vector=v)
            want = [c.chunk_id for c in fuse(r.candidates, chosen)][:10]
            differ += want != [c.chunk_id for c in again.candidates][:10]
    print(f"\nSQL fusion with the chosen setting vs fuse(): {differ} of 300 top-10 lists differ")
    if args.write:
        path = SHIPPED_DIR / f"{slug(embedder.model_id)}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["fusion"] = {
            **chosen.as_dict(),
            "created": dt.date.today().isoformat(),
            "set": "ctkfacts dev, xquad_de and xquad_ru dev halves (bench/bench_fusion.py)",
            "selection": "best mean MRR@10 among settings at least as good as the better single "
            "list on hit@1 and MRR@10 in every dev set",
            "test": {n: {k: round(v, 3) for k, v in m.items()} for n, m in report["test"].items()},
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote the fusion section of {path}")
    db.close()


def relations_main(
    args: argparse.Namespace,
    db: Database,
    settings: Settings,
    embedder: object,
    sets: dict[str, dict[str, SetScores]],
    owners: dict[str, int],
    test_vectors: dict[str, np.ndarray],
) -> None:
    """Choose the other-language relation's fusion on the pairs' dev halves; report test."""
    model_id = embedder.model_id  # type: ignore[attr-defined]
    p = fusion_settings(settings, model_id)
    default = Fusion(p.rrf_k, p.rrf_weight_fts, p.rrf_weight_vector, p.candidates)
    chosen, mean = choose(list(sets["dev"].values()), grid(weights=OTHER_WEIGHTS))
    print(f"\nprofile's fusion: {default.as_dict()}")
    print(f"chosen for {OTHER} on dev: {chosen.as_dict()} (mean MRR@10 {mean:.3f})")
    report: dict[str, dict[str, dict[str, float]]] = {}
    for s in ("dev", "test"):
        print(f"\n{s:<5} {'set':<12} {'list':<26} hit@1  hit@5  MRR@10")
        for name, sc in sets[s].items():
            rows = {
                "full text": metrics(
                    [single(r.candidates, "fts", DEPTH) for r in sc.retrievals], sc.gold
                ),
                "vector": metrics(
                    [single(r.candidates, "vector", DEPTH) for r in sc.retrievals], sc.gold
                ),
                "hybrid, profile's fusion": sc.hybrid(default),
                "hybrid, chosen for other": sc.hybrid(chosen),
            }
            report.setdefault(s, {})[name] = rows["hybrid, chosen for other"]
            for label, m in rows.items():
                print(
                    f"      {name:<12} {label:<26} "
                    f"{m['hit@1']:.3f}  {m['hit@5']:.3f}  {m['mrr@10']:.3f}"
                )
    # the SQL with the relation's knobs must order as fuse() does
    differ = checked = 0
    for name, sc in sets["test"].items():
        for r, v in list(zip(sc.retrievals, test_vectors[name], strict=True))[:100]:
            again = retrieve(
                db,
                settings,
                embedder,
                owners[name],
                r.question,
                vector=v,  # type: ignore[arg-type]
                fusion={OTHER: chosen.as_dict()},
            )
            want = [c.chunk_id for c in fuse(r.candidates, chosen)][:10]
            differ += want != [c.chunk_id for c in again.candidates][:10]
            checked += 1
    print(f"\nSQL fusion for {OTHER} vs fuse(): {differ} of {checked} top-10 lists differ")
    if args.write:
        path = SHIPPED_DIR / f"{slug(model_id)}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        entry = data.setdefault("relations", {}).setdefault(OTHER, {"params": {}})
        entry["fusion"] = {
            **chosen.as_dict(),
            "created": dt.date.today().isoformat(),
            "set": "XQuAD German questions over the Russian paragraphs and Russian over German, "
            "dev halves (bench/bench_fusion.py --relations)",
            "selection": "best mean MRR@10 among settings at least as good as the better single "
            "list on hit@1 and MRR@10 in both dev sets",
            "test": {n: {k: round(v, 3) for k, v in m.items()} for n, m in report["test"].items()},
        }
        path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote relations.{OTHER}.fusion of {path}")
    db.close()


if __name__ == "__main__":
    main()
