"""Searches while ``rag serve``'s worker embeds a corpus, against the same searches after it.

Usage:
    python bench/bench_backfill.py PATH/TO/ctkfacts [--threads 0,1] [--data-dir DIR] [--pause 0.2]

For each RAG_EMBED_THREADS value of --threads, alternated in one run: a fresh data directory
(embedded PostgreSQL), ``rag ingest`` of ctkfacts' docs.jsonl (1,293 paragraphs, no vectors yet),
then ``rag serve`` with the default embedder. Once it is ready and its dictionaries are warm, one
client sends ``POST /v1/search`` with ctkfacts dev claims, one every --pause seconds, until
``/v1/stats`` counts every chunk embedded, then as many again. Prints, per setting, the searches'
p50 / p95 while the worker embeds and after, and how long the backfill took. RAG_EMBED_THREADS=0
(the default) gives the onnx backend's worker every core, niced; 1 gives it one.

--data-dir holds the onnx models (built there first unless present), so no run includes a build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.embedders import make_embedder  # noqa: E402
from rag.settings import Settings  # noqa: E402

RAG = [sys.executable, "-m", "rag.cli.main"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run(threads: str, docs: Path, claims: list[str], models: Path, base: Path, pause: float) -> str:
    data_dir = base / f"threads-{threads}"
    data_dir.mkdir()
    if (models / "onnx").exists():
        shutil.copytree(models / "onnx", data_dir / "onnx")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "DATABASE_URL"))}
    env.update(RAG_DATA_DIR=str(data_dir), RAG_PORT=str(port), RAG_EMBED_THREADS=threads)
    subprocess.run([*RAG, "ingest", str(docs)], env=env, cwd=ROOT, check=True, capture_output=True)
    url = f"http://127.0.0.1:{port}"

    def get(path: str) -> Any:
        with urllib.request.urlopen(url + path, timeout=30) as r:
            return json.load(r)

    def search(question: str) -> float:
        body = json.dumps({"question": question}).encode()
        request = urllib.request.Request(
            url + "/v1/search", body, {"content-type": "application/json"}
        )
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as r:
            r.read()
        return (time.perf_counter() - started) * 1000

    server = subprocess.Popen(
        [*RAG, "serve"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                get("/readyz")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("rag serve did not become ready") from None
                time.sleep(0.3)
        time.sleep(8)  # the dictionaries load in the background at start
        started = time.perf_counter()
        busy: list[float] = []
        while get("/v1/stats")["embedding"]["waiting"] > 0:
            busy.append(search(claims[len(busy) % len(claims)]))
            time.sleep(pause)
        backfill = time.perf_counter() - started
        idle = [search(claims[(len(busy) + i) % len(claims)]) for i in range(len(busy))]
    finally:
        server.terminate()
        server.wait(timeout=60)
    return (
        f"RAG_EMBED_THREADS={threads}: backfill {backfill:.1f} s after the start's warm-up; "
        f"{len(busy)} searches during it p50 {percentile(busy, 50):.0f} / p95 "
        f"{percentile(busy, 95):.0f} ms, after it p50 {percentile(idle, 50):.0f} / p95 "
        f"{percentile(idle, 95):.0f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ctkfacts", type=Path, help="directory with docs.jsonl, questions_dev.jsonl")
    ap.add_argument("--threads", default="0,1")
    ap.add_argument("--data-dir", type=Path, help="where the onnx models are built")
    ap.add_argument("--pause", type=float, default=0.2)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-backfill-"))
    models = args.data_dir or base / "models"
    make_embedder(Settings(data_dir=models)).embed(["warm-up"], kind="passage")  # the build
    with (args.ctkfacts / "questions_dev.jsonl").open(encoding="utf-8") as f:
        claims = [json.loads(line)["question"] for line in f][:400]
    try:
        print(f"load average at the start {os.getloadavg()[0]:.1f}")
        for threads in [t.strip() for t in args.threads.split(",") if t.strip()]:
            print(run(threads, args.ctkfacts / "docs.jsonl", claims, models, base, args.pause))
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
