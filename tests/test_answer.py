"""The engine's pure parts (rag.answer.engine), without a database: the one check of a question, and the
one place an answer is built from sources, with a scripted answer writer in place of the model.

Retrieval, the filter and the HTTP shapes are tested against PostgreSQL and a live server
elsewhere (test_hybrid, test_api_answers); here a search result is written out by hand.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.answer.engine import Answer, Engine, Hit, SearchResult
from rag.answer.llm import ABSTAIN
from rag.answer.source import Source
from rag.errors import LLMError, QuestionError
from rag.language.phrases import EXTRACTIVE_LABEL, NOT_FOUND
from rag.language.question_keys import query_keys
from rag.search.relevance import FilterParams, Judgement
from rag.search.retrieve import Candidate, Retrieval
from rag.settings import Settings

LIMIT = 40
PARAMS = FilterParams(
    vector_max_distance=-1.0, vector_margin=0.0, rare_df=0.02, rare_min_chunks=1, min_coverage=0.5
)
QUESTION = "Kdo je Novák?"
TEXT = "Novák vede oddělení vývoje. Cenu za inovaci dostal loni."
REPLY = "Novák vede oddělení vývoje [1]."


class ScriptedWriter:
    """An answer writer that replies with ``pieces`` (streamed) or their join (whole).

    ``fail_after``: raise ``error`` after that many pieces (0: before the first).
    """

    model = "scripted"

    def __init__(
        self,
        pieces: list[str],
        *,
        error: Exception | None = None,
        fail_after: int = 0,
    ) -> None:
        self.pieces, self.error, self.fail_after = pieces, error, fail_after
        self.calls: list[str] = []

    def answer(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> str:
        self.calls.append("answer")
        if self.error is not None:
            raise self.error
        return "".join(self.pieces)

    def answer_stream(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> Iterator[str]:
        self.calls.append("stream")
        for i, piece in enumerate(self.pieces):
            if self.error is not None and i == self.fail_after:
                raise self.error
            yield piece
        if self.error is not None and self.fail_after >= len(self.pieces):
            raise self.error

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
        raise AssertionError("no follow-up rewrite here")


def engine(llm: ScriptedWriter | None = None) -> Engine:
    settings = Settings(data_dir=Path("/nonexistent"), max_question_chars=LIMIT)
    return Engine(None, settings, None, llm, params=PARAMS)  # type: ignore[arg-type]


def result(passed: bool = True, degraded: list[dict[str, str]] | None = None) -> SearchResult:
    """One candidate, admitted by the word rules or not."""
    c = Candidate(7, 3, "rec-novak", "Novák", TEXT, "cs", 1, 1.0, None, None, 0.016, ["l:novak"])
    j = Judgement(passed, "words" if passed else None, None, None, 1.0 if passed else 0.0)
    r = Retrieval(QUESTION, query_keys(QUESTION, "cs"), [c], {"l:novak": 1}, 1, {})
    return SearchResult(QUESTION, "cs", [Hit(c, j)], list(degraded or []), r)


def events(e: Engine, r: SearchResult, stream: bool = True) -> tuple[str, Answer]:
    """The deltas joined, and the complete answer (which must come last)."""
    got = list(e.answer_events(r, stream=stream))
    kinds = [k for k, _ in got]
    assert kinds[0] == "sources" and kinds[-1] == "answer", kinds
    assert set(kinds[1:-1]) <= {"delta"}, kinds
    return "".join(v for k, v in got if k == "delta"), got[-1][1]


# --- the one check of a question --------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "normalized"),
    [
        ("Kdo je Novák?", "Kdo je Novák?"),
        ("  Kdo je Novák?\n", "Kdo je Novák?"),
        ("x" * LIMIT, "x" * LIMIT),
        # the limit counts the normalized question: decomposed accents are one character each
        (unicodedata.normalize("NFD", "á" * LIMIT), "á" * LIMIT),
        ("Kdo\x00 je\x07 Novák?", "Kdo je Novák?"),
    ],
)
def test_a_usable_question_is_normalized(question: str, normalized: str) -> None:
    assert engine().validate(question) == normalized


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "the question is empty"),
        (" \n\t ", "the question is empty"),
        ("\x00\x01", "the question is empty"),
        ("x" * (LIMIT + 1), f"the question is {LIMIT + 1} characters; the limit is {LIMIT}"),
        (f"  {'x' * (LIMIT + 1)}  ", f"the question is {LIMIT + 1} characters"),
        (5, "the question must be a string"),
    ],
)
def test_an_unusable_question_is_a_question_error(question: Any, message: str) -> None:
    with pytest.raises(QuestionError, match=message):
        engine().validate(question)
    with pytest.raises(QuestionError, match=message):  # ask checks before it searches
        engine().ask(None, question)


# --- without a chat model ------------------------------------------------------------------------


def test_without_a_model_the_answer_is_an_excerpt() -> None:
    shown, a = events(engine(), result())
    assert a.answer == f"{EXTRACTIVE_LABEL['cs']} [1]: {TEXT} [1]" == shown
    assert (a.status, a.extractive, a.llm_called, a.citations) == ("answered", True, False, [1])
    assert a.question == QUESTION and [s.source_id for s in a.sources] == ["rec-novak"]


def test_without_admitted_sources_the_model_is_never_asked() -> None:
    writer = ScriptedWriter([REPLY])
    why = {"component": "vector", "reason": "error", "message": "down"}
    shown, a = events(engine(writer), result(passed=False, degraded=[why]))
    assert (a.status, a.not_found_by, a.answer, shown) == (
        "not_found",
        "filter",
        NOT_FOUND["cs"],
        NOT_FOUND["cs"],
    )
    assert a.degraded == [why] and a.llm_called is False and writer.calls == []


def test_use_llm_false_answers_extractively_with_a_model() -> None:
    writer = ScriptedWriter([REPLY])
    a = engine(writer).answer_from(result(), use_llm=False)
    assert a.extractive is True and writer.calls == []


# --- the one LLM-answer builder ------------------------------------------------------------------


def test_the_model_writes_the_answer_streamed_or_whole() -> None:
    pieces = ["Novák ", "vede oddělení ", "vývoje [1]", ". Viz [3]."]
    for stream, call in ((True, "stream"), (False, "answer")):
        writer = ScriptedWriter(pieces)
        shown, a = events(engine(writer), result(), stream=stream)
        assert shown == a.answer == "".join(pieces) and writer.calls == [call]
        assert (a.status, a.extractive, a.llm_called) == ("answered", False, True)
        assert a.citations == [1]  # [3] is out of range: one source


@pytest.mark.parametrize(
    "pieces", [[ABSTAIN], ["**NOT_", "IN_SOURCES", "** Zdroje to neuvádějí."], [" not_in_sources"]]
)
def test_the_abstention_marker_makes_it_not_found_and_is_never_shown(pieces: list[str]) -> None:
    for stream in (True, False):
        shown, a = events(engine(ScriptedWriter(pieces)), result(), stream=stream)
        assert shown == NOT_FOUND["cs"] and (a.status, a.not_found_by) == ("not_found", "llm")
        assert a.llm_called is True and a.sources == []


@pytest.mark.parametrize(
    ("pieces", "error", "fail_after"),
    [
        ([REPLY], LLMError("chat endpoint failed:\n  InternalServerError:  boom"), 0),
        (["Novák vede ", "oddělení"], LLMError("stream broke\nmid-answer"), 1),
        ([], None, 0),  # nothing written
        (["  ", "\n"], None, 0),
    ],
)
def test_a_failing_model_leaves_the_excerpt_and_one_degraded_line(
    pieces: list[str], error: Exception | None, fail_after: int
) -> None:
    for stream in (True, False):
        writer = ScriptedWriter(pieces, error=error, fail_after=fail_after)
        shown, a = events(engine(writer), result(), stream=stream)
        excerpt = f"{EXTRACTIVE_LABEL['cs']} [1]: {TEXT} [1]"
        assert (a.answer, a.extractive, a.llm_called) == (excerpt, True, True)
        [why] = a.degraded
        assert (why["component"], why["reason"]) == ("llm", "error")
        assert "\n" not in why["message"] and "  " not in why["message"], why
        # what was shown before the failure stays, and the excerpt follows it
        assert shown.endswith(excerpt) and (shown == excerpt or "\n\n" + excerpt in shown)


def test_the_same_answer_streamed_and_whole() -> None:
    cases = [
        ScriptedWriter([REPLY]),
        ScriptedWriter([ABSTAIN]),
        ScriptedWriter([REPLY], error=LLMError("down\nhard")),
        ScriptedWriter([]),
    ]
    for writer in cases:
        _, streamed = events(engine(writer), result(), stream=True)
        whole = engine(writer).answer_from(result())
        assert streamed == whole, (writer.pieces, streamed, whole)


def test_a_bug_in_the_writer_is_not_taken_for_a_model_failure() -> None:
    writer = ScriptedWriter([REPLY], error=RuntimeError("a bug"))
    with pytest.raises(RuntimeError, match="a bug"):
        engine(writer).answer_from(result())
