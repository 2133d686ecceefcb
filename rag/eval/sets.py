"""Evaluation sets: cases, their corpus in a dedicated owner, one retrieval per question.

A case is a question and what the answer's sources must include: one or more ``source_id``s (any
one of them suffices; external sets list alternative evidence) or nothing at all (``not_found``).

Two kinds of set:

* a regression set, JSONL ``{"id", "question", "expect": [source_id, ...] | "not_found",
  "tags"?: [...]}``, run against a corpus directory or JSONL file (the shipped one,
  ``rag/regression/cases.jsonl``, against ``rag/sample/``, with source_ids relative to it, as
  ``rag sample`` stores them);
* an external corpus (docs JSONL) with question files ``{"id", "question", "relevant": [doc ids]}``
  (an empty ``relevant`` means not_found) and optional no-answer files, every question of which is
  expected to be refused whatever its ``relevant`` says (so another corpus's questions serve as
  off-topic probes).

Parallel corpora pair up: ``gold_map`` rewrites the prefix of the ``relevant`` ids, so XQuAD's
German questions (gold ``xquad-de-…``) ask about the Russian paragraphs (``xquad-ru-…``), the
same paragraph in another language. An answerable case whose gold ids are all missing from the
corpus is an error, not a silent miss.

A set splits deterministically into ``dev`` and ``test`` halves (:func:`split_of`): by SHA-1 of
the id's last hyphen-separated part, which for XQuAD is the SQuAD question id that every language
shares, so a question sits on the same side in German and in Russian.

The corpus goes into the owner ``eval:<name>:<fingerprint>``; the fingerprint covers the corpus
bytes, chunking (its settings and version), the key version and the embedding model, so an
unchanged corpus is reused as is and a changed one gets a fresh owner.

Each question is retrieved once (:func:`retrieve_all`); :mod:`rag.eval.metrics` scores the cached
retrievals under any filter setting.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rag.answer.engine import Engine
from rag.db import Database
from rag.embedders import Embedder
from rag.errors import CorruptInput, EmbedderError, InputError
from rag.ingest.chunking import CHUNKING_VERSION
from rag.ingest.loaders import LoadedDocument, LoadFailure, iter_paths, load_path, rebased
from rag.ingest.prepare import KEYS_VERSION
from rag.ingest.writer import Ingestor
from rag.search.retrieve import Retrieval, searched_question
from rag.settings import Settings
from rag.store import find_owner, owner_stats

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SAMPLE_DIR = PACKAGE_DIR / "sample"
SHIPPED_SET = PACKAGE_DIR / "regression" / "cases.jsonl"
QUERY_BATCH = 64


@dataclass(frozen=True, slots=True)
class Case:
    """One question and the sources its answer must include (none: not_found)."""

    id: str
    question: str
    expect: tuple[str, ...]
    tags: tuple[str, ...] = ()
    answer: str | None = None  # the answer's text, where the set gives it (``--answer-field``)

    @property
    def answerable(self) -> bool:
        return bool(self.expect)


@dataclass
class EvalSet:
    """Cases and the corpus they run against."""

    name: str
    cases: list[Case]
    corpus: list[Path]
    rebase: Path | None = None  # file source_ids become paths relative to this directory
    split: str | None = None  # "dev" or "test": the cases are that half of the set
    withhold: int = 0  # every withhold-th document is left out of the corpus (0: none)

    @property
    def label(self) -> str:
        """The set's name in reports: with its split (the owner's name goes without)."""
        return f"{self.name} ({self.split})" if self.split else self.name


def _read_jsonl(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path}: {e}") from e
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorruptInput(f"{where}: invalid JSON ({e.msg})") from None
        if not isinstance(rec, dict):
            raise CorruptInput(f"{where}: expected a JSON object")
        for key in ("id", "question"):
            if not isinstance(rec.get(key), str) or not rec[key].strip():
                raise CorruptInput(f'{where}: "{key}" must be a non-empty string')
        yield where, rec


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CorruptInput(f'{where}: "{key}" must be a list of non-empty strings')
    return tuple(value)


def _unique(cases: list[Case], where: object) -> list[Case]:
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CorruptInput(f"{where}: case id {c.id!r} occurs twice")
        seen.add(c.id)
    return cases


def load_cases(path: Path) -> list[Case]:
    """Read a regression set (see the module docstring).

    Raises:
        CorruptInput: a line is not a valid case, or two cases share an id.
    """
    cases = []
    for where, rec in _read_jsonl(path):
        expect = rec.get("expect")
        if expect == "not_found":
            gold: tuple[str, ...] = ()
        else:
            gold = _strings(expect, where, "expect")
            if not gold:
                raise CorruptInput(f'{where}: "expect" is empty; write "not_found"')
        tags = _strings(rec.get("tags") or [], where, "tags")
        cases.append(Case(rec["id"], rec["question"], gold, tags))
    return _unique(cases, path)


def load_questions(
    path: Path,
    *,
    noanswer: bool = False,
    tag_by: str | None = None,
    answer_field: str | None = None,
) -> list[Case]:
    """Read external questions ``{"id", "question", "relevant"}``; ``noanswer`` expects none.

    ``tag_by``: each case is tagged ``FIELD=value`` with its record's string field (a record
    without it, ``FIELD=none``), so that figures are reported per value. ``answer_field``: the
    field holding the answer's text (XQuAD's ``answer``), kept for the extractive-answer figure.

    Raises:
        CorruptInput: a line is not a valid question, or its ``tag_by`` field is not a string.
    """
    cases = []
    for where, rec in _read_jsonl(path):
        relevant = () if noanswer else _strings(rec.get("relevant") or [], where, "relevant")
        tags: tuple[str, ...] = ("no-answer",) if noanswer else ()
        if tag_by:
            value = rec.get(tag_by)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise CorruptInput(f'{where}: "{tag_by}" must be a non-empty string to tag by')
            tags += (f"{tag_by}={'none' if value is None else value.strip()[:40]}",)
        answer = rec.get(answer_field) if answer_field and not noanswer else None
        if answer is not None and (not isinstance(answer, str) or not answer.strip()):
            raise CorruptInput(f'{where}: "{answer_field}" must be the answer\'s text')
        cases.append(Case(rec["id"], rec["question"], relevant, tags, answer))
    return _unique(cases, path)


def regression_set(path: Path | None = None, corpus: Path | None = None) -> EvalSet:
    """A regression set (default: the shipped one) and its corpus (default: ``rag/sample/``)."""
    path = path or SHIPPED_SET
    root = corpus or SAMPLE_DIR
    name = "regression" if path == SHIPPED_SET else path.stem
    return EvalSet(name, load_cases(path), [root], root if root.is_dir() else None)


def external_set(
    docs: Path,
    questions: Sequence[Path] = (),
    noanswer: Sequence[Path] = (),
    name: str | None = None,
    gold_map: Sequence[tuple[str, str]] = (),
    tag_by: str | None = None,
    answer_field: str | None = None,
) -> EvalSet:
    """An external corpus with answerable and no-answer question files.

    Args:
        gold_map: (old, new) id prefixes: a ``relevant`` id starting with ``old`` gets ``new``
            instead (questions of a parallel corpus over this one).
        tag_by: a field of the question records to tag each case by (:func:`load_questions`).
        answer_field: the field of the question records that holds the answer's text.
    """
    cases = [
        map_gold(c, gold_map)
        for q in questions
        for c in load_questions(q, tag_by=tag_by, answer_field=answer_field)
    ]
    cases += [c for q in noanswer for c in load_questions(q, noanswer=True, tag_by=tag_by)]
    _unique(cases, "question files")
    default = docs.parent.name if docs.stem == "docs" else docs.stem
    return EvalSet(name or default, cases, [docs], None)


def map_gold(case: Case, gold_map: Sequence[tuple[str, str]]) -> Case:
    """``case`` with its gold ids' prefixes rewritten by the first matching (old, new) pair."""
    if not gold_map:
        return case
    expect = []
    for gold in case.expect:
        for old, new in gold_map:
            if gold.startswith(old):
                gold = new + gold[len(old) :]
                break
        expect.append(gold)
    return Case(case.id, case.question, tuple(expect), case.tags, case.answer)


