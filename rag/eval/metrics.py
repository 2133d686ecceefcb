"""Evaluation metrics: rankings, each case's outcome through the full pipeline, and the report.

Rankings are over distinct sources: a document with three chunks in the top five counts once. hit@k
is the share of answerable cases with a gold source among the first k sources, MRR@10 the mean of
1/rank of the first gold source (0 beyond 10); fts and vector rankings are the single retrievers'
lists inside the hybrid retrieval (each keeps its own rank there). The full pipeline is
``Engine.judge`` then ``Engine.answer_from`` (without an LLM) on each cached retrieval: answer
recall is the share of answerable cases with a gold source among the answer's sources, the
false-answer rate the share of not_found cases that got any source, the false-refusal rate the
share of answerable cases answered not_found.

A ``related`` answer (no direct answer, the nearest sources listed: rag.answer.related) is its own
outcome, counted apart for answerable and for not_found cases: it is neither an answer for the
false-answer rate nor a recall hit, nor a false refusal. Its sources passed no judgement, so
the figures above mean what they meant before it existed. Of the related answers to answerable
cases, those whose list holds a source the case expects are counted too (``related_listed``):
how often the middle outcome points at the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from rag.answer.engine import Engine, Hit
from rag.eval.sets import Case
from rag.language.keys import unaccent
from rag.search.relevance import FilterParams
from rag.search.retrieve import Retrieval
from rag.search.thresholds import Thresholds

MODES = ("fts", "vector", "hybrid")
MRR_DEPTH = 10


def ranking(r: Retrieval, mode: str) -> list[str]:
    """Distinct source_ids in the order ``mode`` ranks them."""
    if mode == "hybrid":
        cands = list(r.candidates)
    else:
        attr = "fts_rank" if mode == "fts" else "vector_rank"
        cands = sorted(
            (c for c in r.candidates if getattr(c, attr) is not None),
            key=lambda c: getattr(c, attr),
        )
    return list(dict.fromkeys(c.source_id for c in cands))


def gold_rank(sources: Sequence[str], expect: Sequence[str]) -> int | None:
    """1-based rank of the first expected source, or None."""
    gold = set(expect)
    return next((i for i, s in enumerate(sources, 1) if s in gold), None)


@dataclass
class CaseResult:
    """One case under one parameter set."""

    case: Case
    ranks: dict[str, int | None]
    status: str  # "answered" | "related" | "not_found"
    sources: list[str]  # the answer's source_ids, in order (a related answer's listed ones)
    # recalled | wrong_sources | refused | refused_correctly | false_answer | related
    outcome: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    lang: str = ""  # the question's detected language
    relation: str = "same"  # its language relation to the corpus (rag.search.relations)
    thresholds: str = "same"  # the threshold set that judged it
    # whether the extractive answer holds the case's answer text (None: the case gives none)
    answer_held: bool | None = None

    @property
    def ok(self) -> bool:
        """Recalled, refused correctly, or a not_found case with only related sources listed
        (nothing answered); a related answer to an answerable case did not recall it."""
        if self.outcome == "related":
            return not self.case.answerable
        return self.outcome in ("recalled", "refused_correctly")

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "question": self.case.question,
            "expect": list(self.case.expect) or "not_found",
            "tags": list(self.case.tags),
            "ranks": self.ranks,
            "status": self.status,
            "sources": self.sources,
            "outcome": self.outcome,
            "lang": self.lang,
            "relation": self.relation,
            "thresholds": self.thresholds,
            **({} if self.answer_held is None else {"answer_held": self.answer_held}),
            "evidence": self.evidence,
        }


def _evidence(hit: Hit, position: int) -> dict[str, Any]:
    c, j = hit.candidate, hit.judgement
    words = [f"{w.word}:{w.matched_by or '-'}{'' if w.rare else '(common)'}" for w in j.words]
    return {
        "source_id": c.source_id,
        "chunk_id": c.chunk_id,
        "position": position,
        "fts_rank": c.fts_rank,
        "vector_rank": c.vector_rank,
        "distance": None if c.distance is None else round(c.distance, 4),
        "margin": None if j.margin is None else round(j.margin, 4),
        "coverage": round(j.coverage, 3),
        "support": round(j.support, 3),
        "passed": j.passed,
        "rule": j.rule,
        # what the answerability stage refused it for: its first failed check, and the
        # question words its window lacked
        "refused_by": None if j.answer is None else j.answer.reason,
        "window_lacks": []
        if j.answer is None
        else [
            *(r["word"] for r in j.answer.required if r["matched_by"] is None),
            *(f["word"] for f in j.answer.focus if f["matched_by"] is None),
        ],
        "words": words,
        # the missing focus words' pull toward it, where the paraphrase rule asked for it
        "pull": None if j.pull is None else round(j.pull, 4),
    }


def evaluate_case(
    engine: Engine, case: Case, r: Retrieval, params: FilterParams | Thresholds
) -> CaseResult:
    """Re-judge a cached retrieval with ``params`` and answer through the engine, without an LLM.

    ``Thresholds`` judge each case with the set its language relation picks, as the engine does.
    """
    result = engine.judge(r, params)
    answer = engine.answer_from(result, use_llm=False)
    hits = result.hits
    sources = list(dict.fromkeys(s.source_id for s in answer.sources))
    ranks = {m: gold_rank(ranking(r, m), case.expect) if case.answerable else None for m in MODES}
    gold = set(case.expect)
    if answer.status == "related":
        outcome = "related"
        listed = {src.chunk_id for src in answer.sources}
        first_gold = [(i, h) for i, h in enumerate(hits, 1) if h.candidate.source_id in gold][:1]
        shown = first_gold + [
            (i, h) for i, h in enumerate(hits, 1) if h.candidate.chunk_id in listed
        ]
    elif not case.answerable:
        outcome = "false_answer" if sources else "refused_correctly"
        shown = [(i, h) for i, h in enumerate(hits, 1) if h.judgement.passed][:3]
    else:
        outcome = (
            "recalled"
            if gold & set(sources)
            else "refused"
            if answer.status == "not_found"
            else "wrong_sources"
        )
        first_gold = [(i, h) for i, h in enumerate(hits, 1) if h.candidate.source_id in gold][:1]
        passed = [(i, h) for i, h in enumerate(hits, 1) if h.judgement.passed][:2]
        shown = first_gold + passed
    evidence = [_evidence(h, i) for i, h in shown] if outcome not in ("recalled",) else []
    held = None
    if case.answer is not None and case.answerable:
        held = answer.status == "answered" and _folded(case.answer) in _folded(answer.answer)
    return CaseResult(
        case,
        ranks,
        answer.status,
        sources,
        outcome,
        evidence,
        r.query.lang,
        result.relation,
        result.thresholds,
        held,
    )


def _folded(text: str) -> str:
    """Text compared for the extractive-answer figure: unaccented, lower case, one space."""
    return " ".join(unaccent(text).casefold().split())


@dataclass
class Figures:
    """Counts of the full pipeline's outcomes, and the rates they give."""

    answerable: int = 0
    no_answer: int = 0
    recalled: int = 0
    refused: int = 0
    false_answers: int = 0
    # related answers (rag.answer.related): of answerable cases, of not_found cases
    related: int = 0
    related_no_answer: int = 0
    # of the related answers to answerable cases, those that list a source the case expects: the
    # middle outcome points the user at the answer
    related_listed: int = 0

    @property
    def answer_recall(self) -> float | None:
        return self.recalled / self.answerable if self.answerable else None

    @property
    def false_answer_rate(self) -> float | None:
        return self.false_answers / self.no_answer if self.no_answer else None

    @property
    def false_refusal_rate(self) -> float | None:
        return self.refused / self.answerable if self.answerable else None

    @classmethod
    def of(cls, results: Sequence[CaseResult]) -> Figures:
        outcomes = [r.outcome for r in results]
        answerable = sum(r.case.answerable for r in results)
        related = [r for r in results if r.outcome == "related" and r.case.answerable]
        return cls(
            answerable,
            len(results) - answerable,
            outcomes.count("recalled"),
            outcomes.count("refused"),
            outcomes.count("false_answer"),
            len(related),
            outcomes.count("related") - len(related),
            sum(bool(set(r.sources) & set(r.case.expect)) for r in related),
        )

    def __add__(self, other: Figures) -> Figures:
        """The counts of two sets of cases together (folds, held-out sets)."""
        return Figures(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "answerable": self.answerable,
            "no_answer": self.no_answer,
            "recalled": self.recalled,
            "refused": self.refused,
            "false_answers": self.false_answers,
            "related": self.related,
            "related_no_answer": self.related_no_answer,
            "related_listed": self.related_listed,
            "answer_recall": self.answer_recall,
            "false_answer_rate": self.false_answer_rate,
            "false_refusal_rate": self.false_refusal_rate,
        }


