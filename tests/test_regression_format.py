"""The regression set and the sample corpus it is asked over: format and invariants.

Fast and database-free: it reads ``rag/regression/cases.jsonl`` and ``rag/sample/`` only.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import rag

PACKAGE = Path(rag.__file__).resolve().parent
CASES_PATH = PACKAGE / "regression" / "cases.jsonl"
SAMPLE_DIR = PACKAGE / "sample"

KNOWN_TAGS = frozenset(
    {
        "inflection",
        "no-diacritics",
        "range",
        "spoken",
        "paraphrase",
        "short-record",
        "adversarial",
        "identifier",
        "long-doc",
        "off-topic",
        "near-topic",
        "multi-word",
        "english",
        "slovak",
        "absent-code",
        "absent-name",
        "answer-type",
        "split-evidence",
        "how-to",
        "near-duplicate",
        "later-chunk",
        "courtesy",
        "chat-style",
        "acronym",
        "attribute",
    }
)
# Tags that only make sense on one side of the answer/not_found divide.
NOT_FOUND_ONLY = frozenset(
    {"off-topic", "near-topic", "absent-code", "absent-name", "split-evidence", "attribute"}
)
ANSWERED_ONLY = frozenset({"paraphrase", "long-doc", "short-record"})

MIN_CASES = 80
MIN_NOT_FOUND_SHARE = 1 / 3
MIN_DOCUMENTS = 25
MIN_LONG_DOCUMENTS = 8
LONG_CHARS = (2000, 6000)
MAX_RECORD_CHARS = 300

NOVAK_QUESTION = "Kdo je Novák?"
HUMMINGBIRD_QUESTION = "Čím se v Litomyšli živí zelený kolibřík?"


def _cases() -> list[dict[str, Any]]:
    lines = CASES_PATH.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _sample_files() -> list[Path]:
    return sorted(
        p
        for p in SAMPLE_DIR.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(SAMPLE_DIR).parts)
    )


def _records() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in _sample_files():
        if path.suffix == ".jsonl":
            out.extend(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return out


class _TextOnly(HTMLParser):
    """Visible text of an HTML page: what a loader would index, without markup or styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip += tag in ("style", "script")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("style", "script")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _file_text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        parser = _TextOnly()
        parser.feed(raw)
        return re.sub(r"\s+", " ", " ".join(parser.parts)).strip()
    return raw


def _documents() -> dict[str, str]:
    """Every sample document by source id: file path relative to sample/, or a JSONL line's id."""
    docs: dict[str, str] = {}
    for path in _sample_files():
        if path.suffix != ".jsonl":
            docs[path.relative_to(SAMPLE_DIR).as_posix()] = _file_text(path)
    for record in _records():
        docs[record["id"]] = record["text"]
    return docs


CASES = _cases()


def test_every_line_is_a_well_formed_case() -> None:
    for n, case in enumerate(CASES, 1):
        where = f"line {n}: {case!r}"
        assert isinstance(case, dict), where
        assert set(case) == {"id", "question", "expect", "tags"}, where
        assert isinstance(case["id"], str) and re.fullmatch(r"[a-z]{2}-\d{3,}", case["id"]), where
        q = case["question"]
        assert isinstance(q, str) and q and q == q.strip(), where
        expect = case["expect"]
        if isinstance(expect, str):
            assert expect == "not_found", where
        else:
            assert isinstance(expect, list) and expect, where
            assert all(isinstance(s, str) and s for s in expect), where
            assert len(set(expect)) == len(expect), where
        tags = case["tags"]
        assert isinstance(tags, list) and tags, where
        assert all(isinstance(t, str) for t in tags) and len(set(tags)) == len(tags), where


def test_ids_and_questions_are_unique() -> None:
    ids = Counter(c["id"] for c in CASES)
    questions = Counter(c["question"] for c in CASES)
    assert [i for i, n in ids.items() if n > 1] == []
    assert [q for q, n in questions.items() if n > 1] == []


def test_tags_are_known_and_each_is_used() -> None:
    used = Counter(t for c in CASES for t in c["tags"])
    assert set(used) - KNOWN_TAGS == set(), f"unknown tags: {sorted(set(used) - KNOWN_TAGS)}"
    assert KNOWN_TAGS - set(used) == set(), f"tags with no case: {sorted(KNOWN_TAGS - set(used))}"


def test_tags_agree_with_the_expectation() -> None:
    for c in CASES:
        tags = set(c["tags"])
        if c["expect"] == "not_found":
            assert not tags & ANSWERED_ONLY, c
        else:
            assert not tags & NOT_FOUND_ONLY, c


def test_enough_cases_and_enough_not_found() -> None:
    not_found = sum(c["expect"] == "not_found" for c in CASES)
    share = not_found / len(CASES)
    assert len(CASES) >= MIN_CASES, f"{len(CASES)} cases, floor {MIN_CASES}"
    assert share >= MIN_NOT_FOUND_SHARE, (
        f"not_found share {share:.3f} ({not_found}/{len(CASES)}), floor {MIN_NOT_FOUND_SHARE:.3f}"
    )


