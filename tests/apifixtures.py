"""Live-server fixtures shared by the HTTP test modules (loaded by conftest's ``pytest_plugins``).

A module that uses them defines ``corpus_url`` (its own database holding the sample corpus, see
:func:`tests.apiserver.sample_database`) and may override ``llm_timeout``. ``plain`` serves it
without a chat model, ``smart`` with the module's fake chat server ``fake_llm``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.apiserver import LiveServer, api_settings
from tests.fakellm import FakeLLM


@pytest.fixture(scope="module")
def llm_timeout() -> float:
    """Seconds the ``smart`` server waits for its chat model."""
    return 1.5


@pytest.fixture(scope="module")
def plain(corpus_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """No chat model: extractive answers."""
    server = LiveServer.start(api_settings(corpus_url, tmp_path_factory.mktemp("plain")))
    yield server
    server.close()


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture(scope="module")
def smart(
    corpus_url: str,
    fake_llm: FakeLLM,
    llm_timeout: float,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LiveServer]:
    """The fake chat server configured as the chat model, as model "fake-model"."""
    settings = api_settings(
        corpus_url,
        tmp_path_factory.mktemp("smart"),
        llm_url=fake_llm.url,
        llm_model="fake-model",
        llm_timeout=llm_timeout,
    )
    server = LiveServer.start(settings)
    yield server
    server.close()
