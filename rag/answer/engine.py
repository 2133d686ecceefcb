"""The one question path every caller goes through (``rag ask``, ``/v1/ask`` as JSON or server-sent
events, ``/v1/chat/completions``, evaluation): the question validated once, a follow-up rewritten
(rag.answer.followup), retrieval, the relevance and answerability judgement, then not_found | extractive |
LLM, whole or streamed. The HTTP layer only puts the answer into its shapes.

"Not in the knowledge base" is an ordinary answer: status ``not_found``, a fixed sentence in the
question's language, and no LLM call. ``not_found_by`` says who decided: ``filter`` (no candidate
had evidence; the LLM was not called) or ``llm`` (sources spoke of the topic, and the model found
no answer in them).

Between the two, status ``related`` (rag.answer.related, ``RAG_RELATED_ANSWERS``): no candidate
passed, but the filter could not decide. The answer says that there is no direct answer and
lists the nearest sources; a chat model, when configured, is asked to answer only what they say,
and its answer keeps the status, so that clients show it as uncertain.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from rag.answer.followup import standalone_question
from rag.answer.llm import AbstentionGate
from rag.answer.related import related_hits, related_sources, related_text
from rag.answer.source import Source
from rag.db import Database
from rag.embedders import Embedder
from rag.errors import LLMError, QuestionError, one_line
from rag.ingest.chunking import split_sentences
from rag.ingest.freshness import Standing
from rag.language.keys import chunk_keys, normalize
from rag.language.phrases import EXTRACTIVE_LABEL, NOT_FOUND, answer_language
from rag.logs import private
from rag.metrics import record_retrieval
from rag.search.filters import SearchFilter
from rag.search.profiles import fusion_settings, relation_fusion, thresholds
from rag.search.relations import MAX_DISTANCE, reference_distance
from rag.search.relevance import FilterParams, Judgement, judge
from rag.search.rerank import Reranker, rerank_order
from rag.search.retrieve import Candidate, Mode, Retrieval, retrieve
from rag.search.thresholds import Thresholds
from rag.settings import Settings

log = logging.getLogger(__name__)

MAX_SOURCES = 5
# ("sources", Answer without the model's text), ("delta", str)..., then ("answer", Answer)
AnswerEvent = tuple[Literal["sources", "delta", "answer"], Any]


class AnswerWriter(Protocol):
    """A chat model (rag.answer.llm.ChatLLM): it writes an answer citing numbered sources ([1], [2], ...),
    whole or streamed, and completes messages for the follow-up rewrite (rag.answer.followup)."""

    model: str  # the name /v1/stats reports

    # related: the sources are only near the question (rag/answer/prompts/related.txt)
    def answer(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> str: ...

    def answer_stream(
        self,
        question: str,
        sources: list[Source],
        lang: str,
        history: list[dict[str, str]],
        *,
        related: bool = False,
    ) -> Iterator[str]: ...

    def complete(self, messages: list[dict[str, str]], **kwargs: Any) -> str: ...


@dataclass
class Hit:
    candidate: Candidate
    judgement: Judgement
    # the vector retriever ran, but this chunk has no vector of the model yet (still queued)
    vector_pending: bool = False
    thresholds: str = "same"  # the threshold set that judged it (rag.search.relations)
    standing: Standing | None = None  # stale (superseded hits never get this far)
    rerank_score: float | None = None

    @property
    def evidence(self) -> dict[str, Any]:
        out = evidence(
            self.candidate,
            self.judgement,
            vector_pending=self.vector_pending,
            thresholds=self.thresholds,
        )
        if self.standing is not None:
            out.update(self.standing.evidence())
        if self.rerank_score is not None:
            out["rerank_score"] = round(self.rerank_score, 6)
        return out

    def source(self) -> Source:
        """The hit as an answer's source, with its evidence."""
        c = self.candidate
        return Source(c.source_id, c.document_id, c.chunk_id, c.title, c.text, self.evidence)

    def as_dict(self) -> dict[str, Any]:
        c = self.candidate
        return {
            "source_id": c.source_id,
            "document_id": c.document_id,
            "chunk_id": c.chunk_id,
            "title": c.title,
            "text": c.text,
            "fts_rank": c.fts_rank,
            "vector_rank": c.vector_rank,
            "distance": c.distance,
            "bm25": c.bm25,
            "rrf_score": c.rrf_score,
            "evidence": self.evidence,
            "passed": self.judgement.passed,
        }