SPLITS = ("dev", "test")


def split_of(case_id: str) -> str:
    """``dev`` or ``test``: SHA-1 of the id's last hyphen-separated part, even or odd."""
    key = case_id.rsplit("-", 1)[-1]
    return SPLITS[hashlib.sha1(key.encode("utf-8")).digest()[0] % 2]


def split_set(evalset: EvalSet, split: str) -> EvalSet:
    """The cases of ``evalset`` on the ``split`` side (the corpus and its owner stay whole)."""
    if split not in SPLITS:
        raise InputError(f"Unsupported split: {split} (choose from {', '.join(SPLITS)})")
    cases = [c for c in evalset.cases if split_of(c.id) == split]
    return replace(evalset, cases=cases, split=split)


WITHHELD_TAG = "withheld"


def withheld(source_id: str, every: int) -> bool:
    """Whether ``--withhold every`` leaves this document out: SHA-1 of the id's last two
    hyphen-separated parts ("00-03" of "xquad-de-00-03"), so the parallel XQuAD corpora leave
    out the same paragraphs in every language."""
    key = "-".join(source_id.rsplit("-", 2)[-2:])
    return (
        every > 0
        and int.from_bytes(hashlib.sha1(key.encode("utf-8")).digest()[:4], "big") % every == 0
    )


