"""The HTTP service for real (uvicorn on loopback): health, docs, documents, API keys, rag serve.

Answers (ask, streaming, the OpenAI-compatible endpoint, the LLM, follow-ups) are in
test_api_answers.py, errors and limits in test_api_errors.py. Each service has a database of its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rag.api.app import STATIC_DIR
from rag.api.auth import Caller, create_key, revoke_key
from rag.db import Database
from rag.store import find_owner
from tests.apiserver import LiveServer, api_settings, assert_problem, new_database
from tests.test_loaders import make_docx, make_pdf

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def docs(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A service on an empty database, default limits."""
    url = new_database(server_url, "rag_api_docs")
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("docs")))
    yield server
    server.close()


# --- health and documentation -----------------------------------------------------------------


def test_health_and_readiness(docs: LiveServer) -> None:
    assert docs.client.get("/healthz").json() == {"status": "ok"}
    ready = docs.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "embedder": "ok"},
    }


def test_openapi_schema_and_docs_page(docs: LiveServer) -> None:
    schema = docs.client.get("/schema/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/healthz",
        "/readyz",
        "/v1/search",
        "/v1/ask",
        "/v1/chat/completions",
        "/v1/models",
        "/v1/documents",
        "/v1/documents/{ref}",
        "/v1/stats",
    ):
        assert path in paths, sorted(paths)
    body = paths["/v1/documents"]["post"]["requestBody"]["content"]
    assert {"application/json", "multipart/form-data"} <= set(body)
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    page = docs.client.get("/schema")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_root_serves_the_chat_page_when_installed(
    docs: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("rag.api.app.STATIC_DIR", tmp_path)
    assert docs.client.get("/").json()["docs"] == "/schema"  # no page: where the docs are
    (tmp_path / "index.html").write_text("<!doctype html><title>rag</title>", encoding="utf-8")
    r = docs.client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert r.text == "<!doctype html><title>rag</title>"
    assert STATIC_DIR.name == "static" and STATIC_DIR.parent.name == "rag"


# --- documents -------------------------------------------------------------------------------


def test_json_document_is_idempotent_and_replaced_in_place(docs: LiveServer) -> None:
    doc = {
        "source_id": "provoz/recepce.md",
        "title": "Recepce",
        "text": "Recepce ve Zlíně je otevřená od sedmi do sedmnácti hodin.",
        "metadata": {"team": "provoz"},
    }
    first = docs.client.post("/v1/documents", json=doc)
    assert first.status_code == 201 and first.json()["added"] == 1
    doc_id = first.json()["documents"][0]["document_id"]
    again = docs.client.post("/v1/documents", json=doc)
    assert again.status_code == 200 and again.json()["unchanged"] == 1
    changed = docs.client.post(
        "/v1/documents", json={**doc, "text": doc["text"] + " V pátek do poledne."}
    )
    assert changed.status_code == 201 and changed.json()["replaced"] == 1
    assert changed.json()["documents"][0]["document_id"] == doc_id
    shown = docs.client.get("/v1/documents/provoz/recepce.md").json()  # a source_id with a slash
    assert shown["document_id"] == doc_id and shown["title"] == "Recepce"
    assert shown["metadata"] == {"team": "provoz"} and shown["chunks"] == 1
    assert docs.client.get(f"/v1/documents/{doc_id}").json()["source_id"] == "provoz/recepce.md"
    hits = docs.client.post("/v1/search", json={"question": "Do kdy je recepce v pátek otevřená?"})
    assert "V pátek do poledne" in hits.json()["hits"][0]["text"]


def test_documents_are_listed_page_by_page(docs: LiveServer) -> None:
    for i in range(5):
        r = docs.client.post(
            "/v1/documents",
            json={"source_id": f"strana-{i}", "text": f"Stránka číslo {i} seznamu dokumentů."},
        )
        assert r.status_code == 201
    seen: list[str] = []
    after = 0
    while True:
        page = docs.client.get("/v1/documents", params={"after": after, "limit": 2}).json()
        seen += [d["source_id"] for d in page["documents"]]
        assert len(page["documents"]) <= 2
        if page["next_after"] is None:
            break
        after = page["next_after"]
    assert [s for s in seen if s.startswith("strana-")] == [f"strana-{i}" for i in range(5)]
    ids = [
        d["document_id"]
        for d in docs.client.get("/v1/documents", params={"limit": 1000}).json()["documents"]
    ]
    assert ids == sorted(ids) and len(ids) == len(seen)


def test_delete_removes_the_document_and_its_chunks(docs: LiveServer) -> None:
    r = docs.client.post(
        "/v1/documents",
        json={"source_id": "smazat", "text": "Dočasný záznam o kopírce Xerox 7855."},
    )
    doc_id = r.json()["documents"][0]["document_id"]
    before = docs.client.get("/v1/stats").json()
    gone = docs.client.delete(f"/v1/documents/{doc_id}")
    assert gone.status_code == 200 and gone.json() == {
        "deleted": {"document_id": doc_id, "source_id": "smazat"}
    }
    assert_problem(docs.client.get(f"/v1/documents/{doc_id}"), 404, "not-found")
    assert_problem(docs.client.delete("/v1/documents/smazat"), 404, "not-found")
    after = docs.client.get("/v1/stats").json()
    assert after["documents"] == before["documents"] - 1 and after["chunks"] == before["chunks"] - 1


def test_stats(docs: LiveServer) -> None:
    s = docs.wait_embedded()
    listed = docs.client.get("/v1/documents", params={"limit": 1000}).json()["documents"]
    assert s["owner"] == "default" and s["documents"] == len(listed) > 0
    assert s["chunks"] == sum(d["chunks"] for d in listed)
    assert s["unembedded"] == 0 and s["models"] == {"fake/64": s["chunks"]}
    assert s["embedder"] == "fake/64" and s["llm"] is None
    progress = s["embedding"]
    assert (
        progress["model"] == "fake/64" and progress["embedded"] == progress["total"] == s["chunks"]
    )
    assert (
        progress["workers"] == 1 and progress["error"] is None and progress["eta_seconds"] is None
    )


UPLOADS = {
    "txt": ("porada.txt", "Porada vedení se koná každé úterý v zasedačce Orion.".encode(), None),
    "md": (
        "zasady.md",
        "# Zásady skladu\n\nPalety se skládají nejvýše do tří vrstev.".encode(),
        "Zásady skladu",
    ),
    "html": (
        "jidelna.html",
        "<html><head><title>Jídelna</title></head><body><p>Jídelna vaří "
        "polévku z dýně každý čtvrtek.</p></body></html>".encode(),
        "Jídelna",
    ),
    "pdf": (
        "smlouva.pdf",
        make_pdf([["Smlouva o pronajmu haly B plati do roku 2031."]], title="Smlouva"),
        "Smlouva",
    ),
    "docx": ("rad.docx", make_docx(), "Provozní řád"),
}


@pytest.mark.parametrize("fmt", sorted(UPLOADS))
def test_upload_each_format(docs: LiveServer, fmt: str) -> None:
    name, data, title = UPLOADS[fmt]
    r = docs.client.post("/v1/documents", files={"file": (name, data)})
    assert r.status_code == 201, r.text
    shown = docs.client.get(f"/v1/documents/{name}").json()
    assert shown["title"] == title and shown["metadata"] == {"format": fmt} and shown["chunks"] >= 1


def test_upload_with_explicit_source_id_title_and_language(docs: LiveServer) -> None:
    r = docs.client.post(
        "/v1/documents",
        files={"file": ("x.txt", "Der Aufzug ist am Montag außer Betrieb.".encode())},
        data={"source_id": "aufzug", "title": "Aufzug", "lang": "DE"},
    )
    assert r.status_code == 201, r.text
    shown = docs.client.get("/v1/documents/aufzug").json()
    assert (shown["title"], shown["lang"]) == ("Aufzug", "de")


def test_upload_jsonl_adds_each_line_and_reports_bad_ones(docs: LiveServer) -> None:
    lines = [
        '{"id": "rec-a", "text": "Klíče od garáže má vrátný Horák.", "title": "Garáž"}',
        '{"id": "rec-b", "text": "Tiskárna ve druhém patře tiskne jen černobíle."}',
        '{"id": 7, "text": "bez platného id"}',
    ]
    r = docs.client.post(
        "/v1/documents", files={"file": ("zaznamy.jsonl", "\n".join(lines).encode())}
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["added"] == 2 and body["failed"] == 1
    assert body["failures"][0]["origin"] == "zaznamy.jsonl:3"
    assert docs.client.get("/v1/documents/rec-a").json()["title"] == "Garáž"


# --- API keys -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    url = new_database(server_url, "rag_api_keys")
    settings = api_settings(url, tmp_path_factory.mktemp("keyed"))
    with Database(settings, run_migrations=False) as db, db.connection() as conn:
        tokens = {"alice": create_key(conn, "alice").token, "bob": create_key(conn, "bob").token}
        revoked = create_key(conn, "alice", "old laptop")
        revoke_key(conn, revoked.key_id)
        tokens["revoked"] = revoked.token
    server = LiveServer.start(settings)
    yield server, tokens
    server.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ({}, "requires an API key"),
        ({"Authorization": "Bearer rag_wrong"}, "unknown API key"),
        ({"Authorization": "Basic YTpi"}, "Bearer"),
        ("revoked", "revoked"),
    ],
)
def test_requests_without_a_valid_key_are_401(
    keyed: tuple[LiveServer, dict[str, str]], headers: Any, detail: str
) -> None:
    server, tokens = keyed
    if headers == "revoked":
        headers = bearer(tokens["revoked"])
    for method, path in (("GET", "/v1/documents"), ("POST", "/v1/ask"), ("GET", "/v1/stats")):
        r = server.client.request(method, path, headers=headers, json={"question": "Kde?"})
        problem = assert_problem(r, 401, "unauthorized")
        assert detail in problem["detail"]
        assert r.headers["www-authenticate"].startswith("Bearer")
    assert server.client.get("/healthz").status_code == 200  # probes need no key
    assert server.client.get("/readyz").status_code == 200