@dataclass
class SearchResult:
    question: str
    lang: str
    hits: list[Hit]
    degraded: list[dict[str, str]]
    retrieval: Retrieval
    # candidates of superseded documents, left out: {"source_id", "chunk_id", "superseded_by"}
    hidden: list[dict[str, Any]] = field(default_factory=list)
    relation: str = "same"  # the question's language relation to the owner's documents
    thresholds: str = "same"  # the threshold set that judged its candidates

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            # what was embedded and keyed when it is not the question as typed: without its
            # greeting or thanks, spelled as the corpus spells it (rag.language.courtesy,
            # rag.language.diacritics); null when the question was searched as typed
            "searched_as": self.retrieval.searched_as,
            "lang": self.lang,
            "relation": self.relation,
            "thresholds": self.thresholds,
            "hits": [h.as_dict() for h in self.hits],
            "hidden": self.hidden,
            "degraded": self.degraded,
            "timings_ms": {k: round(v, 2) for k, v in self.retrieval.timings_ms.items()},
        }


@dataclass
class Answer:
    status: str  # "answered" | "related" | "not_found"
    answer: str
    lang: str
    sources: list[Source]
    llm_called: bool
    extractive: bool
    degraded: list[dict[str, str]] = field(default_factory=list)
    citations: list[int] = field(default_factory=list)
    not_found_by: str | None = None  # "filter" | "llm" when status is "not_found"
    # the question the sources were searched for (a follow-up rewritten); the HTTP shapes show it
    question: str = ""
    # the text states what the sources say (an excerpt, the model's answer); false when it only
    # says that there is none, or lists the related sources
    asserted: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "not_found_by": self.not_found_by,
            "answer": self.answer,
            "lang": self.lang,
            "extractive": self.extractive,
            "asserted": self.asserted,
            "citations": self.citations,
            "sources": [s.as_dict() for s in self.sources],
            "llm_called": self.llm_called,
            "degraded": self.degraded,
        }


def evidence(
    c: Candidate, j: Judgement, *, vector_pending: bool = False, thresholds: str = "same"
) -> dict[str, Any]:
    """What admitted (or would have admitted) a candidate, for humans and for evaluation.

    ``vector_pending``: the chunk has no vector of the model yet, so only the word rules could
    judge it; the evidence says so. ``thresholds``: the set that judged it (rag.search.relations).
    """
    found = {"fts_rank": c.fts_rank, "vector_rank": c.vector_rank, **j.as_dict()}
    found["thresholds"] = thresholds
    if vector_pending:
        found["vector_pending"] = True
    return found


def judged(
    r: Retrieval, params: FilterParams | Thresholds, *, complete: bool = True
) -> tuple[list[Hit], str, str]:
    """Judge a retrieval's candidates with the set its language relation selects.

    ``complete``: every candidate's evidence window, as evaluation reads them; a live search
    skips the windows of candidates no rule can admit (:func:`rag.search.relevance.judge`).

    A single ``FilterParams`` judges every question (calibration, an explicit override): it is
    reported under the relation's own name.
    """
    contrast = 0.0
    if isinstance(params, FilterParams):
        rel, _, _ = Thresholds(params).choose(r.query.lang, r.owner_langs)
        name, chosen = rel, params
    else:
        rel, name, chosen = params.choose(r.query.lang, r.owner_langs)
        contrast = params.contrast_of(name)
    judgements = judge(relative(r, contrast), chosen, complete=complete)
    hits = [Hit(c, j, thresholds=name) for c, j in zip(r.candidates, judgements, strict=True)]
    return hits, rel, name