def test_sample_source_ids_are_unique() -> None:
    paths = [p.relative_to(SAMPLE_DIR).as_posix() for p in _sample_files() if p.suffix != ".jsonl"]
    record_ids = [r["id"] for r in _records()]
    counts = Counter(paths + record_ids)
    assert [s for s, n in counts.items() if n > 1] == []


def test_every_expected_source_exists() -> None:
    known = set(_documents())
    missing = sorted(
        {
            (c["id"], s)
            for c in CASES
            if c["expect"] != "not_found"
            for s in c["expect"]
            if s not in known
        }
    )
    assert missing == []


def test_no_diacritics_questions_are_plain_ascii() -> None:
    offenders = [
        c["question"] for c in CASES if "no-diacritics" in c["tags"] and not c["question"].isascii()
    ]
    assert offenders == []


def test_identifier_questions_carry_a_code() -> None:
    offenders = [
        c["question"]
        for c in CASES
        if "identifier" in c["tags"] and not re.search(r"\d", c["question"])
    ]
    assert offenders == []


def test_novak_is_found_only_through_an_inflected_form() -> None:
    docs = _documents()
    (case,) = [c for c in CASES if c["question"] == NOVAK_QUESTION]
    holders = [sid for sid, text in docs.items() if "Novákovi" in text]
    assert len(holders) == 1, holders
    assert case["expect"] == holders
    # The case tests lemmatization: the nominative must appear nowhere in the corpus.
    assert [sid for sid, text in docs.items() if re.search(r"\bNovák\b", text)] == []


def test_hummingbird_trap_holds() -> None:
    docs = _documents()
    (case,) = [c for c in CASES if c["question"] == HUMMINGBIRD_QUESTION]
    assert case["expect"] == "not_found"
    # Two of its four content words must be in one document and the other two nowhere.
    assert [sid for sid, t in docs.items() if "Litomyšl" in t and "zelen" in t.lower()] != []
    assert [sid for sid, t in docs.items() if re.search(r"kolib|živí", t.lower())] == []


def test_records_are_short_and_complete() -> None:
    for record in _records():
        assert set(record) == {"id", "text", "title"}, record
        assert all(isinstance(v, str) and v.strip() for v in record.values()), record
        assert len(record["text"]) <= MAX_RECORD_CHARS, record


def test_corpus_mixes_long_documents_and_records() -> None:
    docs = _documents()
    long_docs = {sid: len(t) for sid, t in docs.items() if LONG_CHARS[0] <= len(t) <= LONG_CHARS[1]}
    suffixes = {Path(sid).suffix for sid in long_docs}
    assert len(docs) >= MIN_DOCUMENTS, f"{len(docs)} documents, floor {MIN_DOCUMENTS}"
    assert len(long_docs) >= MIN_LONG_DOCUMENTS, (
        f"{len(long_docs)} documents of {LONG_CHARS[0]}-{LONG_CHARS[1]} characters, "
        f"floor {MIN_LONG_DOCUMENTS}"
    )
    assert {".md", ".txt", ".html"} <= suffixes, suffixes
    assert len(_records()) >= 10


@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: p.name)
def test_sample_files_are_utf8_with_a_final_newline(path: Path) -> None:
    raw = path.read_bytes()
    raw.decode("utf-8")
    assert raw.endswith(b"\n")


# The classes of the natural and held-out sets (rag/regression/README.md), beside KNOWN_TAGS.
QUESTION_CLASSES = frozenset(
    {"word-class", "yes-no", "how-to", "responsible", "contact", "definition"}
)


@pytest.mark.parametrize("name", ["natural.jsonl", "heldout.jsonl"])
def test_the_natural_and_held_out_sets_are_well_formed_and_never_reuse_an_id(name: str) -> None:
    path = PACKAGE / "regression" / name
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    docs = _documents()
    shipped = {c["id"] for c in CASES}
    for n, case in enumerate(cases, 1):
        where = f"{name}:{n}: {case!r}"
        assert set(case) == {"id", "question", "expect", "tags"}, where
        assert re.fullmatch(r"(cs|held)-\d{3,}", case["id"]) and case["id"] not in shipped, where
        assert set(case["tags"]) <= KNOWN_TAGS | QUESTION_CLASSES and case["tags"], where
        expect = case["expect"]
        assert expect == "not_found" or (expect and set(expect) <= set(docs)), where
    ids = Counter(c["id"] for c in cases)
    assert [i for i, k in ids.items() if k > 1] == [], name
    # each question class has near misses of its own kind beside its answerable questions
    for tag in sorted(QUESTION_CLASSES & {t for c in cases for t in c["tags"]}):
        sides = Counter(c["expect"] == "not_found" for c in cases if tag in c["tags"])
        assert sides[False] and sides[True], f"{name}: {tag} has {dict(sides)}"