def test_keys_keep_owners_apart(keyed: tuple[LiveServer, dict[str, str]]) -> None:
    server, tokens = keyed
    alice, bob = bearer(tokens["alice"]), bearer(tokens["bob"])
    r = server.client.post(
        "/v1/documents",
        headers=alice,
        json={"source_id": "trezor", "text": "Kód trezoru v kanceláři 12 zná jen účetní Vlasta."},
    )
    doc_id = r.json()["documents"][0]["document_id"]
    server.client.post(
        "/v1/documents",
        headers=bob,
        json={"source_id": "kolo", "text": "Služební kolo stojí v kóji u výtahu."},
    )
    assert [
        d["source_id"]
        for d in server.client.get("/v1/documents", headers=alice).json()["documents"]
    ] == ["trezor"]
    assert [
        d["source_id"] for d in server.client.get("/v1/documents", headers=bob).json()["documents"]
    ] == ["kolo"]
    assert_problem(server.client.get(f"/v1/documents/{doc_id}", headers=bob), 404, "not-found")
    assert_problem(server.client.delete(f"/v1/documents/{doc_id}", headers=bob), 404, "not-found")
    question = {"question": "Kdo zná kód trezoru?"}
    assert (
        server.client.post("/v1/ask", headers=alice, json=question).json()["status"] == "answered"
    )
    assert server.client.post("/v1/ask", headers=bob, json=question).json()["status"] == "not_found"
    assert server.client.get("/v1/stats", headers=bob).json()["documents"] == 1


