"""Follow-up questions ("A za co dostal cenu?") rewritten into standalone ones before retrieval.

With a chat model configured, the model rewrites the question from the conversation
(``rag/answer/prompts/followup.txt``); the conversation is quoted as data. Without one, or when it fails,
rules do: a question that opens with a continuation word ("A ...", "And ...", "Und ..."),
refers back with a pronoun ("mu", "jeho", "tam", "he", "ihm", "ему") or has no content word of its
own gets the previous question's named entities appended ("... (Novák)"), or its content words
when it named none. A question that names its own entity ("A co Dvořáková?") borrows the previous
question's other content words instead. Earlier follow-ups are resolved first, so a chain of them
keeps its subject.

A rewrite can be wrong (a topic change that happens to start with "A"), so the engine
(:meth:`rag.answer.engine.Engine.ask`) falls back to the question as asked when the rewritten one finds
nothing.

The continuation words, pronouns and labels of every language are in :mod:`rag.language.phrases`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rag.errors import LLMError, one_line
from rag.language.courtesy import core_question
from rag.language.keys import tokenize
from rag.language.phrases import (
    ANAPHORA_WORDS,
    CONTINUATION_PAIRS,
    CONTINUATION_WORDS,
    NOUNS_CAPITALIZED,
    REWRITE_PREFIXES,
)
from rag.language.question_keys import QueryKeys, QueryWord, query_keys

log = logging.getLogger(__name__)

PROMPTS = Path(__file__).resolve().parent / "prompts"
MAX_TURNS = 6  # earlier turns shown to the model
MAX_TURN_CHARS = 600  # of each turn, so one long answer cannot crowd out the rest
# Of an earlier answer kept for the answering model; the rewrite shows it only MAX_TURN_CHARS.
ANSWER_TURN_CHARS = 2000


class Completer(Protocol):
    """A chat model that completes a list of messages (rag.answer.llm.ChatLLM)."""

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str: ...


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The question retrieval searches for, and how it was obtained."""

    question: str
    original: str
    method: str  # "none" (asked as is), "rules" or "llm"
    degraded: list[dict[str, str]] = field(default_factory=list)

    @property
    def rewritten(self) -> bool:
        return self.question != self.original


def useful_history(
    history: Sequence[Mapping[str, Any]], max_question_chars: int
) -> list[dict[str, str]]:
    """The earlier turns cut to what the rewrite and the answer use.

    An earlier question is never longer than a question may be; an earlier answer is kept to
    its first ANSWER_TURN_CHARS characters.
    """
    kept = []
    for t in history:
        role, content = t.get("role"), t.get("content")
        if role not in ("user", "assistant") or not isinstance(content, str):
            continue
        limit = max_question_chars if role == "user" else ANSWER_TURN_CHARS
        kept.append({"role": str(role), "content": content[:limit]})
    return kept


