"""Throughput of rag.language.keys.chunk_keys on Czech text, cold and warm, beside two baselines.

Usage:
    python bench/bench_keys.py /work/shared/eval/ctkfacts/docs.jsonl [more.jsonl ...]

Reads the "text" field (or "question") of each JSON line, or whole plain-text files. The texts
are repeated until the workload holds --min-tokens word tokens. Runs on one core.

Rows:
    split         text.lower().split(): the floor any tokenizer pays
    prefix-only   the retired keys: 4-character unaccented prefixes of every word
    keys cold     chunk_keys with every cache empty (the lemmatizer dictionary already loaded);
                  its first pass over distinct text is reported separately
    keys warm     chunk_keys again over the same workload
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import simplemma
from unidecode import unidecode

from rag.language import keys as text

TARGET = 50_000  # tokens per second on one core


def read_texts(paths: Iterable[Path]) -> list[str]:
    """Texts from JSONL files ("text" or "question" field) or plain-text files."""
    texts: list[str] = []
    for path in paths:
        if path.suffix != ".jsonl":
            texts.append(path.read_text(encoding="utf-8"))
            continue
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    row = json.loads(line)
                    texts.append(row.get("text") or row.get("question") or "")
    return [t for t in texts if t.strip()]


def prefix_only_keys(sample: str) -> str:
    """The retired 4-character prefix keys, as a tsvector literal."""
    positions: dict[str, list[int]] = {}
    for i, word in enumerate(re.findall(r"\w+", sample), 1):
        positions.setdefault(unidecode(word.lower())[:4], []).append(i)
    return " ".join(f"'{k}':{','.join(map(str, p))}" for k, p in sorted(positions.items()))


def clear_caches() -> None:
    """Empty rag.language.keys's caches and simplemma's per-token cache (not its dictionaries)."""
    for cached in (text._word, text._chunk_entries, text._unaccent_word, text._stopword_forms):
        cached.cache_clear()
    legacy = getattr(simplemma.lemmatizer, "_legacy_lemmatizer_for", None)
    if legacy is not None:
        legacy(False, False)._cached_lemmatize.cache_clear()


def timed(run: Callable[[list[str]], object], texts: list[str]) -> float:
    """CPU seconds of ``run(texts)``: other processes on a busy machine do not count."""
    start = time.process_time()
    run(texts)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--lang", default="cs")
    parser.add_argument("--min-tokens", type=int, default=200_000)
    args = parser.parse_args(argv)

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    distinct = read_texts(args.paths)
    if not distinct:
        print("no text found", file=sys.stderr)
        return 1
    distinct_tokens = sum(len(text.tokenize(t)) for t in distinct)
    workload = list(distinct)
    tokens = distinct_tokens
    while tokens < args.min_tokens:
        workload.extend(distinct)
        tokens += distinct_tokens
    types = len({w for t in distinct for w in text.tokenize(t)})

    start = time.perf_counter()
    simplemma.lemmatize("pes", args.lang)
    load = time.perf_counter() - start

    def keys(texts: list[str]) -> None:
        for t in texts:
            text.chunk_keys(t, args.lang)

    rows: list[tuple[str, int, float]] = [
        ("split", tokens, timed(lambda ts: [t.lower().split() for t in ts], workload)),
        ("prefix-only", tokens, timed(lambda ts: [prefix_only_keys(t) for t in ts], workload)),
    ]
    clear_caches()
    first = timed(keys, distinct)
    rest = timed(keys, workload[len(distinct) :])
    rows.append(("keys cold, distinct text", distinct_tokens, first))
    rows.append(("keys cold, whole workload", tokens, first + rest))
    rows.append(("keys warm", tokens, timed(keys, workload)))

    print(f"workload: {tokens:,} tokens ({distinct_tokens:,} distinct-text tokens, {types:,} word")
    print(f"types) from {len(distinct):,} texts; lemmatizer dictionary load {load:.2f} s (once)")
    print(f"{'run':<28}{'tokens':>10}{'CPU s':>10}{'tokens/s':>12}")
    for name, count, seconds in rows:
        print(f"{name:<28}{count:>10,}{seconds:>10.2f}{count / seconds:>12,.0f}")
    # The strict reading of the target: every word seen for the first time.
    cold = distinct_tokens / first
    verdict = "meets" if cold >= TARGET else "misses"
    print(f"cold, distinct text: {cold:,.0f} tokens/s, {verdict} the target of {TARGET:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
