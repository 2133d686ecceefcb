"""The chat page in a real headless Chromium (Debian's ``chromium``), driven by Playwright.

The page is served by the real application under uvicorn on loopback (tests/apiserver.py) over the
shipped sample corpus: ask and see the streamed answer with its sources and their evidence, see the
"not in the knowledge base" state, upload a file, use an API key, and check that document text can
never become markup. Playwright never downloads a browser here: it starts /usr/bin/chromium.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    Response,
    expect,
    sync_playwright,
)

from rag.answer.llm import ABSTAIN
from rag.api.auth import create_key
from rag.db import Database
from rag.language.phrases import NOT_FOUND
from tests.apiserver import LiveServer, api_settings, new_database, sample_database
from tests.fakellm import FakeLLM

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOT = Path("/tmp/rag-chat-page.png")
NOVAK = "rec-novak-cena"
ASK_NOVAK = "Kdo je Novák?"
UNANSWERABLE = "Čím se v Litomyšli živí zelený kolibřík?"
NOT_FOUND_TITLE = "Nenalezeno ve znalostní bázi"
# the prize record names no sum: no direct answer, the record possibly related
NEAR = "Kolik peněz dostal Novák za inovaci?"
TIMEOUT_MS = 15_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]


@pytest.fixture(scope="module")
def corpus_url(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    return sample_database(server_url, "rag_browser", tmp_path_factory)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context; the test fails on any script error or failed asset."""
    context = browser.new_context(locale="cs-CZ", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    pg = context.new_page()
    problems: list[str] = []
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def on_console(msg: ConsoleMessage) -> None:
        # Chromium logs every 4xx as a failed load, including the 401 or 415 the page shows
        # the user on purpose; missing assets and server errors are caught by status below.
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            problems.append(f"console: {msg.text}")

    def on_response(response: Response) -> None:
        if response.status == 404 or response.status >= 500:
            problems.append(f"{response.status} {response.url}")

    pg.on("console", on_console)
    pg.on("response", on_response)
    yield pg
    context.close()
    assert problems == []


def ask(page: Page, question: str) -> None:
    page.get_by_label("Otázka").fill(question)
    page.get_by_label("Otázka").press("Enter")


def reply_to(page: Page, server: LiveServer, question: str) -> Locator:
    """The reply to ``question`` asked on a fresh chat page."""
    page.goto(server.url + "/")
    ask(page, question)
    return page.locator(".turn").last.locator(".reply")


def test_the_page_and_its_assets_load(plain: LiveServer, page: Page) -> None:
    for script in ("render.js", "app.js"):
        r = plain.client.get(f"/static/{script}")
        assert r.status_code == 200 and "javascript" in r.headers["content-type"]
        assert "innerHTML" not in r.text  # document text only ever becomes text nodes
    assert plain.client.get("/static/app.css").status_code == 200
    page.goto(plain.url + "/")
    expect(page).to_have_title("rag – otázky nad vašimi dokumenty")
    expect(page.locator("html")).to_have_attribute("lang", "cs")
    expect(page.get_by_role("button", name="Zeptat se")).to_be_enabled()
    expect(page.locator("#conversation")).to_have_attribute("aria-live", "polite")
    # the header line comes from GET /v1/stats: the script ran and reached the API
    expect(page.locator("#stats")).to_contain_text("Ve znalostní bázi: dokumentů")


def test_ask_shows_the_answer_and_its_source_with_evidence(plain: LiveServer, page: Page) -> None:
    page.goto(plain.url + "/")
    ask(page, ASK_NOVAK)
    reply = page.locator(".turn").last.locator(".reply")
    expect(reply).to_have_attribute("data-status", "answered")
    expect(reply.locator(".answer-text")).to_contain_text("Novákovi")
    expect(reply.locator(".badge.extractive")).to_be_visible()
    source = reply.locator(f'.source[data-source-id="{NOVAK}"]')
    expect(source).to_be_visible()
    expect(source.locator(".source-title")).to_have_text("Cena za inovaci")
    expect(source.locator(".badge.cited")).to_have_text("citováno")
    expect(source.locator(".rule")).to_have_text("vzácná slova z otázky")
    expect(source.locator(".word.matched").first).to_contain_text("Novák")
    expect(source.locator(".evidence")).to_contain_text("Vzdálenost")
    source.get_by_text("Text zdroje").click()
    expect(source.locator("blockquote")).to_contain_text("předal ředitel Novákovi")
    # the evidence window is marked inside the source text, and it is the extractive answer
    window = source.locator("blockquote mark.window")
    expect(window).to_have_count(1)
    expect(window).to_contain_text("Novákovi")
    expect(reply.locator(".answer-text")).to_contain_text(window.inner_text().split()[0])
    expect(page.locator(".not-found")).to_have_count(0)
    expect(page.get_by_role("button", name="Zeptat se")).to_be_enabled()
    page.screenshot(path=str(SCREENSHOT), full_page=True)


def test_an_unanswerable_question_shows_the_not_found_state(plain: LiveServer, page: Page) -> None:
    page.goto(plain.url + "/")
    ask(page, UNANSWERABLE)
    reply = page.locator(".turn").last.locator(".reply")
    expect(reply).to_have_attribute("data-status", "not_found")
    box = reply.locator(".not-found")
    expect(box.locator(".not-found-title")).to_have_text(NOT_FOUND_TITLE)
    expect(box.locator(".service-sentence")).to_contain_text(NOT_FOUND["cs"])
    # not dressed as an answer: no answer box, no sources, no extractive label
    expect(reply.locator(".answer")).to_have_count(0)
    expect(reply.locator(".source")).to_have_count(0)
    expect(reply.locator(".badge")).to_have_count(0)
    border = reply.evaluate("e => getComputedStyle(e).borderTopStyle")
    assert border == "dashed"
    page.screenshot(path="/tmp/rag-chat-page-not-found.png", full_page=True)


def test_a_related_answer_lists_the_sources_and_asserts_nothing(
    plain: LiveServer, page: Page
) -> None:
    reply = reply_to(page, plain, NEAR)
    expect(reply).to_have_attribute("data-status", "related")
    expect(reply.locator(".related-title")).to_have_text("Přímá odpověď nenalezena")
    expect(reply.locator(".sources-title")).to_have_text("Možná souvisí")
    source = reply.locator(f'.source[data-source-id="{NOVAK}"]')
    expect(source.locator(".source-title")).to_have_text("Cena za inovaci")
    expect(source.locator(".refused")).to_contain_text("není, na co se otázka ptá")
    # nothing dressed as an answer: no answer box, no answer text, no extractive label
    expect(reply.locator(".answer")).to_have_count(0)
    expect(reply.locator(".answer-text")).to_have_count(0)
    expect(reply.locator(".badge")).to_have_count(0)
    expect(page.locator(".not-found")).to_have_count(0)
    page.screenshot(path="/tmp/rag-chat-page-related.png", full_page=True)


def test_follow_up_questions_send_the_conversation(plain: LiveServer, page: Page) -> None:
    page.goto(plain.url + "/")
    ask(page, ASK_NOVAK)
    expect(page.locator(".turn").last.locator(".reply")).to_have_attribute(
        "data-status", "answered"
    )
    with page.expect_request("**/v1/ask") as request:
        ask(page, "A za co dostal cenu?")
    body = request.value.post_data_json
    assert isinstance(body, dict)
    assert body["stream"] is True and body["question"] == "A za co dostal cenu?"
    assert [m["role"] for m in body["history"]] == ["user", "assistant"]
    assert body["history"][0]["content"] == ASK_NOVAK
    second = page.locator(".turn").nth(1).locator(".reply")
    expect(second).to_have_attribute("data-status", "answered")
    expect(second.locator(f'.source[data-source-id="{NOVAK}"]')).to_be_visible()


def test_upload_a_text_file_then_ask_about_it(
    plain: LiveServer, page: Page, tmp_path: Path
) -> None:
    note = tmp_path / "archiv-klice.txt"
    note.write_text(
        "Klíče od archivu v suterénu vydává vrátný Bohuslav Křepelka každý všední den.\n",
        encoding="utf-8",
    )
    page.goto(plain.url + "/")
    page.get_by_label("Soubor (txt, md, html, pdf, docx, jsonl)").set_input_files(str(note))
    page.get_by_role("button", name="Nahrát").click()
    result = page.locator("#upload-result")
    expect(result.locator(".ok")).to_have_text("Nahráno: archiv-klice.txt")
    expect(result).to_contain_text("archiv-klice.txt – přidán")
    assert plain.client.get("/v1/documents/archiv-klice.txt").status_code == 200
    # the same file again is acknowledged as unchanged
    page.get_by_label("Soubor (txt, md, html, pdf, docx, jsonl)").set_input_files(str(note))
    page.get_by_role("button", name="Nahrát").click()
    expect(result.locator(".ok")).to_contain_text("Beze změny")
    ask(page, "Kdo vydává klíče od archivu?")
    reply = page.locator(".turn").last.locator(".reply")
    expect(reply).to_have_attribute("data-status", "answered")
    expect(reply.locator('.source[data-source-id="archiv-klice.txt"]')).to_be_visible()


def test_an_unsupported_upload_shows_the_problem(
    plain: LiveServer, page: Page, tmp_path: Path
) -> None:
    blob = tmp_path / "obrazek.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    page.goto(plain.url + "/")
    page.get_by_label("Soubor (txt, md, html, pdf, docx, jsonl)").set_input_files(str(blob))
    page.get_by_role("button", name="Nahrát").click()
    expect(page.locator("#upload-result [role=alert]")).to_have_text(
        "Tento typ souboru služba neumí přečíst."
    )


def test_document_text_is_never_markup(plain: LiveServer, page: Page) -> None:
    hostile = (
        "Heslo k wifi v zasedačce Modrá je <b>Javorový-List</b>, "
        '<img src="x" onerror="window.__injected = 1"> jinak nic.'
    )
    r = plain.client.post("/v1/documents", json={"source_id": "<i>wifi</i>", "text": hostile})
    assert r.status_code == 201, r.text
    page.goto(plain.url + "/")
    ask(page, "Jaké je heslo k wifi v zasedačce Modrá?")
    reply = page.locator(".turn").last.locator(".reply")
    expect(reply).to_have_attribute("data-status", "answered")
    source = reply.locator(".source").first
    expect(source.locator(".source-id")).to_have_text("<i>wifi</i>")
    expect(reply.locator(".answer-text")).to_contain_text("<b>Javorový-List</b>")
    expect(reply.locator("img, b, i")).to_have_count(0)
    assert page.evaluate("window.__injected") is None


# --- an API key ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(
    server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    url = new_database(server_url, "rag_browser_keys")
    settings = api_settings(url, tmp_path_factory.mktemp("keyed"))
    with Database(settings, run_migrations=False) as db, db.connection() as conn:
        token = create_key(conn, "prohlizec").token
    server = LiveServer.start(settings)
    yield server, token
    server.close()


def test_the_api_key_is_kept_and_sent_as_bearer(
    keyed: tuple[LiveServer, str], page: Page, tmp_path: Path
) -> None:
    server, token = keyed
    page.goto(server.url + "/")
    expect(page.locator("#stats")).to_have_text("Pro přístup zadejte API klíč.")
    ask(page, "Kde je sklad?")
    alert = page.locator(".turn").last.locator("[role=alert]")
    expect(alert).to_contain_text("Služba vyžaduje platný API klíč")
    expect(page.get_by_label("Klíč pro služby s více vlastníky")).to_be_focused()

    page.get_by_label("Klíč pro služby s více vlastníky").fill(token)
    page.get_by_role("button", name="Uložit").click()
    expect(page.locator("#key-status")).to_have_text("Klíč uložen.")
    assert page.evaluate("localStorage.getItem('rag.apiKey')") == token
    page.reload()  # the key survives a reload
    expect(page.get_by_label("Klíč pro služby s více vlastníky")).to_have_value(token)
    expect(page.locator("#stats")).to_contain_text("dokumentů 0")

    note = tmp_path / "sklad.md"
    note.write_text("# Sklad\n\nSklad náhradních dílů je v hale D vedle rampy.\n", encoding="utf-8")
    with page.expect_request("**/v1/documents") as request:
        page.get_by_label("Soubor (txt, md, html, pdf, docx, jsonl)").set_input_files(str(note))
        page.get_by_role("button", name="Nahrát").click()
    assert request.value.headers["authorization"] == f"Bearer {token}"
    expect(page.locator("#upload-result .ok")).to_have_text("Nahráno: sklad.md")
    mine = server.client.get("/v1/documents", headers={"Authorization": f"Bearer {token}"})
    assert [d["source_id"] for d in mine.json()["documents"]] == ["sklad.md"]

    page.get_by_role("button", name="Smazat").click()
    assert page.evaluate("localStorage.getItem('rag.apiKey')") is None


# --- with a chat model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llm_timeout() -> float:
    return 5.0


def test_sources_show_before_a_slow_model_answers(
    smart: LiveServer, fake_llm: FakeLLM, page: Page
) -> None:
    fake_llm.mode, fake_llm.delay = "slow", 3.0
    fake_llm.reply = "Novák z vývoje dostal cenu za inovaci skladu [1]."
    reply = reply_to(page, smart, ASK_NOVAK)
    # the sources event arrives first: shown while the model is still thinking
    expect(reply).to_have_attribute("data-status", "streaming", timeout=2_500)
    expect(reply.locator(f'.source[data-source-id="{NOVAK}"]')).to_be_visible()
    expect(page.get_by_role("button", name="Zastavit")).to_be_visible()
    expect(reply).to_have_attribute("data-status", "answered")
    expect(reply.locator(".answer-text")).to_have_text(fake_llm.reply)
    expect(reply.locator(".badge.extractive")).to_have_count(0)
    expect(page.get_by_role("button", name="Zastavit")).to_be_hidden()


def test_a_model_that_finds_no_answer_shows_the_not_found_state(
    smart: LiveServer, fake_llm: FakeLLM, page: Page
) -> None:
    fake_llm.mode, fake_llm.delay, fake_llm.reply = "ok", 0.0, ABSTAIN
    # the filter admits the record; the model is made to abstain
    reply = reply_to(page, smart, "Kdo je Novák?")
    expect(reply).to_have_attribute("data-status", "not_found")
    expect(reply.locator(".not-found-why")).to_contain_text("jazykový model v nich odpověď nenašel")
    expect(reply.locator(".service-sentence")).to_contain_text(NOT_FOUND["cs"])
    expect(reply.locator(".source")).to_have_count(0)  # the sources shown while waiting are gone
    expect(reply).not_to_contain_text(ABSTAIN)


def test_a_model_answer_to_a_related_question_is_shown_as_uncertain(
    smart: LiveServer, fake_llm: FakeLLM, page: Page
) -> None:
    fake_llm.mode, fake_llm.delay = "ok", 0.0
    fake_llm.reply = "Zdroj částku neuvádí, jen že Novák dostal cenu za inovaci [1]."
    reply = reply_to(page, smart, NEAR)
    expect(reply).to_have_attribute("data-status", "related")
    expect(reply.locator(".related-answer .badge.uncertain")).to_be_visible()
    expect(reply.locator(".related-answer .answer-text")).to_have_text(fake_llm.reply)
    expect(reply.locator(f'.source[data-source-id="{NOVAK}"]')).to_be_visible()
    expect(reply.locator(".answer")).to_have_count(0)
    page.screenshot(path="/tmp/rag-chat-page-related-llm.png", full_page=True)


def test_a_failing_model_shows_the_extractive_answer_and_why(
    smart: LiveServer, fake_llm: FakeLLM, page: Page
) -> None:
    fake_llm.mode, fake_llm.delay = "error", 0.0
    page.goto(smart.url + "/")
    ask(page, ASK_NOVAK)
    reply = page.locator(".turn").last.locator(".reply")
    expect(reply).to_have_attribute("data-status", "answered")
    expect(reply.locator(".badge.extractive")).to_be_visible()
    expect(reply.locator(".degraded")).to_have_text(
        "Jazykový model neodpověděl, zobrazuji výňatek ze zdroje."
    )


# --- indexing by meaning in the background ------------------------------------------------------


def test_the_header_counts_passages_indexed_by_meaning_while_the_queue_drains(
    server_url: str, tmp_path: Path, page: Page
) -> None:
    from tests.test_embed_queue import GatedEmbedder

    settings = api_settings(new_database(server_url, "rag_browser_queue"), tmp_path)
    embedder = GatedEmbedder(settings)
    server = LiveServer.start(settings, embedder=embedder)
    try:
        for i in range(3):
            r = server.client.post(
                "/v1/documents", json={"source_id": f"n{i}", "text": f"Poznámka {i} o skladu."}
            )
            assert r.status_code == 201, r.text
        page.goto(server.url + "/")
        expect(page.locator("#stats")).to_contain_text("podle významu zaindexováno 0 z 3 úseků")
        embedder.open.set()
        # the line refreshes itself until the queue is empty, then the note goes
        expect(page.locator("#stats")).not_to_contain_text("zaindexováno", timeout=15_000)
        expect(page.locator("#stats")).to_contain_text("úseků 3")
    finally:
        embedder.open.set()
        server.close()