def relative(r: Retrieval, contrast: float) -> Retrieval:
    """``r`` with distances judged relative to the question's neighbourhood (rag.search.relations)."""
    if not contrast:
        return r
    reference = reference_distance(
        [c.distance for c in r.candidates if c.vector_rank is not None and c.distance is not None]
    )
    shift = contrast * (MAX_DISTANCE - reference)
    moved = [
        c if c.distance is None else replace(c, distance=c.distance + shift) for c in r.candidates
    ]
    return replace(r, candidates=moved)


class Engine:
    """Retrieval, the relevance filter and answering for one database and embedding model."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        embedder: Embedder | None,
        llm: AnswerWriter | None = None,
        params: FilterParams | Thresholds | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.db = db
        # the profile's RRF knobs for this model, when calibration chose them
        self.settings = fusion_settings(settings, embedder.model_id if embedder else None)
        # and a relation's own ones (other-language questions: rag.search.relations)
        self.fusion = relation_fusion(settings, embedder.model_id if embedder else None)
        self.embedder = embedder
        self.llm = llm
        self.reranker = reranker
        self.profile_path: Path | None = None
        if params is None:
            params, self.profile_path = thresholds(
                settings, embedder.model_id if embedder else None, reranker=reranker
            )
        elif isinstance(params, FilterParams):
            params = Thresholds(params)
        self.thresholds = params
        self.params = params.default  # the set for questions in the corpus's language

    def validate(self, question: str) -> str:
        """The question, normalized; the one check of every caller's question.

        Raises:
            QuestionError: not a string, empty, or over ``max_question_chars`` once normalized.
        """
        if not isinstance(question, str):
            raise QuestionError("the question must be a string")
        q = normalize(question).strip()
        if not q:
            raise QuestionError("the question is empty")
        limit = self.settings.max_question_chars
        if len(q) > limit:
            raise QuestionError(f"the question is {len(q)} characters; the limit is {limit}")
        return q

    def search(
        self,
        owner_id: int | None,
        question: str,
        *,
        mode: Mode = "hybrid",
        limit: int | None = None,
        params: FilterParams | None = None,
        vector: Any = None,
        filters: SearchFilter | None = None,
    ) -> SearchResult:
        """Fused candidates with their evidence and whether the filter admits each.

        The question's language relation to the owner's documents picks the threshold set
        (``params`` overrides it for every question). ``filters`` narrows both retrievers to the
        documents it admits (:mod:`rag.search.filters`). Candidates of superseded documents are left out
        (listed in ``hidden``), the reranker (if any) re-orders the top ones, and candidates of
        stale documents follow the fresh ones.
        """
        return self._search(
            owner_id,
            self.validate(question),
            mode=mode,
            limit=limit,
            params=params,
            vector=vector,
            filters=filters,
        )

    def _search(
        self,
        owner_id: int | None,
        q: str,
        *,
        mode: Mode = "hybrid",
        limit: int | None = None,
        params: FilterParams | None = None,
        vector: Any = None,
        filters: SearchFilter | None = None,
    ) -> SearchResult:
        r = retrieve(
            self.db,
            self.settings,
            self.embedder,
            owner_id,
            q,
            mode=mode,
            vector=vector,
            filters=filters,
            fusion=self.fusion,
        )
        hidden, standings = self._standing(r)
        hits, rel, name = judged(r, params or self.thresholds, complete=False)
        # A candidate without a distance while the vector retriever ran has no vector of the
        # model yet: the word rules alone judged it.
        vectors_ran = (
            mode != "fts"
            and self.embedder is not None
            and not any(d.get("component") == "vector" for d in r.degraded)
        )
        for h in hits:
            h.vector_pending = vectors_ran and h.candidate.distance is None
            h.standing = standings.get(h.candidate.document_id)
        hits = self._rerank(q, hits, r)
        # stale documents after fresh ones, each group in its (reranked) fused order
        hits.sort(key=lambda h: h.standing is not None and h.standing.stale)
        record_retrieval(r.timings_ms)
        degraded = list(r.degraded)
        pending = sum(h.vector_pending for h in hits)
        if pending:
            assert self.embedder is not None
            degraded.append(
                {
                    "component": "embedding-queue",
                    "reason": "not-embedded",
                    "message": f"{pending} of {len(hits)} candidates have no vector of "
                    f"{self.embedder.model_id} yet; the word rules alone judged them",
                }
            )
        if limit is not None:
            hits = hits[:limit]
        return SearchResult(
            q, r.query.lang, hits, degraded, r, hidden=hidden, relation=rel, thresholds=name
        )

    def _standing(self, r: Retrieval) -> tuple[list[dict[str, Any]], dict[int, Standing]]:
        """Drop superseded documents' candidates from ``r``; the dropped, and the stale by id
        (the retrieval read each candidate's standing with it)."""
        found = {c.document_id: c.standing for c in r.candidates if c.standing is not None}
        hidden = [
            {"source_id": c.source_id, "chunk_id": c.chunk_id, "superseded_by": s.superseded_by}
            for c in r.candidates
            if (s := found.get(c.document_id)) is not None and s.superseded_by
        ]
        if hidden:
            r.candidates = [
                c
                for c in r.candidates
                if (s := found.get(c.document_id)) is None or not s.superseded_by
            ]
        return hidden, found

    def _rerank(self, question: str, hits: list[Hit], r: Retrieval) -> list[Hit]:
        """The top ``rerank_top`` hits in the reranker's order; unchanged when it fails."""
        top = hits[: self.settings.rerank_top]
        if self.reranker is None or len(top) < 2:
            return hits
        order, scores, why, seconds = rerank_order(
            self.reranker, question, [h.candidate.text for h in top], self.settings.rerank_timeout
        )
        r.timings_ms["rerank"] = seconds * 1000
        if why is not None:
            log.warning("reranker failed, keeping the fused order: %s", why["message"])
            r.degraded.append(why)
            return hits
        assert order is not None
        for h, score in zip(top, scores, strict=True):
            h.rerank_score = score
        return [top[i] for i in order] + hits[len(top) :]

    def judge(self, r: Retrieval, params: FilterParams | Thresholds | None = None) -> SearchResult:
        """A retrieval's candidates judged as :meth:`search` judges them, without the database.

        Evaluation re-judges its cached retrievals so (no standing, no reranker); ``params``
        replaces the engine's thresholds.
        """
        hits, rel, name = judged(r, params or self.thresholds)
        return SearchResult(
            r.question, r.query.lang, hits, r.degraded, r, relation=rel, thresholds=name
        )

    def find(
        self,
        owner_id: int | None,
        question: str,
        *,
        history: Sequence[Mapping[str, Any]] = (),
        params: FilterParams | None = None,
        filters: SearchFilter | None = None,
        use_llm: bool = True,
    ) -> SearchResult:
        """The sources for a question: validated, a follow-up rewritten, then searched.

        The chat model rewrites a follow-up when there is one (and ``use_llm``), rules otherwise
        (rag.answer.followup). A rewrite that finds nothing the filter admits gives way to the question
        as asked, when that does.

        Raises:
            QuestionError: the question is unusable (:meth:`validate`).
        """
        q = self.validate(question)
        rewrite = standalone_question(
            q,
            history,
            llm=self.llm if use_llm else None,
            max_chars=self.settings.max_question_chars,
        )
        searched = normalize(rewrite.question).strip() or q
        result = self._search(owner_id, searched, params=params, filters=filters)
        if searched != q and not any(h.judgement.passed for h in result.hits):
            plain = self._search(owner_id, q, params=params, filters=filters)
            if any(h.judgement.passed for h in plain.hits):
                log.info(
                    "follow-up rewrite %s found nothing; the question as asked did",
                    private(searched),
                )
                result = plain
        result.degraded.extend(rewrite.degraded)
        return result

    def ask(
        self,
        owner_id: int | None,
        question: str,
        *,
        history: list[dict[str, str]] | None = None,
        params: FilterParams | None = None,
        use_llm: bool = True,
        filters: SearchFilter | None = None,
    ) -> Answer:
        """Answer from the sources that pass the filter, or say it is not in the knowledge base.

        Raises:
            QuestionError: the question is unusable (:meth:`validate`).
        """
        turns = history or []
        result = self.find(
            owner_id, question, history=turns, params=params, filters=filters, use_llm=use_llm
        )
        return self.answer_from(result, history=turns, use_llm=use_llm)

    def ask_stream(
        self,
        owner_id: int | None,
        question: str,
        *,
        history: list[dict[str, str]] | None = None,
        filters: SearchFilter | None = None,
    ) -> Iterator[AnswerEvent]:
        """:meth:`ask` as events (:data:`AnswerEvent`), the answer streamed from the chat model.

        The question is validated and searched before this returns, so an unusable question or
        a failed retrieval raises here, before the first event; the answer is written as the
        events are read.
        """
        turns = history or []
        result = self.find(owner_id, question, history=turns, filters=filters)
        return self.answer_events(result, history=turns)

    def answer_from(
        self,
        result: SearchResult,
        *,
        history: list[dict[str, str]] | None = None,
        use_llm: bool = True,
    ) -> Answer:
        """The complete answer to a search result (the last of its :meth:`answer_events`)."""
        final: Answer | None = None
        for kind, value in self.answer_events(
            result, history=history, use_llm=use_llm, stream=False
        ):
            if kind == "answer":
                final = value
        assert final is not None
        return final

    def answer_events(
        self,
        result: SearchResult,
        *,
        history: list[dict[str, str]] | None = None,
        use_llm: bool = True,
        stream: bool = True,
    ) -> Iterator[AnswerEvent]:
        """The sources first, then the answer in pieces, then the complete :class:`Answer`.

        Without sources the filter admits, the answer is not_found (or related) and the chat
        model is never called for not_found; without a chat model (or ``use_llm``) it is the
        extractive answer, or the related list. ``stream`` asks the model for its answer piece by
        piece rather than whole.
        """
        base = self._without_llm(result)
        yield "sources", base
        if base.status == "not_found" or self.llm is None or not use_llm:
            yield "delta", base.answer
            yield "answer", base
            return
        yield from self._written(base, history or [], stream=stream)

    def _without_llm(self, result: SearchResult) -> Answer:
        """not_found by the filter, the related list, or the extractive answer from the admitted
        sources."""
        lang = answer_language(result.lang)
        passed = [h for h in result.hits if h.judgement.passed][:MAX_SOURCES]
        degraded = list(result.degraded)
        if not passed:
            near = related_hits(result) if self.settings.related_answers else []
            if near:
                sources = related_sources(near)
                text = related_text(lang, sources)
                return Answer(
                    "related", text, lang, sources, False, False, degraded, question=result.question
                )
            return not_found(lang, degraded, by="filter", question=result.question)
        sources = [h.source() for h in passed]
        text = f"{EXTRACTIVE_LABEL[lang]} [1]: {excerpt(result, sources[0])} [1]"
        return Answer(
            "answered",
            text,
            lang,
            sources,
            False,
            True,
            degraded,
            [1],
            question=result.question,
            asserted=True,
        )

    def _written(
        self, base: Answer, history: list[dict[str, str]], *, stream: bool
    ) -> Iterator[AnswerEvent]:
        """The chat model's answer from ``base``'s sources: the one place an LLM answer is built.

        The abstention marker is held back and makes the answer not_found (by "llm"); a related
        answer stays related with its list (the model is told that its sources may not answer,
        rag/answer/prompts/related.txt). A model that fails before or during its answer, or
        writes nothing, leaves ``base`` (extractive, or the related list) with a ``degraded``
        entry (its message on one line); text already passed on is followed by ``base``'s text
        after a blank line. The model's answer keeps ``base``'s status.
        """
        assert self.llm is not None
        q, sources, lang = base.question, base.sources, base.lang
        related = base.status == "related"
        pieces: list[str] = []
        shown = False
        gate = AbstentionGate()  # the abstention marker is never passed on as answer text
        try:
            if stream:
                replies = self.llm.answer_stream(q, sources, lang, history, related=related)
            else:
                replies = iter([self.llm.answer(q, sources, lang, history, related=related)])
            for piece in replies:
                pieces.append(piece)
                if passed := gate.feed(piece):
                    shown = True
                    yield "delta", passed
                if gate.abstained:
                    break
            if not gate.abstained and (rest := gate.flush()):
                shown = True
                yield "delta", rest
            text = "".join(pieces).strip()
            if not text:
                raise LLMError("chat endpoint returned an empty answer")
        except LLMError as e:
            log.warning("LLM failed, answering extractively: %s", e)
            why = {"component": "llm", "reason": "error", "message": one_line(e)}
            final = replace(base, llm_called=True, degraded=[*base.degraded, why])
            yield "delta", ("\n\n" if shown else "") + final.answer
            yield "answer", final
            return
        if gate.abstained:
            if related:
                final = replace(base, llm_called=True)
            else:
                final = not_found(lang, list(base.degraded), by="llm", question=q)
            yield "delta", final.answer
            yield "answer", final
            return
        citations = cited(text, len(sources))
        yield (
            "answer",
            Answer(
                base.status,
                text,
                lang,
                sources,
                True,
                False,
                list(base.degraded),
                citations,
                None,
                q,
                True,
            ),
        )


def not_found(lang: str, degraded: list[dict[str, str]], *, by: str, question: str = "") -> Answer:
    """The "not in the knowledge base" answer; ``by`` is "filter" or "llm" (who decided)."""
    return Answer(
        "not_found",
        NOT_FOUND[lang],
        lang,
        [],
        by == "llm",
        False,
        degraded,
        not_found_by=by,
        question=question,
    )


def cited(text: str, n_sources: int) -> list[int]:
    """The source numbers an answer cites, in order of first citation, within range."""
    seen: list[int] = []
    for m in re.finditer(r"\[(\d{1,3})\]", text):
        i = int(m.group(1))
        if 1 <= i <= n_sources and i not in seen:
            seen.append(i)
    return seen


def excerpt(result: SearchResult, source: Source) -> str:
    """The extractive answer: the source's evidence window, or without the answerability stage
    the sentences that share most question keys."""
    window = (source.evidence.get("answerability") or {}).get("window")
    if window:
        start, end = window
        return " ".join(source.text[start:end].split())
    return best_sentences(result, source.text)


def best_sentences(result: SearchResult, text: str, k: int = 2) -> str:
    """The ``k`` sentences of ``text`` that share most question keys, in their original order."""
    sentences = split_sentences(text)
    if len(sentences) <= k:
        return " ".join(sentences)
    wanted = {key for w in result.retrieval.query.words for key in w.keys if key[0] in "ls"}
    for keys in result.retrieval.form_keys.values():
        wanted.update(keys)
    lang = result.lang
    scored = []
    for i, s in enumerate(sentences):
        found = chunk_keys(s, lang).keys
        scored.append((sum(1 for key in wanted if key in found), -i))
    top = sorted(range(len(sentences)), key=lambda i: scored[i], reverse=True)[:k]
    return " ".join(sentences[i] for i in sorted(top))
