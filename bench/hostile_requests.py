"""Hostile requests for bench_load.py's ``mixed`` run: each one once cost the service a 500, minutes
of CPU or gigabytes of memory, and must now be a quick 4xx that leaves normal questions alone.

Every request is refused, so the corpus the normal clients ask about never changes.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import zipfile
from collections import Counter
from collections.abc import Awaitable, Callable
from functools import cache
from multiprocessing.connection import Connection

import httpx

Hostile = Callable[[httpx.AsyncClient], Awaitable[int]]
JSON = {"content-type": "application/json"}


@cache
def docx_bomb(paragraphs: int = 1_900_000) -> bytes:
    """A real DOCX holding ~100 MB of XML in a few hundred KB."""
    import docx  # only the mixed run needs it

    document = docx.Document()
    document.add_paragraph("Úvod.")
    buf = io.BytesIO()
    document.save(buf)
    body = "<w:p><w:r><w:t>slovo slovo slovo</w:t></w:r></w:p>" * paragraphs
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(buf.getvalue())) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "word/document.xml":
                xml = data.decode()
                at = xml.index("<w:body>") + len("<w:body>")
                data = (xml[:at] + body + xml[at:]).encode()
            dst.writestr(info.filename, data)
    return out.getvalue()


@cache
def huge_history() -> bytes:
    """A 16 MB /v1/ask body: five long turns of history."""
    turn = {"role": "assistant", "content": "slovo " * 530_000}
    return json.dumps({"question": "A kde je kotelna?", "history": [turn] * 5}).encode()


@cache
def deep_json(depth: int = 100_000) -> bytes:
    return ('{"question": ' + "[" * depth + "]" * depth + "}").encode()


async def nul_title(client: httpx.AsyncClient) -> int:
    body = b'{"source_id": "n", "text": "ahoj", "title": "a\\u0000b"}'
    return (await client.post("/v1/documents", content=body, headers=JSON)).status_code


async def nested(client: httpx.AsyncClient) -> int:
    return (await client.post("/v1/ask", content=deep_json(), headers=JSON)).status_code


async def odd_refs(client: httpx.AsyncClient) -> int:
    a = (await client.get("/v1/documents/%C2%B2")).status_code
    b = (await client.delete("/v1/documents/%D9%A3")).status_code
    return max(a, b)


async def bomb(client: httpx.AsyncClient) -> int:
    files = {"file": ("bomba.docx", docx_bomb())}
    return (await client.post("/v1/documents", files=files)).status_code


async def tags(client: httpx.AsyncClient) -> int:
    files = {"file": ("tagy.html", b"<html><body>" + b"<b>" * 600_000)}
    return (await client.post("/v1/documents", files=files)).status_code


async def history(client: httpx.AsyncClient) -> int:
    return (await client.post("/v1/ask", content=huge_history(), headers=JSON)).status_code


async def oversized(client: httpx.AsyncClient) -> int:
    body = b'{"question": "' + b"x" * (21 * 1024 * 1024) + b'"}'
    return (await client.post("/v1/search", content=body, headers=JSON)).status_code


async def bad_fields(client: httpx.AsyncClient) -> int:
    blank = {"source_id": "   ", "text": "ahoj"}
    lang = {"source_id": "x", "text": "ahoj", "lang": "klingon"}
    a = (await client.post("/v1/documents", json=blank)).status_code
    b = (await client.post("/v1/documents", json=lang)).status_code
    return max(a, b)


HOSTILE: list[Hostile] = [nul_title, nested, odd_refs, bomb, tags, history, oversized, bad_fields]


def prepare() -> None:
    """Build the large bodies before the clock starts."""
    docx_bomb()
    huge_history()
    deep_json()


async def attack(url: str, clients: int, seconds: float) -> tuple[list[float], Counter[int]]:
    """``clients`` tasks sending the hostile requests in turn for ``seconds``."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        deadline = time.perf_counter() + seconds

        async def one(i: int) -> None:
            n = i
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                try:
                    status = await HOSTILE[n % len(HOSTILE)](client)
                except httpx.HTTPError:
                    status = 0
                latencies.append(time.perf_counter() - t0)
                statuses[status] += 1
                n += clients

        await asyncio.gather(*(one(i) for i in range(clients)))
    return latencies, statuses


def attack_in_process(url: str, clients: int, seconds: float, conn: Connection) -> None:
    """The hostile clients in a process of their own, so that building and sending their large
    bodies does not slow the event loop that times the normal questions."""
    prepare()
    conn.send("ready")
    conn.recv()  # go
    conn.send(asyncio.run(attack(url, clients, seconds)))
