"""The follow-up rule set (rag.answer.followup) as tables, without a database or a server.

Which questions lean on an earlier one, what the rules carry into them, and how the rewrite by a
chat model is checked and falls back to the rules. The HTTP tests (test_api_answers) show the
same rules through /v1/ask.
"""

from __future__ import annotations

from typing import Any

import pytest

from rag.answer.followup import (
    ANSWER_TURN_CHARS,
    carry,
    is_followup,
    rewrite_with_llm,
    rewrite_with_rules,
    standalone_question,
    useful_history,
    user_turns,
)
from rag.errors import LLMError


class ScriptedCompleter:
    """A chat model that replies with ``reply`` (or raises it, if it is an exception)."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
        self.calls.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


@pytest.mark.parametrize(
    ("question", "followup"),
    [
        ("A za co dostal cenu?", True),  # cs continuation word
        ("Za co dostal Novák cenu?", False),
        ("Kdo je Novák?", False),
        ("Kde?", True),  # no content word of its own
        ("A co Dvořáková?", True),
        ("Und wo wohnt er?", True),  # de continuation and pronoun
        ("Was kostet das Parken?", False),
        ("А где он живёт?", True),  # ru
        ("And what did he win?", True),
        ("What about the prize?", True),  # en two-word opening
        ("How about Brno?", True),
        ("What is the prize?", False),  # "what" alone starts a new question
        ("", False),
    ],
)
def test_which_questions_are_followups(question: str, followup: bool) -> None:
    assert is_followup(question) is followup


@pytest.mark.parametrize(
    ("question", "previous", "carried"),
    [
        # the previous question's names are appended
        ("A za co dostal cenu?", "Kdo je Novák?", "A za co dostal cenu? (Novák)"),
        ("What about him?", "Who is John Smith?", "What about him? (John, Smith)"),
        ("Und wo wohnt er?", "Wer ist Thomas Müller?", "Und wo wohnt er? (Thomas, Müller)"),
        # a question naming its own entity borrows the other content words instead
        (
            "A co Dvořáková?",
            "Kolik vydělává Novák ve skladu?",
            "A co Dvořáková? (vydělává, skladu)",
        ),
        # German capitals are nouns, not names; a code is an entity there too
        (
            "Und wo wohnt der Direktor?",
            "Wer ist Thomas Müller?",
            "Und wo wohnt der Direktor? (Thomas, Müller)",
        ),
        (
            "Und wo ist das ZX-4411?",
            "Wer hat Thomas Müller gesehen?",
            "Und wo ist das ZX-4411? (gesehen)",
        ),
        # without names, the content words
        ("A kde?", "Kdy je porada oddělení vývoje?", "A kde? (porada, oddělení, vývoje)"),
        # not a follow-up: unchanged
        ("Kdo je Novák?", "Kdy je porada?", "Kdo je Novák?"),
        # nothing new to carry
        ("A Novák?", "Kdo je Novák?", "A Novák?"),
    ],
)
def test_what_a_followup_carries(question: str, previous: str, carried: str) -> None:
    assert carry(question, previous) == carried


def test_greetings_and_thanks_are_neither_followups_nor_subjects() -> None:
    earlier = ["Dobrý den, kolik stojí parkování v Brně? Děkuji."]
    rewritten = rewrite_with_rules("Díky! A v Praze?", earlier)
    assert rewritten.startswith("A v Praze?") and "parkování" in rewritten
    assert "Děkuji" not in rewritten and "Dobrý" not in rewritten
    # no follow-up: the question as asked, formulas and all (the search cuts them itself)
    assert rewrite_with_rules("Dobrý den, kdo je Novák?", earlier) == "Dobrý den, kdo je Novák?"


def test_a_chain_of_followups_keeps_its_subject() -> None:
    earlier = ["Kdo je Novák?", "A za co dostal cenu?"]
    assert rewrite_with_rules("A kdy?", earlier) == "A kdy? (Novák)"


def test_earlier_turns_are_cut_to_what_is_used() -> None:
    history = [
        {"role": "user", "content": "x" * 50},
        {"role": "assistant", "content": "y" * (ANSWER_TURN_CHARS + 10)},
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": 5},
    ]
    kept = useful_history(history, max_question_chars=20)
    assert kept == [
        {"role": "user", "content": "x" * 20},
        {"role": "assistant", "content": "y" * ANSWER_TURN_CHARS},
    ]
    assert user_turns([*kept, {"role": "user", "content": "  "}]) == ["x" * 20]


@pytest.mark.parametrize(
    ("history", "question", "method"),
    [
        ([], "A za co dostal cenu?", "none"),  # nothing earlier: asked as is
        ([{"role": "assistant", "content": "Dobrý den."}], "A za co?", "none"),
        ([{"role": "user", "content": "Kdo je Novák?"}], "A za co dostal cenu? (Novák)", "rules"),
    ],
)
def test_the_rules_rewrite_without_a_model(
    history: list[dict[str, str]], question: str, method: str
) -> None:
    rewrite = standalone_question(question.split(" (")[0], history)
    assert (rewrite.question, rewrite.method, rewrite.degraded) == (question, method, [])


def test_a_rules_rewrite_over_the_limit_keeps_the_question_as_asked() -> None:
    history = [{"role": "user", "content": "Kdo je Jan Novák z oddělení vývoje?"}]
    rewrite = standalone_question("A za co dostal cenu?", history, max_chars=25)
    assert (rewrite.question, rewrite.method) == ("A za co dostal cenu?", "none")


@pytest.mark.parametrize(
    ("reply", "rewritten"),
    [
        ("Za co dostal Novák cenu?", "Za co dostal Novák cenu?"),
        ('"Za co dostal Novák cenu?"\nDalší řádek', "Za co dostal Novák cenu?"),
        (
            "Standalone question: Wofür hat Novák den Preis bekommen?",
            "Wofür hat Novák den Preis bekommen?",
        ),
        ("Otázka: Za co dostal Novák cenu?", "Za co dostal Novák cenu?"),
        ("Frage: Wofür bekam Novák den Preis?", "Wofür bekam Novák den Preis?"),
    ],
)
def test_the_models_rewrite_is_one_clean_line(reply: str, rewritten: str) -> None:
    history = [{"role": "user", "content": "Kdo je Novák?"}]
    model = ScriptedCompleter(reply)
    rewrite = standalone_question("A za co dostal cenu?", history, llm=model)
    assert (rewrite.question, rewrite.method) == (rewritten, "llm")
    [messages] = model.calls
    assert "Kdo je Novák?" in messages[-1]["content"]  # the conversation is quoted to it


@pytest.mark.parametrize(
    "reply", ["", "   \n ", "Question:", "x" * 101, LLMError("chat endpoint failed:\n  boom")]
)
def test_an_unusable_model_rewrite_falls_back_to_the_rules(reply: str | Exception) -> None:
    history = [{"role": "user", "content": "Kdo je Novák?"}]
    rewrite = standalone_question(
        "A za co dostal cenu?", history, llm=ScriptedCompleter(reply), max_chars=100
    )
    assert (rewrite.question, rewrite.method) == ("A za co dostal cenu? (Novák)", "rules")
    [why] = rewrite.degraded
    assert (why["component"], why["reason"]) == ("followup", "error")
    assert "\n" not in why["message"], why


def test_the_model_rewrite_refuses_an_overlong_question() -> None:
    with pytest.raises(LLMError, match="not a usable question"):
        rewrite_with_llm(ScriptedCompleter("x" * 30), "A kde?", [], max_chars=20)
