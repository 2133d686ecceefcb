"""The middle outcome between an answer and "not in the knowledge base": status ``related``.

The relevance filter's rules say whether the corpus speaks of a question; the answerability
stage then asks whether a passage answers it. Where a rule admitted a passage and only the focus
words or the answer type refused it, the filter is at the frontier it cannot decide: a passage
may say the same thing in other words ("požární" for "požár", "firma" for the company's name),
or answer a question of a class the answer type does not fit ("Kdo je Novák?"). Such a
question gets neither an answer nor "not in the knowledge base": the answer says that no direct
answer was found and lists the nearest sources as possibly related. A missing code, number or
name (``absent``, ``required``) is not such a frontier: the knowledge base does not have it,
and the answer stays ``not_found``.

The sentences are kept per language, as rag.language.phrases keeps the others.
"""

from __future__ import annotations

from typing import Any

from rag.answer.source import Source

# The answerability checks whose refusal leaves a question undecided (rag.search.answerability)
UNDECIDED = frozenset({"focus", "type", "count"})
MAX_RELATED = 3

# What a related answer says before its list of sources.
NO_DIRECT_ANSWER = {
    "cs": "Přímou odpověď ve znalostní bázi nemám.",
    "sk": "Priamu odpoveď v databáze znalostí nemám.",
    "pl": "Nie mam bezpośredniej odpowiedzi w bazie wiedzy.",
    "de": "Eine direkte Antwort steht nicht in der Wissensbasis.",
    "ru": "Прямого ответа в базе знаний нет.",
    "en": "No direct answer in the knowledge base.",
}
# The heading of the sources of a related answer.
RELATED_LABEL = {
    "cs": "Možná souvisí",
    "sk": "Možno súvisí",
    "pl": "Może się wiązać",
    "de": "Möglicherweise verwandt",
    "ru": "Возможно, связано",
    "en": "Possibly related",
}


def related_hits(result: Any) -> list[Any]:  # engine.SearchResult, its Hits (engine imports this)
    """The hits a related answer lists: none when any hit passed the judgement; otherwise those a
    relevance rule admitted and only the focus words or the answer type refused, in the result's
    order, the first of each document, at most :data:`MAX_RELATED`.

    Why exactly these: a rule's admission is the corpus speaking of the question; a refusal for
    focus words or answer type is the judgement the words of a passage cannot settle (other
    derivations, synonyms, question classes without an answer type). A refusal for an absent or
    required code, number or name is settled: the knowledge base does not hold the thing asked
    about, so those hits are never listed. A hit no rule admitted is not near enough to list.
    """
    if any(h.judgement.passed for h in result.hits):
        return []
    found: list[Any] = []
    documents: set[int] = set()
    for h in result.hits:
        j = h.judgement
        if j.rule is None or j.answer is None or j.answer.reason not in UNDECIDED:
            continue
        if h.candidate.document_id in documents:
            continue
        documents.add(h.candidate.document_id)
        found.append(h)
        if len(found) == MAX_RELATED:
            break
    return found


def related_sources(hits: list[Any]) -> list[Source]:
    """The hits as sources, their evidence marked ``related`` (it admitted them near, not as an
    answer)."""
    sources = [h.source() for h in hits]
    for s in sources:
        s.evidence["related"] = True
    return sources


def related_text(lang: str, sources: list[Source]) -> str:
    """The related answer's text: no direct answer, then the sources by number, title and id;
    nothing taken from their text, so nothing is asserted."""
    lines = [f"{NO_DIRECT_ANSWER[lang]} {RELATED_LABEL[lang]}:"]
    for i, s in enumerate(sources, 1):
        lines.append(f"[{i}] {s.title} ({s.source_id})" if s.title else f"[{i}] {s.source_id}")
    return "\n".join(lines)
