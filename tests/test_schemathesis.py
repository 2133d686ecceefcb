"""The OpenAPI schema describes what the service does: schemathesis generates requests from it
for every operation (a fixed number of examples each) against the real service on loopback, with
an API key, and checks that no response is a server error and that every status code, content
type and body is one the schema documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from rag.api.auth import create_key
from tests.apiserver import LiveServer, api_settings, load_sample, new_database

EXAMPLES_PER_OPERATION = 60
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Not negative_data_rejection: the service ignores unknown query parameters on purpose, and
# the fixture's key is sent with every request, also where the generator meant to leave it out.


@pytest.fixture(scope="module")
def fuzzed(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    url = new_database(server_url, "rag_schemathesis")
    load_sample(url, tmp_path_factory.mktemp("sample"), owner="fuzz")
    with psycopg.connect(url) as conn:
        token = create_key(conn, "fuzz").token
    server = LiveServer.start(api_settings(url, tmp_path_factory.mktemp("fuzz")))
    server.client.headers["authorization"] = f"Bearer {token}"
    yield server
    server.close()


def fuzz(operation: Any, mode: GenerationMode, server: LiveServer) -> tuple[int, list[str]]:
    """Call ``operation`` with generated requests; the count and the failed checks."""
    headers = {"authorization": server.client.headers["authorization"]}
    failures: list[str] = []
    calls = 0

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    def call(case: Any) -> None:
        nonlocal calls
        calls += 1
        try:
            case.call_and_validate(base_url=server.url, headers=headers, checks=CHECKS)
        # FailureGroup is a BaseExceptionGroup; collected, so that one run shows every failure
        except (Exception, FailureGroup) as e:  # noqa: BLE001
            failures.append(f"{operation.label}: {' '.join(str(e).split())[:700]}")

    try:
        call()
    except Unsatisfiable:  # an operation without parameters has no invalid requests to make
        assert mode == GenerationMode.NEGATIVE and calls == 0, operation.label
    return calls, failures


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_the_service_does_what_its_schema_says(fuzzed: LiveServer, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed.url}/schema/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10, [op.label for op in operations]
    calls, failures = 0, []
    for operation in operations:
        n, failed = fuzz(operation, mode, fuzzed)
        calls, failures = calls + n, failures + failed
    print(f"\nschemathesis {mode}: {calls} requests over {len(operations)} operations")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])
