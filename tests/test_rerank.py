"""The reranking seam: re-orders the top fused candidates, fails open (error, timeout, bad scores)
with a ``degraded`` entry, is off by default, and makes its own calibration key.

No cross-encoder model can be installed offline here, so the service is tested with deterministic
fake rerankers; the CrossEncoder backend is tested up to loading its model, which fails open.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from rag.errors import ConfigError
from rag.search.profiles import filter_params
from rag.search.rerank import CrossEncoderReranker, make_reranker, pipeline_id, rerank_order
from rag.settings import Settings
from tests.apiserver import LiveServer, api_settings, new_database

DOCS = [
    {"source_id": f"kuchyn/recept-{i}", "text": text}
    for i, text in enumerate(
        [
            "Bramborová polévka: brambory, mrkev, celer a majoránka. Polévka se vaří hodinu.",
            "Česnečka je polévka z česneku, brambor a chleba. Polévka se podává horká.",
            "Gulášová polévka potřebuje hovězí maso, papriku a brambory. Polévka je sytá.",
            "Zelňačka je polévka z kysaného zelí a brambor. Polévka se zjemní smetanou.",
        ]
    )
]
QUESTION = "Jak se vaří polévka z brambor?"


class Favourite:
    """Scores a text by whether it holds ``word``; records what it was asked."""

    model_id = "fake-favourite"

    def __init__(self, word: str) -> None:
        self.word = word
        self.calls: list[tuple[str, list[str]]] = []

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((question, list(texts)))
        return [1.0 if self.word in t else 0.0 for t in texts]


class Broken:
    model_id = "fake-broken"

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        raise RuntimeError("the reranking model is not loaded")


class Slow:
    model_id = "fake-slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.released = threading.Event()

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        self.released.wait(self.seconds)
        return [0.0] * len(texts)


class Short:
    model_id = "fake-short"

    def score(self, question: str, texts: Sequence[str]) -> list[float]:
        return [1.0]


# --- the stage on its own ------------------------------------------------------------------------


def test_rerank_order_puts_the_best_first_and_keeps_ties_in_fused_order() -> None:
    texts = ["a", "b zelí", "c", "d zelí"]
    order, scores, why, _ = rerank_order(Favourite("zelí"), "q", texts, timeout=5)
    assert why is None and order == [1, 3, 0, 2] and scores == [0.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize(
    ("reranker", "reason", "message"),
    [
        (Broken(), "error", "not loaded"),
        (Short(), "error", "1 scores for 3 texts"),
        (Slow(5.0), "timeout", "longer than 0.2 s"),
    ],
)
def test_a_failing_reranker_gives_no_order_and_says_why(
    reranker: Any, reason: str, message: str
) -> None:
    started = time.monotonic()
    order, _, why, _ = rerank_order(reranker, "q", ["a", "b", "c"], timeout=0.2)
    waited = time.monotonic() - started
    if isinstance(reranker, Slow):
        reranker.released.set()
    assert order is None and why is not None, why
    assert why["component"] == "rerank" and why["reason"] == reason and message in why["message"]
    assert waited < 4, f"the stage waited {waited:.1f} s for a reranker with a 0.2 s limit"


def test_reranking_is_off_by_default_and_the_backend_needs_a_model() -> None:
    assert make_reranker(Settings()) is None
    with pytest.raises(ConfigError, match="RAG_RERANK_MODEL"):
        make_reranker(Settings(rerank="cross-encoder"))
    with pytest.raises(ConfigError, match="Unsupported rerank: bm25"):
        Settings(rerank="bm25")
    backend = make_reranker(Settings(rerank="cross-encoder", rerank_model="/nonexistent/model"))
    assert isinstance(backend, CrossEncoderReranker)
    assert backend.model_id == "cross-encoder:/nonexistent/model"


def test_a_cross_encoder_that_cannot_load_its_model_fails_open() -> None:
    pytest.importorskip("sentence_transformers")
    backend = CrossEncoderReranker("/nonexistent/cross-encoder")
    order, _, why, _ = rerank_order(backend, "q", ["a", "b"], timeout=60)
    assert order is None and why is not None and why["reason"] == "error", why


def test_a_reranked_pipeline_is_calibrated_as_its_own_model_setting(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    model = "fake/64"
    reranker = Favourite("x")
    key = pipeline_id(model, reranker)
    assert key == "fake/64+rerank=fake-favourite" and pipeline_id(model, None) == model
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "fake_64.json").write_text(
        json.dumps({"model_id": model, "params": {"min_coverage": 0.61}})
    )
    # without a profile of its own, the pipeline uses the embedding model's
    params, path = filter_params(settings, model, reranker=reranker)
    assert path == profiles / "fake_64.json" and params.min_coverage == 0.61
    (profiles / "fake_64_rerank_fake-favourite.json").write_text(
        json.dumps({"model_id": key, "params": {"min_coverage": 0.72}})
    )
    params, path = filter_params(settings, model, reranker=reranker)
    assert path is not None and path.name == "fake_64_rerank_fake-favourite.json"
    assert params.min_coverage == 0.72
    plain, _ = filter_params(settings, model)
    assert plain.min_coverage == 0.61


# --- through the service -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def url(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    url = new_database(server_url, "rag_rerank")
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("load")))
    try:
        for doc in DOCS:
            assert server.client.post("/v1/documents", json=doc).status_code in (200, 201)
        server.wait_embedded()
    finally:
        server.close()
    return url


@pytest.fixture
def serve(url: str, tmp_path: Path) -> Iterator[Any]:
    servers: list[LiveServer] = []

    def start(reranker: Any, **changes: Any) -> LiveServer:
        server = LiveServer.start(api_settings(url, tmp_path, **changes), reranker=reranker)
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.close()


def search(server: LiveServer) -> dict[str, Any]:
    r = server.client.post("/v1/search", json={"question": QUESTION, "limit": 20})
    assert r.status_code == 200, r.text
    return r.json()


def test_the_reranker_reorders_the_top_candidates(serve: Any) -> None:
    fused = search(serve(None))
    order = [h["source_id"] for h in fused["hits"]]
    assert len(order) >= 3 and fused["degraded"] == [] and "rerank" not in fused["timings_ms"]
    favourite = Favourite("zelí")
    reranked = search(serve(favourite))
    got = [h["source_id"] for h in reranked["hits"]]
    assert got[0] == "kuchyn/recept-3", got
    assert sorted(got) == sorted(order) and got[1:] == [s for s in order if s != got[0]]
    assert reranked["hits"][0]["evidence"]["rerank_score"] == 1.0
    assert "rerank" in reranked["timings_ms"] and reranked["degraded"] == []
    assert favourite.calls and favourite.calls[0][0] == QUESTION
    # the answer's sources are the admitted hits, in the reranked order
    answer = serve(favourite).client.post("/v1/ask", json={"question": QUESTION}).json()
    admitted = [h["chunk_id"] for h in reranked["hits"] if h["passed"]][:5]
    assert admitted and [s["chunk_id"] for s in answer["sources"]] == admitted, answer["sources"]


def test_only_the_top_candidates_are_reranked(serve: Any) -> None:
    favourite = Favourite("zelí")
    search(serve(favourite, rerank_top=2))
    assert favourite.calls and all(len(texts) == 2 for _, texts in favourite.calls)


@pytest.mark.parametrize("kind", ["error", "timeout"])
def test_a_failing_reranker_degrades_and_does_not_error(serve: Any, kind: str) -> None:
    fused = [h["source_id"] for h in search(serve(None))["hits"]]
    slow = Slow(10.0)
    server = serve(Broken() if kind == "error" else slow, rerank_timeout=0.3)
    try:
        result = search(server)
        assert [h["source_id"] for h in result["hits"]] == fused
        assert [d["component"] for d in result["degraded"]] == ["rerank"], result["degraded"]
        assert result["degraded"][0]["reason"] == kind
        r = server.client.post("/v1/ask", json={"question": QUESTION})
        assert r.status_code == 200 and r.json()["status"] == "answered", r.text
        assert any(d["component"] == "rerank" for d in r.json()["degraded"])
    finally:
        slow.released.set()
