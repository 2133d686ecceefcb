"""The one pipeline every caller goes through: retrieve → filter → not_found | extractive | LLM.

"Not in the knowledge base" is an ordinary answer: status ``not_found``, a fixed sentence in the
question's language, and no LLM call. ``not_found_by`` says who decided: ``filter`` (no candidate
had evidence; the LLM was not called) or ``llm`` (sources spoke of the topic, and the model found
no answer in them).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import psycopg

from rag.chunking import split_sentences
from rag.db import Database
from rag.embedders import Embedder
from rag.errors import InputError, LLMError
from rag.filters import SearchFilter
from rag.freshness import Standing, standing
from rag.llm import abstains
from rag.metrics import record_retrieval
from rag.profiles import fusion_settings, relation_fusion, thresholds
from rag.relations import MAX_DISTANCE, Thresholds, reference_distance
from rag.relevance import FilterParams, Judgement, judge
from rag.rerank import Reranker, rerank_order
from rag.retrieve import Candidate, Mode, Retrieval, retrieve
from rag.settings import Settings
from rag.source import Source
from rag.text import chunk_keys, normalize

log = logging.getLogger(__name__)

NOT_FOUND = {
    "cs": "V znalostní bázi to není.",
    "sk": "V databáze znalostí to nie je.",
    "pl": "Nie ma tego w bazie wiedzy.",
    "de": "Das steht nicht in der Wissensbasis.",
    "ru": "Этого нет в базе знаний.",
    "en": "Not in the knowledge base.",
}
EXTRACTIVE_LABEL = {
    "cs": "Výňatek ze zdroje",
    "sk": "Výňatok zo zdroja",
    "pl": "Fragment źródła",
    "de": "Auszug aus der Quelle",
    "ru": "Выдержка из источника",
    "en": "Excerpt from the source",
}
MAX_SOURCES = 5


class AnswerWriter(Protocol):
    """An LLM that writes an answer citing numbered sources ([1], [2], ...)."""

    def answer(
        self, question: str, sources: list[Source], lang: str, history: list[dict[str, str]]
    ) -> str: ...


@dataclass
class Hit:
    candidate: Candidate
    judgement: Judgement
    # the vector retriever ran, but this chunk has no vector of the model yet (still queued)
    vector_pending: bool = False
    thresholds: str = "same"  # the threshold set that judged it (rag.relations)
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
    status: str  # "answered" | "not_found"
    answer: str
    lang: str
    sources: list[Source]
    llm_called: bool
    extractive: bool
    degraded: list[dict[str, str]] = field(default_factory=list)
    citations: list[int] = field(default_factory=list)
    not_found_by: str | None = None  # "filter" | "llm" when status is "not_found"

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "not_found_by": self.not_found_by,
            "answer": self.answer,
            "lang": self.lang,
            "extractive": self.extractive,
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
    judge it; the evidence says so. ``thresholds``: the set that judged it (rag.relations).
    """
    found = {"fts_rank": c.fts_rank, "vector_rank": c.vector_rank, **j.as_dict()}
    found["thresholds"] = thresholds
    if vector_pending:
        found["vector_pending"] = True
    return found


def judged(r: Retrieval, params: FilterParams | Thresholds) -> tuple[list[Hit], str, str]:
    """Judge a retrieval's candidates with the set its language relation selects.

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
    judgements = judge(relative(r, contrast), chosen)
    hits = [Hit(c, j, thresholds=name) for c, j in zip(r.candidates, judgements, strict=True)]
    return hits, rel, name


def relative(r: Retrieval, contrast: float) -> Retrieval:
    """``r`` with distances judged relative to the question's neighbourhood (rag.relations)."""
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
        # and a relation's own ones (other-language questions: rag.relations)
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
        """The question, normalized; raises InputError when it is unusable."""
        if not isinstance(question, str):
            raise InputError("question must be a string")
        q = normalize(question).strip()
        if not q:
            raise InputError("question is empty")
        if len(q) > self.settings.max_question_chars:
            raise InputError(
                f"question is {len(q)} characters; the limit is {self.settings.max_question_chars}"
            )
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
        documents it admits (:mod:`rag.filters`). Candidates of superseded documents are left out
        (listed in ``hidden``), the reranker (if any) re-orders the top ones, and candidates of
        stale documents follow the fresh ones.
        """
        q = self.validate(question)
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
        hidden, standings = self._standing(owner_id, r)
        hits, rel, name = judged(r, params or self.thresholds)
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

    def _standing(
        self, owner_id: int | None, r: Retrieval
    ) -> tuple[list[dict[str, Any]], dict[int, Standing]]:
        """Drop superseded documents' candidates from ``r``; the dropped, and the stale by id."""
        if owner_id is None or not r.candidates:
            return [], {}
        try:
            with self.db.connection() as conn:
                found = standing(conn, owner_id, [c.document_id for c in r.candidates])
                conn.commit()
        except psycopg.Error as e:  # fail open: answer without the standing, and say so
            message = " ".join(str(e).split())
            r.degraded.append({"component": "standing", "reason": "error", "message": message})
            return [], {}
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
        """Answer from the sources that pass the filter, or say it is not in the knowledge base."""
        result = self.search(owner_id, question, params=params, filters=filters)
        return self.answer_from(result, history=history or [], use_llm=use_llm)

    def answer_from(
        self, result: SearchResult, *, history: list[dict[str, str]], use_llm: bool = True
    ) -> Answer:
        lang = result.lang if result.lang in NOT_FOUND else "en"
        passed = [h for h in result.hits if h.judgement.passed][:MAX_SOURCES]
        degraded = list(result.degraded)
        if not passed:
            return not_found(lang, degraded, by="filter")
        sources = [
            Source(
                h.candidate.source_id,
                h.candidate.document_id,
                h.candidate.chunk_id,
                h.candidate.title,
                h.candidate.text,
                h.evidence,
            )
            for h in passed
        ]
        if self.llm is not None and use_llm:
            try:
                text = self.llm.answer(result.question, sources, lang, history)
                if abstains(text):
                    return not_found(lang, degraded, by="llm")
                return Answer(
                    "answered",
                    text,
                    lang,
                    sources,
                    True,
                    False,
                    degraded,
                    cited(text, len(sources)),
                )
            except LLMError as e:
                log.warning("LLM failed, answering extractively: %s", e)
                degraded.append({"component": "llm", "reason": "error", "message": str(e)})
                return self._extractive(result, sources, lang, degraded, llm_called=True)
        return self._extractive(result, sources, lang, degraded, llm_called=False)

    def _extractive(
        self,
        result: SearchResult,
        sources: list[Source],
        lang: str,
        degraded: list[dict[str, str]],
        *,
        llm_called: bool,
    ) -> Answer:
        text = f"{EXTRACTIVE_LABEL[lang]} [1]: {excerpt(result, sources[0])} [1]"
        return Answer("answered", text, lang, sources, llm_called, True, degraded, [1])


def not_found(lang: str, degraded: list[dict[str, str]], *, by: str) -> Answer:
    """The "not in the knowledge base" answer; ``by`` is "filter" or "llm" (who decided)."""
    return Answer(
        "not_found", NOT_FOUND[lang], lang, [], by == "llm", False, degraded, not_found_by=by
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