def test_the_services_connections_see_only_the_callers_rows(
    keyed: tuple[LiveServer, dict[str, str]],
) -> None:
    server, tokens = keyed
    caller = server.services.authenticate(tokens["bob"])
    with server.services.database.connection() as conn:
        assert find_owner(conn, "alice") is not None
        total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    with server.services.scoped(caller).connection() as conn:
        rows = conn.execute("SELECT owner_id, text FROM chunks").fetchall()  # no WHERE on purpose
    assert rows and {r[0] for r in rows} == {caller.owner_id} and len(rows) < total
    assert caller == Caller(caller.owner_id, "bob", caller.key_id)


# --- rag serve ----------------------------------------------------------------------------------


def _serve(env: dict[str, str], timeout: float) -> tuple[subprocess.Popen[str], str]:
    """``rag serve --port 0`` in a child process, with ``env`` over (a copy of) this one's."""
    child_env = {
        k: v for k, v in os.environ.items() if not k.startswith("RAG_") and k != "DATABASE_URL"
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", "from rag.cli.main import main; main()", "serve", "--port", "0"],
        cwd=REPO,
        env={**child_env, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if m := re.search(r"serving on (http://\S+)", line):
                found.append(m.group(1))
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not found:
        proc.kill()
        raise AssertionError(f"rag serve printed no URL: {proc.communicate()[1][-2000:]}")
    return proc, found[0]


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err


def test_rag_serve_prints_its_url_and_shuts_down_on_sigterm(
    server_url: str, tmp_path: Path
) -> None:
    url = new_database(server_url, "rag_api_serve")
    env = {
        "DATABASE_URL": url,
        "RAG_DATA_DIR": str(tmp_path),
        "RAG_EMBEDDER": "fake",
        "RAG_EMBED_DIM": "64",
    }
    proc, base = _serve(env, timeout=60)
    try:
        assert base.startswith("http://127.0.0.1:")
        assert httpx.get(base + "/healthz", timeout=10).json() == {"status": "ok"}
        r = httpx.post(
            base + "/v1/documents",
            timeout=30,
            json={"source_id": "a", "text": "Služební auto parkuje ve dvoře."},
        )
        assert r.status_code == 201
    finally:
        code, err = _stop(proc)
    assert code == 128 + signal.SIGTERM, err
    assert "Traceback" not in err


@pytest.mark.slow
def test_rag_serve_releases_the_embedded_postgres_on_sigterm(tmp_path: Path) -> None:
    # No DATABASE_URL: the service starts an embedded PostgreSQL in its data directory.
    env = {"RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDER": "fake", "RAG_EMBED_DIM": "64"}
    proc, base = _serve(env, timeout=180)
    pidfile = tmp_path / "pg" / "postmaster.pid"
    try:
        assert pidfile.exists()  # the service started its own PostgreSQL
        assert httpx.get(base + "/readyz", timeout=30).status_code == 200
    finally:
        code, err = _stop(proc)
    assert code == 128 + signal.SIGTERM, err
    deadline = time.monotonic() + 30
    while pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not pidfile.exists(), "the embedded PostgreSQL was left running"


@pytest.mark.parametrize("warm", [True, False])
def test_the_service_loads_every_lemma_dictionary_at_start(
    server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    warm: bool,
) -> None:
    """A question that names a German or Polish thing would otherwise load that language's
    dictionary (seconds) while its asker waits; RAG_WARM_DICTIONARIES=false leaves it so."""
    import rag.api.services as services
    from rag.language.lemmas import SUPPORTED_LANGS

    asked: list[tuple[str, ...]] = []
    loaded = threading.Event()

    def recording(langs: Any) -> None:
        asked.append(tuple(langs))
        loaded.set()

    monkeypatch.setattr(services, "load_dictionaries", recording)
    url = new_database(server_url, f"rag_api_warm_{int(warm)}")
    settings = api_settings(url, tmp_path_factory.mktemp("warm"), warm_dictionaries=warm)
    server = LiveServer.start(settings)
    try:
        server.wait_ready(timeout=30)
        assert loaded.wait(10 if warm else 0.5) == warm, asked
    finally:
        server.close()
    assert asked == ([tuple(SUPPORTED_LANGS)] if warm else [])


@pytest.mark.parametrize("warm", [True, False])
def test_the_service_settles_the_collector_once_start_up_has_loaded(
    server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    warm: bool,
) -> None:
    """RAG_GC_THRESHOLD reaches the collector after the dictionaries are in (or at once when
    they load on demand), with what start-up loaded frozen (rag.api.services.settle_collector)."""
    import rag.api.services as services

    order: list[str] = []
    settled: list[tuple[int, bool]] = []
    done = threading.Event()

    def settle(threshold: int, *, freeze: bool) -> None:
        order.append("settled")
        settled.append((threshold, freeze))
        done.set()

    monkeypatch.setattr(services, "load_dictionaries", lambda langs: order.append("loaded"))
    monkeypatch.setattr(services, "settle_collector", settle)
    url = new_database(server_url, f"rag_api_collector_{int(warm)}")
    settings = api_settings(
        url, tmp_path_factory.mktemp("collector"), warm_dictionaries=warm, gc_threshold=4321
    )
    server = LiveServer.start(settings)
    try:
        server.wait_ready(timeout=30)
        assert done.wait(10)
    finally:
        server.close()
    assert settled == [(4321, True)]
    assert order == (["loaded", "settled"] if warm else ["settled"])


@pytest.mark.parametrize("prewarm", [True, False])
def test_the_service_prewarms_shared_buffers_at_start_unless_told_not_to(
    server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    prewarm: bool,
) -> None:
    """A started server's first searches would copy every page they read into empty shared
    buffers (rag.search.prewarm); RAG_PREWARM_BUFFERS=false leaves them so."""
    import rag.api.services as services

    warmed = threading.Event()
    monkeypatch.setattr(services, "prewarm_logged", lambda db: warmed.set())
    url = new_database(server_url, f"rag_api_prewarm_{int(prewarm)}")
    settings = api_settings(url, tmp_path_factory.mktemp("prewarm"), prewarm_buffers=prewarm)
    server = LiveServer.start(settings)
    try:
        server.wait_ready(timeout=30)
        assert warmed.wait(10 if prewarm else 0.5) == prewarm
    finally:
        server.close()