def user_turns(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """The text of the earlier user turns, oldest first."""
    return [
        t["content"]
        for t in history
        if t.get("role") == "user" and isinstance(t.get("content"), str) and t["content"].strip()
    ]


def standalone_question(
    question: str,
    history: Sequence[Mapping[str, Any]],
    *,
    llm: Completer | None = None,
    max_chars: int = 2000,
) -> Rewrite:
    """``question`` rewritten so that it can be understood without ``history``.

    Args:
        question: the last user question.
        history: earlier turns, ``{"role": "user" | "assistant", "content": str}``.
        llm: a chat model to rewrite with; rules are used without one, or when it fails.
        max_chars: the longest question accepted (a longer rewrite is refused: the model's
            falls back to the rules, the rules' to the question as asked).
    """
    earlier = user_turns(history)
    if not earlier:
        return Rewrite(question, question, "none")
    why: list[dict[str, str]] = []
    if llm is not None:
        try:
            text = rewrite_with_llm(llm, question, history, max_chars)
            return Rewrite(text, question, "llm" if text != question else "none")
        except LLMError as e:
            log.warning("follow-up rewrite by the LLM failed, using rules: %s", e)
            why.append({"component": "followup", "reason": "error", "message": one_line(e)})
    rewritten = rewrite_with_rules(question, earlier)
    if len(rewritten) > max_chars:
        rewritten = question
    return Rewrite(rewritten, question, "rules" if rewritten != question else "none", why)


# --- rules ---------------------------------------------------------------------------------------


def rewrite_with_rules(question: str, earlier: Sequence[str]) -> str:
    """Carry the subject of the earlier questions into ``question`` when it is a follow-up.

    Greetings and thanks are not subjects: each turn is read without them
    (:mod:`rag.language.courtesy`), so "Díky! A v Praze?" after "Dobrý den, kolik stojí
    parkování v Brně?" is the follow-up "A v Praze? (parkování)". A question that is no
    follow-up comes back as asked.
    """
    turns = [core_question(t) for t in earlier]
    context = turns[0]
    for previous in turns[1:]:
        context = carry(previous, context)
    core = core_question(question)
    carried = carry(core, context)
    return question if carried == core else carried


def is_followup(question: str) -> bool:
    """Whether ``question`` leans on an earlier one (continuation word, pronoun, no content)."""
    tokens = [t.lower() for t in tokenize(question)]
    if not tokens:
        return False
    if tokens[0] in CONTINUATION_WORDS or " ".join(tokens[:2]) in CONTINUATION_PAIRS:
        return True
    if any(t in ANAPHORA_WORDS for t in tokens):
        return True
    return not query_keys(question).words


def carry(question: str, previous: str) -> str:
    """``question`` with the subject of ``previous`` appended, if it is a follow-up of it."""
    if not is_followup(question):
        return question
    own = query_keys(question)
    prev = query_keys(previous)
    have = {w.form for w in own.words}
    prev_entities = entities(prev)
    own_entities = entities(own)
    if own.lang in NOUNS_CAPITALIZED:  # there a capital letter marks every noun, not a name
        own_entities = [w for w in own_entities if _is_code(w.surface)]
    if own_entities:
        carried = [w for w in prev.words if w not in prev_entities]
    else:
        carried = prev_entities or list(prev.words)
    surfaces = [w.surface for w in carried if w.form not in have]
    if not surfaces:
        return question
    return f"{question.rstrip()} ({', '.join(surfaces)})"


def entities(keys: QueryKeys) -> list[QueryWord]:
    """Content words that name something: capitalized mid-sentence, all capitals, or codes."""
    first = keys.all_words[0] if keys.all_words else None
    found = []
    for w in keys.words:
        if _is_code(w.surface) or (w.surface[:1].isupper() and w is not first):
            found.append(w)
    return found


def _is_code(surface: str) -> bool:
    return any(c.isdigit() for c in surface) or (len(surface) > 1 and surface.isupper())


# --- the chat model ------------------------------------------------------------------------------


def rewrite_with_llm(
    llm: Completer, question: str, history: Sequence[Mapping[str, Any]], max_chars: int
) -> str:
    """The model's standalone version of ``question``.

    Raises:
        LLMError: the model failed or answered something that is not one usable question.
    """
    system = (PROMPTS / "followup.txt").read_text(encoding="utf-8")
    turns = [
        t
        for t in history
        if t.get("role") in ("user", "assistant") and isinstance(t.get("content"), str)
    ][-MAX_TURNS:]
    conversation = (
        "\n".join(f"{t['role']}: {' '.join(t['content'].split())[:MAX_TURN_CHARS]}" for t in turns)
        .replace("<<<", "‹‹‹")
        .replace(">>>", "›››")
    )
    user = (
        (PROMPTS / "followup_user.txt")
        .read_text(encoding="utf-8")
        .format(conversation=conversation, question=" ".join(question.split()))
    )
    text = llm.complete(
        [{"role": "system", "content": system}, {"role": "user", "content": user}], max_tokens=200
    )
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise LLMError("the follow-up rewrite is empty")
    rewritten = lines[0].strip("\"'„“”«» ")
    for prefix in REWRITE_PREFIXES:
        if rewritten.lower().startswith(prefix.lower()):
            rewritten = rewritten[len(prefix) :].strip()
    if not rewritten or len(rewritten) > max_chars:
        raise LLMError(f"the follow-up rewrite is not a usable question: {rewritten[:80]!r}")
    return rewritten
