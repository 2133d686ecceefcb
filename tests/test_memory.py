"""A large upload gives the memory it freed back to the operating system (rag.ingest.memory)."""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator

import pytest

import rag.api.documents
import rag.ingest.memory
from tests.apiserver import LiveServer, api_settings, new_database


@pytest.fixture(scope="module")
def service(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    url = new_database(server_url, "rag_memory")
    settings = api_settings(
        url, tmp_path_factory.mktemp("memory"), embed_worker=False, analysis_worker=False
    )
    server = LiveServer.start(settings)
    yield server
    server.close()


def test_large_upload_trims_malloc_and_small_one_does_not(
    service: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    results: list[bool] = []

    def recording() -> bool:
        results.append(rag.ingest.memory.release_memory())
        return results[-1]

    monkeypatch.setattr(rag.api.documents, "release_memory", recording)
    monkeypatch.setattr(rag.api.documents, "TRIM_AFTER_CHARS", 2000)
    sentence = "Paní Dvořáková schválila rozpočet na opravu střechy v Litomyšli. "
    small = service.client.post("/v1/documents", files={"file": ("maly.txt", sentence.encode())})
    assert small.status_code == 201, small.text
    assert results == []
    large = service.client.post(
        "/v1/documents", files={"file": ("velky.txt", (sentence * 60).encode())}
    )
    assert large.status_code == 201, large.text
    assert large.json()["chunks"] >= 2
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert results == [glibc]
    # unchanged content is still an ingest of that size: it trims too, and answers 200
    again = service.client.post(
        "/v1/documents", files={"file": ("velky.txt", (sentence * 60).encode())}
    )
    assert again.status_code == 200, again.text
    assert results == [glibc, glibc]