def withhold_set(evalset: EvalSet, every: int) -> EvalSet:
    """``evalset`` with every ``every``-th document left out of its corpus: a question whose gold
    sources are all left out must now be refused (tag ``withheld``). Its article's other
    paragraphs stay, so these are near-topic probes of the corpus's own language and style."""
    if every < 2:
        raise InputError(f"--withhold must be at least 2, not {every}")
    cases = []
    for c in evalset.cases:
        kept = tuple(g for g in c.expect if not withheld(g, every))
        if c.answerable and not kept:
            c = Case(c.id, c.question, (), (*c.tags, WITHHELD_TAG), None)
        elif c.answerable:
            c = Case(c.id, c.question, kept, c.tags, c.answer)
        cases.append(c)
    return replace(evalset, cases=cases, withhold=every)


def check_gold(evalset: EvalSet, docs: Sequence[LoadedDocument]) -> None:
    """Raise InputError when an answerable case's gold sources are none of the corpus's."""
    ids = {d.source_id for d in docs}
    missing = [c for c in evalset.cases if c.answerable and not ids & set(c.expect)]
    if missing:
        c = missing[0]
        raise InputError(
            f"{len(missing)} answerable case(s) expect sources the corpus lacks, e.g. {c.id} "
            f"expects {', '.join(c.expect)}; questions of a parallel corpus need "
            "--map-gold OLD=NEW (e.g. xquad-de-=xquad-ru-)"
        )


# --- the corpus in its own owner ----------------------------------------------------------------


def load_corpus(evalset: EvalSet, max_bytes: int) -> list[LoadedDocument]:
    """Every document of the set's corpus, source_ids rebased; a file that fails is an error."""
    items = (i for p in iter_paths(evalset.corpus) for i in load_path(p, max_bytes=max_bytes))
    docs = []
    for item in rebased(items, evalset.rebase):
        if isinstance(item, LoadFailure):
            raise InputError(f"evaluation corpus: {item.error}")
        if not withheld(item.source_id, evalset.withhold):
            docs.append(item)
    if not docs:
        raise InputError(
            f"evaluation corpus {', '.join(map(str, evalset.corpus))} has no documents"
        )
    return docs


def fingerprint(docs: Sequence[LoadedDocument], settings: Settings, model_id: str | None) -> str:
    """What the stored corpus depends on: documents, chunking, key version, embedding model."""
    h = hashlib.sha256()
    head = [settings.chunk_size, settings.chunk_overlap, CHUNKING_VERSION, KEYS_VERSION, model_id]
    h.update(json.dumps(head).encode())
    for d in sorted(docs, key=lambda d: d.source_id):
        rec = [d.source_id, d.title, d.lang, d.text, d.metadata]
        h.update(json.dumps(rec, ensure_ascii=False, sort_keys=True, default=str).encode())
    return h.hexdigest()[:12]