def retrieval_metrics(results: Sequence[CaseResult]) -> dict[str, dict[str, float | None]]:
    """hit@1, hit@5 and MRR@10 per mode over the answerable cases."""
    answerable = [r for r in results if r.case.answerable]
    out: dict[str, dict[str, float | None]] = {}
    for mode in MODES:
        ranks = [r.ranks[mode] for r in answerable]
        n = len(ranks)
        if not n:
            out[mode] = {"hit@1": None, "hit@5": None, "mrr@10": None}
            continue
        out[mode] = {
            "hit@1": sum(1 for k in ranks if k is not None and k <= 1) / n,
            "hit@5": sum(1 for k in ranks if k is not None and k <= 5) / n,
            "mrr@10": sum(1 / k for k in ranks if k is not None and k <= MRR_DEPTH) / n,
        }
    return out


@dataclass
class Report:
    """Everything ``rag eval`` prints."""

    name: str
    params: FilterParams | Thresholds
    results: list[CaseResult]

    @property
    def figures(self) -> Figures:
        return Figures.of(self.results)

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]

    def by_tag(self) -> dict[str, dict[str, Any]]:
        tags = sorted({t for r in self.results for t in r.case.tags})
        return {tag: _group([r for r in self.results if tag in r.case.tags]) for tag in tags}

    def extractive(self) -> dict[str, Any] | None:
        """How often the extractive answer (the first source's evidence window) holds the
        answer's text, for cases whose set gives one; None when none does."""
        rs = [r for r in self.results if r.answer_held is not None]
        if not rs:
            return None
        held = sum(bool(r.answer_held) for r in rs)
        recalled = sum(r.outcome == "recalled" for r in rs)
        return {
            "cases": len(rs),
            "recalled": recalled,
            "held": held,
            "of_answerable": held / len(rs),
            "of_recalled": held / recalled if recalled else None,
        }

    def by_lang(self) -> dict[str, dict[str, Any]]:
        """Figures per detected question language, with the sets that judged them."""
        langs = sorted({r.lang for r in self.results})
        return {lang: _group([r for r in self.results if r.lang == lang]) for lang in langs}

    def param_sets(self) -> dict[str, dict[str, Any]]:
        """The threshold sets that judged the cases, by name."""
        if isinstance(self.params, FilterParams):
            return {r.thresholds: self.params.as_dict() for r in self.results[:1]} or {
                "same": self.params.as_dict()
            }
        used = dict.fromkeys(["same", *(r.thresholds for r in self.results)])
        return {name: self.params.get(name).as_dict() for name in used}

    def as_dict(self) -> dict[str, Any]:
        return {
            "set": self.name,
            "cases": len(self.results),
            "params": self.param_sets(),
            "retrieval": retrieval_metrics(self.results),
            "pipeline": self.figures.as_dict(),
            "tags": self.by_tag(),
            "langs": self.by_lang(),
            **({} if (held := self.extractive()) is None else {"extractive": held}),
            "failures": [r.as_dict() for r in self.failures],
            # every case answered related, with its listed sources (a not_found one is no failure)
            "related": [r.as_dict() for r in self.results if r.outcome == "related"],
        }


def score(
    engine: Engine,
    name: str,
    cases: Sequence[Case],
    retrievals: Sequence[Retrieval],
    params: FilterParams | Thresholds,
    *,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """Judge every cached retrieval with ``params`` and collect the report.

    ``Thresholds`` (an engine's ``thresholds``) judge each case with the set its language
    relation selects; a single ``FilterParams`` judges all of them.
    """
    results = []
    for case, r in zip(cases, retrievals, strict=True):
        results.append(evaluate_case(engine, case, r, params))
        if progress:
            progress(1)
    return Report(name, params, results)


def _group(rs: Sequence[CaseResult]) -> dict[str, Any]:
    return {
        "cases": len(rs),
        **Figures.of(rs).as_dict(),
        "hybrid_hit@5": retrieval_metrics(rs)["hybrid"]["hit@5"],
        "thresholds": sorted({r.thresholds for r in rs}),
    }
