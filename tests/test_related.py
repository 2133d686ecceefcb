"""The related answer (rag.answer.related): which hits it lists, over judgements written by hand, and
the engine's related answer without a chat model and with one (the fake chat server over real
HTTP), including the model abstaining or failing, and the setting that turns it off.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.answer.engine import Answer, Engine, Hit, SearchResult
from rag.answer.llm import ABSTAIN, PROMPTS, make_llm
from rag.answer.related import (
    MAX_RELATED,
    NO_DIRECT_ANSWER,
    RELATED_LABEL,
    related_hits,
    related_text,
)
from rag.language.phrases import LANGUAGES, NOT_FOUND
from rag.language.question_keys import query_keys
from rag.search.answerability import Answerability
from rag.search.relevance import FilterParams, Judgement
from rag.search.retrieve import Candidate, Retrieval
from rag.settings import Settings
from tests.fakellm import FakeLLM

PARAMS = FilterParams(
    vector_max_distance=-1.0, vector_margin=0.0, rare_df=0.02, rare_min_chunks=1, min_coverage=0.5
)
QUESTION = "Kolik peněz dostal Novák za inovaci?"
TEXT = "Novák dostal cenu za inovaci skladového systému."
REPLY = "Zdroj uvádí jen to, že Novák dostal cenu za inovaci [1]; částku neuvádí."


def hit(
    chunk: int,
    rule: str | None,
    reason: str | None,
    *,
    passed: bool = False,
    document: int | None = None,
) -> Hit:
    """A candidate judged by hand: ``rule`` admitted it (or none did), ``reason`` is the first
    answerability check its window failed (None: no window looked for)."""
    doc = chunk if document is None else document
    c = Candidate(
        chunk, doc, f"doc-{doc}", f"Dokument {doc}", TEXT, "cs", 1, 1.0, None, None, 0.01, []
    )
    answer = None
    if reason is not None:
        answer = Answerability((0, len(TEXT)), False, reason == "focus", reason, "amount", None)
    return Hit(c, Judgement(passed, rule, None, None, 0.6, answer=answer))


def result(*hits: Hit) -> SearchResult:
    r = Retrieval(QUESTION, query_keys(QUESTION, "cs"), [h.candidate for h in hits], {}, 10, {})
    return SearchResult(QUESTION, "cs", list(hits), [], r)


# --- which hits a related answer lists -----------------------------------------------------------


@pytest.mark.parametrize("reason", ["focus", "type"])
def test_a_focus_or_type_refusal_after_a_rule_is_related(reason: str) -> None:
    h = hit(1, "words", reason)
    assert related_hits(result(hit(2, None, None), h)) == [h]


@pytest.mark.parametrize("reason", ["absent", "required"])
def test_a_missing_code_number_or_name_is_not_related(reason: str) -> None:
    # the knowledge base does not have what is asked about
    assert related_hits(result(hit(1, "vector+words", reason))) == []


@pytest.mark.parametrize("reason", ["focus", "type", None])
def test_a_candidate_no_rule_admitted_is_not_related(reason: str) -> None:
    assert related_hits(result(hit(1, None, reason))) == []


def test_nothing_is_related_when_a_candidate_passed() -> None:
    passed = hit(2, "words", None, passed=True)
    assert related_hits(result(hit(1, "words", "focus"), passed)) == []


def test_at_most_three_in_the_fused_order_one_per_document() -> None:
    hits = [
        hit(1, "words", "type"),
        hit(2, "vector", "focus", document=1),  # the same document again
        hit(3, "words", "absent"),
        hit(4, "support", "focus"),
        hit(5, "words", "focus"),
        hit(6, "words", "type"),
    ]
    got = related_hits(result(*hits))
    assert len(got) == MAX_RELATED
    assert [h.candidate.chunk_id for h in got] == [1, 4, 5]


def test_every_language_has_the_related_sentences() -> None:
    for table in (NO_DIRECT_ANSWER, RELATED_LABEL):
        assert set(table) == set(LANGUAGES)


# --- the engine's related answer -----------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def llm(fake: FakeLLM) -> FakeLLM:
    fake.calls.clear()
    fake.mode, fake.reply, fake.respond = "ok", REPLY, None
    return fake


def engine(fake: FakeLLM | None = None, **changes: object) -> Engine:
    settings = Settings(data_dir=Path("/nonexistent")).replace(**changes)
    if fake is not None:
        settings = settings.replace(llm_url=fake.url, llm_model="fake-model", llm_timeout=2.0)
    return Engine(None, settings, None, make_llm(settings), params=PARAMS)  # type: ignore[arg-type]


def events(e: Engine, r: SearchResult, stream: bool) -> tuple[list[str], str, Answer]:
    got = list(e.answer_events(r, stream=stream))
    kinds = [k for k, _ in got]
    assert kinds[0] == "sources" and kinds[-1] == "answer" and set(kinds[1:-1]) <= {"delta"}
    assert got[0][1].status == got[-1][1].status  # the first event already says what it is
    return kinds, "".join(v for k, v in got if k == "delta"), got[-1][1]


def near() -> SearchResult:
    """One candidate the word rule admitted whose window lacks the sum asked for."""
    return result(hit(1, "words", "type"), hit(2, "words", "absent"))


def test_without_a_model_the_sources_are_listed_and_nothing_is_asserted() -> None:
    kinds, shown, a = events(engine(), near(), stream=True)
    listing = f"{NO_DIRECT_ANSWER['cs']} {RELATED_LABEL['cs']}:\n[1] Dokument 1 (doc-1)"
    assert kinds == ["sources", "delta", "answer"] and shown == a.answer == listing
    assert (a.status, a.not_found_by, a.asserted, a.extractive, a.llm_called) == (
        "related",
        None,
        False,
        False,
        False,
    )
    assert TEXT not in a.answer and a.citations == []  # no excerpt of the source
    [s] = a.sources
    assert (s.source_id, s.evidence["related"], s.evidence["rule"]) == ("doc-1", True, "words")
    assert s.evidence["answerability"]["reason"] == "type"
    assert a.as_dict()["status"] == "related" and a.as_dict()["asserted"] is False


def test_the_setting_off_gives_not_found() -> None:
    _, shown, a = events(engine(related_answers=False), near(), stream=True)
    assert (a.status, a.not_found_by, a.answer, a.sources) == (
        "not_found",
        "filter",
        NOT_FOUND["cs"],
        [],
    )
    assert Settings.from_env({"RAG_RELATED_ANSWERS": "false"}).related_answers is False


@pytest.mark.parametrize("stream", [True, False])
def test_the_model_answers_from_the_related_sources_and_the_status_stays(
    llm: FakeLLM, stream: bool
) -> None:
    _, shown, a = events(engine(llm), near(), stream=stream)
    assert (a.status, a.answer, a.asserted, a.llm_called, a.extractive) == (
        "related",
        REPLY,
        True,
        True,
        False,
    )
    assert a.citations == [1] and a.sources[0].evidence["related"] is True
    if stream:
        assert shown == REPLY
    [call] = llm.calls
    system, user = call["messages"][0]["content"], call["messages"][-1]["content"]
    rules = (PROMPTS / "related.txt").read_text(encoding="utf-8")
    assert system == rules.format(lang_name="Czech", abstain=ABSTAIN)
    assert TEXT in user and QUESTION in user


@pytest.mark.parametrize("stream", [True, False])
def test_a_model_that_abstains_leaves_the_related_list(llm: FakeLLM, stream: bool) -> None:
    llm.reply = f"{ABSTAIN} Zdroje částku neuvádějí."
    _, shown, a = events(engine(llm), near(), stream=stream)
    listing = related_text("cs", a.sources)
    assert (a.status, a.not_found_by, a.answer, shown) == ("related", None, listing, listing)
    assert a.asserted is False and a.llm_called is True and ABSTAIN not in shown


def test_a_failing_model_leaves_the_related_list_and_says_so(llm: FakeLLM) -> None:
    llm.mode = "error"
    _, shown, a = events(engine(llm), near(), stream=True)
    assert (a.status, a.asserted, a.answer) == ("related", False, related_text("cs", a.sources))
    assert [d["component"] for d in a.degraded] == ["llm"] and shown.endswith(a.answer)


def test_not_found_still_never_calls_the_model(llm: FakeLLM) -> None:
    _, _, a = events(engine(llm), result(hit(1, "words", "required")), stream=True)
    assert (a.status, a.not_found_by) == ("not_found", "filter") and llm.calls == []
