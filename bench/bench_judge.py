"""Judging alone: the relevance filter over retrievals built once, against a baseline revision.

    python bench/bench_judge.py [--baseline REV] [--rounds 5] [--profile]
        [--corpus DOCS.jsonl --questions Q.jsonl --noanswer N.jsonl]

Builds one retrieval per question of a set (the shipped regression set over rag/sample by
default, or an external set as `rag eval` takes it) through `rag eval`'s own code, then times
:func:`rag.answer.engine.judged` over all of them as a live search calls it (``complete=False``),
and as evaluation does (``complete=True``). ``--baseline`` loads rag/search/relevance.py of that
git revision (and the answerability stage it calls) beside this tree's and alternates the two round by round, in one process over the
same retrievals; every judgement of both is compared (0 differences expected). ``--profile``
prints a cProfile of this tree's live judging instead. Uses RAG_DATA_DIR and RAG_EMBED_CACHE.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.answer import engine as engine_module  # noqa: E402
from rag.search import relevance  # noqa: E402


def _module(rev: str, path: str, name: str, replace: tuple[str, str] = ("", "")) -> ModuleType:
    """The file ``path`` as it was at ``rev``, loaded as the module ``name``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    file = Path(tempfile.mkdtemp()) / f"{name}.py"
    file.write_text(source.replace(*replace))
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def baseline_relevance(rev: str) -> ModuleType:
    """The relevance filter and the answerability stage as they were at ``rev``, loaded beside
    this tree's (the rest of rag, this tree's: the two must agree on Sentence)."""
    _module(rev, "rag/search/answerability.py", "baseline_answerability")
    imports = ("from rag.search.answerability import", "from baseline_answerability import")
    return _module(rev, "rag/search/relevance.py", "baseline_relevance", imports)


def retrievals(args: argparse.Namespace) -> tuple[Any, Any, list[Any]]:
    """The app (its database open), the engine and one retrieval per case, as `rag eval`
    builds them."""
    from rag.cli.common import App
    from rag.cli.evaluation import retrieved_set
    from rag.settings import Settings

    app = App(Settings.from_env())
    opts = {
        "set_path": None,
        "corpus": args.corpus,
        "questions": tuple(args.questions),
        "noanswer": tuple(args.noanswer),
        "name": None,
        "gold_map": (),
        "split": None,
        "tag_by": None,
        "answer_field": None,
        "withhold": None,
        "owner": None,
        "profile": None,
    }
    _, engine, _, found = retrieved_set(app, opts, use_profile=True, progress=False)
    return app, engine, found


def judge_all(module: ModuleType, engine: Any, found: list[Any], complete: bool) -> list[Any]:
    """Every retrieval judged by ``module``'s judge, as rag.answer.engine.judged calls it."""
    engine_module.judge = module.judge  # judged() calls the name it imported
    return [engine_module.judged(r, engine.thresholds, complete=complete)[0] for r in found]


def timed(module: ModuleType, engine: Any, found: list[Any], complete: bool) -> float:
    """Milliseconds per retrieval for one pass over all of them."""
    gc.collect()
    start = time.perf_counter()
    judge_all(module, engine, found, complete)
    return (time.perf_counter() - start) * 1000 / len(found)


def verdicts(hits: list[list[Any]]) -> list[list[dict[str, Any]]]:
    return [[{"passed": h.judgement.passed, **h.judgement.as_dict()} for h in hs] for hs in hits]


def main() -> None:
    """Parse the options, build the retrievals and run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--questions", type=Path, action="append", default=[])
    ap.add_argument("--noanswer", type=Path, action="append", default=[])
    args = ap.parse_args()
    app, engine, found = retrievals(args)
    try:
        run(args, engine, found)
    finally:
        app.close()


def run(args: argparse.Namespace, engine: Any, found: list[Any]) -> None:
    candidates = sum(len(r.candidates) for r in found)
    print(f"{len(found)} retrievals, {candidates / len(found):.1f} candidates each")
    judge_all(relevance, engine, found, True)  # sentences decoded and cached outside the timing
    if args.profile:
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        judge_all(relevance, engine, found, False)
        prof.disable()
        stats = pstats.Stats(prof)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(30)
        return
    trees = [("this tree", relevance)]
    if args.baseline:
        base = baseline_relevance(args.baseline)
        trees.insert(0, (args.baseline, base))
        for complete in (False, True):
            old, new = (verdicts(judge_all(m, engine, found, complete)) for _, m in trees)
            diff = sum(a != b for a, b in zip(old, new, strict=True))
            print(f"complete={complete}: {diff} of {len(found)} retrievals judged differently")
    for complete in (False, True):
        ms: dict[str, list[float]] = {name: [] for name, _ in trees}
        for _ in range(args.rounds):
            for name, module in trees:
                ms[name].append(timed(module, engine, found, complete))
        first = statistics.median(ms[trees[0][0]])
        label = "live search (complete=False)" if not complete else "evaluation (complete=True)"
        print(f"{label}, ms per retrieval, {args.rounds} rounds alternated")
        for name, _ in trees:
            mid = statistics.median(ms[name])
            rounds = ", ".join(f"{m:.2f}" for m in ms[name])
            print(f"  {name:<12} median {mid:7.3f} ({mid / first:.2f}x)  rounds {rounds}")


if __name__ == "__main__":
    main()
