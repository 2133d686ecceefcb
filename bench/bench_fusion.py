"""Calibrate RRF fusion (k, the vector list's weight, the depth) for the configured embedder.

    RAG_EMBED_CACHE=... python bench/bench_fusion.py [--eval ../shared/eval] [--write]

Tunes on dev questions, reports on test questions: ctkfacts has dev and test files; the xquad
sets have one file each, split by their gold paragraph (sha1 of its id, even: dev, odd: test),
so that no paragraph's questions are in both halves. Each set is retrieved once per split with
lists of the grid's deepest depth; every setting of :func:`rag.search.fusion.grid` is scored by fusing
those lists again (:func:`rag.search.fusion.fuse`, the SQL's arithmetic). Prints hit@1, hit@5 and
MRR@10 of full text, vector, the settings' fusion and the chosen one on dev and test; with
--write, stores the chosen setting as the "fusion" section of the model's shipped profile.
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
from rag.eval.sets import Case, corpus_owner, external_set
from rag.search.fusion import Fusion, SetScores, choose, fuse, grid, metrics, single
from rag.search.profiles import SHIPPED_DIR, slug
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
            sets[s][name] = SetScores(name, retrievals, [set(c.expect) for c in cases])
            if s == "test":
                test_vectors[name] = vectors
            print(f"{name} {s}: {len(cases)} questions", flush=True)

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


if __name__ == "__main__":
    main()
