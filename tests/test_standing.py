"""Superseded and stale documents through the real service and the CLI: a superseding upload hides
the old document from answers and search hits, a stale one ranks after fresh ones and says why,
and both show in the document listings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag.cli.main import cli
from tests.apiserver import LiveServer, api_settings, new_database

OLD = {
    "source_id": "smernice/cestovni-2023",
    "title": "Cestovní náhrady 2023",
    "text": "Stravné při pracovní cestě delší než dvanáct hodin činí 300 Kč za den. "
    "Směrnice platí od ledna 2023.",
}
NEW = {
    "source_id": "smernice/cestovni-2025",
    "title": "Cestovní náhrady 2025",
    "text": "Stravné při pracovní cestě delší než dvanáct hodin činí 420 Kč za den. "
    "Směrnice platí od ledna 2025.",
    "metadata": {"supersedes": "smernice/cestovni-2023"},
}
ASK_ALLOWANCE = "Kolik činí stravné při pracovní cestě?"
# The stale page matches the question far better than the fresh one.
STALE = {
    "source_id": "provoz/parkovani-2019",
    "text": "Parkování zaměstnanců: zaměstnanci parkují v garáži pod budovou. Parkování v garáži "
    "je pro zaměstnance zdarma, parkovací karty zaměstnancům vydává recepce.",
    "metadata": {"status": "stale"},
}
FRESH = {
    "source_id": "provoz/parkovani-2026",
    "text": "Parkování zaměstnanců se přesunulo na parkoviště u severní brány.",
}
ASK_PARKING = "Kde je parkování zaměstnanců?"


@pytest.fixture(scope="module")
def url(server_url: str) -> str:
    return new_database(server_url, "rag_standing")


@pytest.fixture(scope="module")
def service(url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("standing")))
    for doc in (OLD, STALE, FRESH):
        add(server, doc)
    yield server
    server.close()


def add(server: LiveServer, doc: dict[str, Any]) -> None:
    r = server.client.post("/v1/documents", json=doc)
    assert r.status_code in (200, 201), r.text
    server.wait_embedded()  # judged as a document with its vectors, not by words alone


def ask(server: LiveServer, question: str) -> dict[str, Any]:
    r = server.client.post("/v1/ask", json={"question": question})
    assert r.status_code == 200, r.text
    return r.json()


def search(server: LiveServer, question: str) -> dict[str, Any]:
    r = server.client.post("/v1/search", json={"question": question, "limit": 50})
    assert r.status_code == 200, r.text
    return r.json()


def listing(server: LiveServer) -> dict[str, dict[str, Any]]:
    rows = server.client.get("/v1/documents").json()["documents"]
    return {r["source_id"]: r for r in rows}


def test_a_superseding_upload_hides_the_old_document(service: LiveServer) -> None:
    before = ask(service, ASK_ALLOWANCE)
    assert before["status"] == "answered", before
    assert OLD["source_id"] in {s["source_id"] for s in before["sources"]}, before

    add(service, NEW)
    try:
        after = ask(service, ASK_ALLOWANCE)
        assert after["status"] == "answered", after
        sources = {s["source_id"] for s in after["sources"]}
        assert sources == {NEW["source_id"]}, after["sources"]
        assert "300 Kč" not in after["answer"], after["answer"]

        found = search(service, ASK_ALLOWANCE)
        assert OLD["source_id"] not in {h["source_id"] for h in found["hits"]}, found["hits"]
        assert found["hidden"] and {h["source_id"] for h in found["hidden"]} == {OLD["source_id"]}
        assert all(h["superseded_by"] == NEW["source_id"] for h in found["hidden"])

        docs = listing(service)
        assert docs[OLD["source_id"]]["standing"] == "superseded"
        assert docs[OLD["source_id"]]["superseded_by"] == NEW["source_id"]
        assert docs[NEW["source_id"]]["standing"] == "fresh"
        one = service.client.get(f"/v1/documents/{OLD['source_id']}").json()
        assert one["standing"] == "superseded" and one["superseded_by"] == NEW["source_id"]
    finally:
        assert service.client.delete(f"/v1/documents/{NEW['source_id']}").status_code == 200
    # without the superseding document the old one answers again
    again = ask(service, ASK_ALLOWANCE)
    assert OLD["source_id"] in {s["source_id"] for s in again["sources"]}, again
    assert listing(service)[OLD["source_id"]]["standing"] == "fresh"


def test_a_document_cannot_hide_itself(service: LiveServer) -> None:
    selfish = {
        "source_id": "provoz/sam",
        "text": "Sklad nářadí je v přízemí vedle dílny údržby.",
        "metadata": {"supersedes": "provoz/sam"},
    }
    add(service, selfish)
    try:
        assert listing(service)["provoz/sam"]["standing"] == "fresh"
        found = search(service, "Kde je sklad nářadí?")
        assert "provoz/sam" in {h["source_id"] for h in found["hits"]}, found
        assert found["hidden"] == [], found["hidden"]
    finally:
        service.client.delete("/v1/documents/provoz/sam")


def test_stale_documents_rank_after_fresh_ones_and_say_why(service: LiveServer) -> None:
    hits = search(service, ASK_PARKING)["hits"]
    sources = [h["source_id"] for h in hits]
    assert STALE["source_id"] in sources and FRESH["source_id"] in sources, sources
    first_stale = sources.index(STALE["source_id"])
    assert all(s != STALE["source_id"] for s in sources[:first_stale])
    assert all(s == STALE["source_id"] for s in sources[first_stale:]), sources
    stale = [h for h in hits if h["source_id"] == STALE["source_id"]]
    fresh = [h for h in hits if h["source_id"] == FRESH["source_id"]]
    # the fused order alone would have put the stale page first
    assert max(h["rrf_score"] for h in stale) > max(h["rrf_score"] for h in fresh), hits
    assert all(h["evidence"]["standing"] == "stale" for h in stale)
    assert all("stale" in h["evidence"]["reason"] for h in stale)
    assert all("standing" not in h["evidence"] for h in fresh)

    answer = ask(service, ASK_PARKING)
    assert answer["status"] == "answered", answer
    assert answer["sources"][0]["source_id"] == FRESH["source_id"], answer["sources"]
    assert listing(service)[STALE["source_id"]]["standing"] == "stale"


def test_documents_list_shows_the_standing(url: str, tmp_path: Path, service: LiveServer) -> None:
    add(service, NEW)
    try:
        env = {"DATABASE_URL": url, "RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDER": "none"}
        result = CliRunner().invoke(cli, ["documents", "list"], env=env)
        assert result.exit_code == 0, result.output
        lines = {line.split()[3]: line for line in result.output.splitlines()}
        assert lines[OLD["source_id"]].endswith(f"[superseded by {NEW['source_id']}]"), lines
        assert lines[STALE["source_id"]].endswith("[stale]"), lines
        assert "[" not in lines[FRESH["source_id"]], lines
    finally:
        service.client.delete(f"/v1/documents/{NEW['source_id']}")


def test_the_supersedes_lookup_uses_its_index(url: str, tmp_path: Path) -> None:
    import psycopg

    from rag.store import STANDING_JOIN

    # the join a search reads its candidates' standing by (rag.search.sql.FUSE)
    lookup = (
        "EXPLAIN SELECT sup.source_id FROM documents d"
        + STANDING_JOIN
        + " WHERE d.owner_id = 1 AND d.document_id = ANY('{1,2}')"
    )
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(lookup))
    assert "documents_supersedes" in plan, plan


def ring_doc(source_id: str, supersedes: str) -> dict[str, Any]:
    return {
        "source_id": source_id,
        "text": f"Dokument {source_id} nahrazuje dokument {supersedes}.",
        "metadata": {"supersedes": supersedes},
    }


@pytest.mark.parametrize("ring", [["kruh/a", "kruh/b"], ["kruh/x", "kruh/y", "kruh/z"]])
def test_a_supersedes_cycle_is_refused_naming_its_documents(
    service: LiveServer, ring: list[str]
) -> None:
    *first, last = ring
    try:
        for sid, target in zip(first, ring[1:], strict=True):
            add(service, ring_doc(sid, target))
        r = service.client.post("/v1/documents", json=ring_doc(last, ring[0]))
        assert r.status_code == 422, r.text
        detail = r.json()["detail"]
        assert "cycle" in detail and all(repr(s) in detail for s in ring), detail
        docs = listing(service)
        assert last not in docs, docs
        assert all(docs[s]["standing"] in ("fresh", "superseded") for s in first), docs
        assert docs[ring[0]]["standing"] == "fresh", docs  # the head of the chain still answers
    finally:
        for sid in ring:
            service.client.delete(f"/v1/documents/{sid}")


def test_a_cycle_within_one_upload_is_refused_and_the_rest_written(service: LiveServer) -> None:
    lines = [
        {"id": "davka/a", "text": "První.", "metadata": {"supersedes": "davka/b"}},
        {"id": "davka/b", "text": "Druhý.", "metadata": {"supersedes": "davka/a"}},
        {"id": "davka/c", "text": "Třetí.", "metadata": {"supersedes": "davka/a"}},
    ]
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()
    try:
        r = service.client.post("/v1/documents", files={"file": ("davka.jsonl", body)})
        assert r.status_code == 201, r.text
        summary = r.json()
        assert summary["added"] == 1 and summary["failed"] == 2, summary
        assert {f["origin"] for f in summary["failures"]} == {"davka.jsonl:1", "davka.jsonl:2"}
    finally:
        for sid in ("davka/a", "davka/b", "davka/c"):
            service.client.delete(f"/v1/documents/{sid}")


def test_two_writers_cannot_close_a_cycle_together(service: LiveServer) -> None:
    for round_ in range(6):
        a, b = f"soubeh/{round_}-a", f"soubeh/{round_}-b"
        with ThreadPoolExecutor(2) as pool:
            posts = [
                pool.submit(service.client.post, "/v1/documents", json=ring_doc(x, y))
                for x, y in ((a, b), (b, a))
            ]
            statuses = sorted(f.result().status_code for f in posts)
        try:
            assert statuses == [201, 422], statuses
        finally:
            for sid in (a, b):
                service.client.delete(f"/v1/documents/{sid}")