def owner_name(evalset: EvalSet, digest: str) -> str:
    return f"eval:{evalset.name}:{digest}"


def corpus_owner(
    db: Database,
    settings: Settings,
    embedder: Embedder | None,
    evalset: EvalSet,
    *,
    progress: bool = True,
) -> tuple[str, int]:
    """Ingest the set's corpus into its dedicated owner unless it is already there, complete.

    Returns:
        The owner's name and id.
    """
    from tqdm import tqdm

    docs = load_corpus(evalset, settings.max_upload_bytes)
    check_gold(evalset, docs)
    model = embedder.model_id if embedder else None
    name = owner_name(evalset, fingerprint(docs, settings, model))
    with db.connection() as conn:
        owner_id = find_owner(conn, name)
        stats = owner_stats(conn, owner_id)
    expected = len({d.source_id for d in docs})
    embedded = stats.models.get(model, 0) if model else stats.chunks
    if owner_id is not None and stats.documents == expected and embedded == stats.chunks > 0:
        _analysed(db, settings, owner_id)
        return name, owner_id
    with tqdm(
        unit="chunk",
        desc=f"embedding {evalset.name}",
        file=sys.stderr,
        disable=not progress or embedder is None,
        leave=False,
    ) as bar:
        counting = _Counting(embedder, bar.update) if embedder is not None else None
        ingestor = Ingestor(db, settings, counting, name, embed_now=True)
        summary = ingestor.add_all(docs)
    if summary.failed:
        raise InputError(f"evaluation corpus: {summary.failures[0]['error']}")
    if embedder is not None and summary.unembedded:
        from rag.ingest.reindex import reindex

        result = reindex(db, embedder, ingestor.owner_id, batch=settings.embed_batch)
        if result.failed:
            raise EmbedderError(f"could not embed the evaluation corpus: {result.errors[0]}")
    _analysed(db, settings, ingestor.owner_id)
    return name, ingestor.owner_id


def _analysed(db: Database, settings: Settings, owner_id: int) -> None:
    """Store the sentence analyses the corpus lacks, as `rag serve` would in the background, so
    that evaluation judges from what a search of a served corpus reads."""
    from rag.ingest.analysis_queue import drain

    drain(db, owner_id, batch=settings.analysis_worker_batch)


class _Counting:
    """An embedder that reports how many texts it embedded (ingestion's progress bar)."""

    def __init__(self, inner: Embedder, step: Callable[[int], Any]) -> None:
        self.inner, self.step, self.model_id = inner, step, inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str], *, kind: Any) -> Any:
        vectors = self.inner.embed(texts, kind=kind)
        self.step(len(texts))
        return vectors


def retrieve_all(
    engine: Engine,
    owner_id: int,
    cases: Sequence[Case],
    *,
    progress: bool = True,
    batch: int = QUERY_BATCH,
) -> list[Retrieval]:
    """Retrieve every case's question once, query vectors embedded in batches."""
    from tqdm import tqdm

    out: list[Retrieval] = []
    with tqdm(
        total=len(cases),
        unit="q",
        desc="retrieving",
        file=sys.stderr,
        disable=not progress,
        leave=False,
    ) as bar:
        for start in range(0, len(cases), batch):
            part = cases[start : start + batch]
            questions = [engine.validate(c.question) for c in part]
            vectors: Any = [None] * len(part)
            if engine.embedder is not None:
                # what a live search embeds: the question without its courtesies, spelled as the
                # corpus spells it
                texts = [searched_question(engine.db, owner_id, q) for q in questions]
                try:
                    vectors = engine.embedder.embed(texts, kind="query")
                except EmbedderError:
                    pass  # each question then embeds alone and degrades on its own
            for q, v in zip(questions, vectors, strict=True):
                out.append(engine.search(owner_id, q, vector=v).retrieval)
                bar.update(1)
    return out
