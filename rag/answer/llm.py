"""An OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, OpenAI) that writes answers.

The prompt numbers the sources and quotes their text as data between markers; the system prompt's
rules come first and say that nothing inside a source can change them.

The relevance filter admits sources that speak of a question's topic; whether they hold the answer
is the model's call. A model that finds no answer replies with :data:`ABSTAIN`, and the answer
becomes ``not_found`` like the filter's own, instead of a sentence saying so inside an "answer".
Sources of a ``related`` answer (rag.answer.related) passed no judgement: their own rules
(prompts/related.txt) tell the model so, and its :data:`ABSTAIN` leaves the related list.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import LLMError
from rag.language.phrases import LANG_NAMES
from rag.settings import Settings

if TYPE_CHECKING:
    from rag.answer.source import Source

PROMPTS = Path(__file__).resolve().parent / "prompts"
ABSTAIN = "NOT_IN_SOURCES"
# Wrapping a model may put around a bare reply: whitespace, markdown emphasis, quotes, backticks.
_WRAPPING = " \t\r\n*_`'\"„“”«»"
MAX_SOURCE_CHARS = 4000


def _prompt(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def quote_sources(sources: list[Source]) -> str:
    """Numbered sources, each fenced so that its text cannot pose as a new section."""
    parts = []
    for i, s in enumerate(sources, 1):
        body = s.text[:MAX_SOURCE_CHARS].replace("<<<", "‹‹‹").replace(">>>", "›››")
        title = f" ({s.title})" if s.title else ""
        parts.append(f"[{i}] {s.source_id}{title}\n<<<\n{body}\n>>> END [{i}]")
    return "\n\n".join(parts)


def build_messages(
    question: str,
    sources: list[Source],
    lang: str,
    history: list[dict[str, str]],
    *,
    related: bool = False,
) -> list[dict[str, str]]:
    """System rules, earlier turns, then the sources and the question.

    ``related``: no source passed the judgement and these are only near the question
    (rag.answer.related); the rules say that they may not answer it.
    """
    system = _prompt("related" if related else "system").format(
        lang_name=LANG_NAMES.get(lang, "the question's language"), abstain=ABSTAIN
    )
    messages = [{"role": "system", "content": system}]
    for turn in history:
        if turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str):
            messages.append({"role": turn["role"], "content": turn["content"]})
    user = _prompt("user").format(sources=quote_sources(sources), question=question)
    messages.append({"role": "user", "content": user})
    return messages


class ChatLLM:
    """Writes answers through any OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    def __init__(self, settings: Settings) -> None:
        # openai is imported here: only services with an LLM configured need it.
        import openai

        self.model = settings.llm_model or "default"
        self._client = openai.OpenAI(
            base_url=settings.llm_url.rstrip("/")
            + ("" if settings.llm_url.rstrip("/").endswith("/v1") else "/v1"),
            api_key=settings.llm_api_key or "not-needed",
            timeout=settings.llm_timeout,
            max_retries=0,
        )

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
        """One chat completion; every failure becomes LLMError."""
        import openai

        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]  # plain role/content dicts
                temperature=0,
                **kwargs,  # type: ignore[arg-type]
            )
            content = response.choices[0].message.content
        except openai.APIError as e:
            raise LLMError(f"chat endpoint failed: {type(e).__name__}: {e}") from e
        except (IndexError, AttributeError, TypeError, ValueError) as e:
            raise LLMError(f"chat endpoint returned an unusable response: {e}") from e
        if not isinstance(content, str) or not content.strip():
            raise LLMError("chat endpoint returned an empty answer")
        return content.strip()

    def stream(self, messages: list[dict[str, str]], **kwargs: Any) -> Iterator[str]:
        """One streamed chat completion, piece by piece; every failure becomes LLMError.

        The HTTP response is closed when the caller stops iterating early (a client that went away).
        """
        import httpx
        import openai

        try:
            response: Any = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]  # plain role/content dicts
                temperature=0,
                stream=True,  # type: ignore[arg-type]
                **kwargs,
            )
        except openai.APIError as e:
            raise LLMError(f"chat endpoint failed: {type(e).__name__}: {e}") from e
        try:
            with response:
                for chunk in response:
                    if not chunk.choices:
                        continue
                    piece = chunk.choices[0].delta.content
                    if piece:
                        yield piece
        except openai.APIError as e:
            raise LLMError(f"chat endpoint failed while streaming: {type(e).__name__}: {e}") from e
        # The stream's body is read lazily, outside the client's own error mapping.
        except httpx.HTTPError as e:
            raise LLMError(f"chat endpoint failed while streaming: {type(e).__name__}: {e}") from e
        except (IndexError, AttributeError, TypeError, ValueError) as e:
            raise LLMError(f"chat endpoint streamed an unusable response: {e}") from e

    def answer(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> str:
        return self.complete(build_messages(question, sources, lang, history, related=related))

    def answer_stream(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> Iterator[str]:
        """The answer of :meth:`answer`, streamed; the caller checks that it is not empty."""
        return self.stream(build_messages(question, sources, lang, history, related=related))


def _probe(text: str) -> str:
    return text.lstrip(_WRAPPING).upper()


def abstains(text: str) -> bool:
    """Whether a model's reply is the abstention marker (however wrapped, whatever follows it)."""
    return _probe(text).startswith(ABSTAIN)


class AbstentionGate:
    """Holds back a streamed reply until it is clear whether it is the abstention marker.

    Pieces pass through unchanged as soon as the reply's start differs from the marker, so an
    ordinary answer streams with a delay of a few characters at most; the marker never reaches
    the user.
    """

    def __init__(self) -> None:
        self._held: list[str] = []
        self.decided = False
        self.abstained = False

    def feed(self, piece: str) -> str:
        """The text to pass on now ("" while undecided or after the marker)."""
        if self.decided:
            return "" if self.abstained else piece
        self._held.append(piece)
        probe = _probe("".join(self._held))
        if probe.startswith(ABSTAIN):
            self.decided = self.abstained = True
            return ""
        if ABSTAIN.startswith(probe):  # still a prefix of the marker (or only wrapping so far)
            return ""
        self.decided = True
        return self.flush()

    def flush(self) -> str:
        """What is still held back; at the end of a reply too short to decide, it is answer text."""
        text, self._held = "".join(self._held), []
        return "" if self.abstained else text


def make_llm(settings: Settings) -> ChatLLM | None:
    """The configured chat model, or None when RAG_LLM_URL is unset."""
    return ChatLLM(settings) if settings.llm_url else None
