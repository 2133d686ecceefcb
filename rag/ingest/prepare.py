"""A document's chunks, word keys and vectors, computed before anything is written.

:func:`prepare` is pure (no I/O), so ingestion runs it in worker processes; the content hash it
records is what lets an unchanged document be skipped before any chunking or embedding.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.embedders import Embedder
from rag.errors import EmbedderError, InputError, RagError
from rag.ingest.chunking import CHUNKING_VERSION, chunk_text
from rag.ingest.loaders import LoadedDocument
from rag.language.keys import chunk_keys, detect_language, normalize
from rag.settings import Settings

# Bump when rag.language.keys or rag.language.lemmas changes what keys it produces: re-ingesting then re-keys
# every document.
# 19: "jedna" is a stopword as the other forms of "jeden" are; the verbs of carrying in -ézt and
# -ést lemmatized by their conjugation class ("převezte": převézt, "odneste": odnést);
# 18: the personal and reflexive pronouns in every case ("námi", "sebou") and "jeden" are
# stopwords, which have no prefix key (17: a trial with "zvlášť", never on main);
# 16: a lemma simplemma guessed yields to the Czech conjugation class's infinitive ("zablokuje":
# zablokovat, not "zablokout"), the imperative of the dělat class (domlouvejte: domlouvat), a
# capitalized verb form in -te / -me at a sentence's start (Nepoužívejte: používat);
# 15: the German possessives, prepositions and pronouns of quantity and relation ("seine",
# "zwischen", "beide", "denen"), Russian "весь", "каждый", "оба", "помимо", the case forms of
# "сколько", Czech "všechno", "oba" are stopwords (13 and 14: two longer lists, measured and not
# kept; docs/evaluation.md, "Thirty-ninth round");
# 12: every conjunction and connective adverb is a stopword ("protože", "ačkoli", "weil",
# "поэтому"), which has no prefix key;
# 11: a capitalized word in "-ové" / "-ovou" the dictionary lacks keeps its own form beside the
# woman's name it may be (Dárkové: dárkové and Dárková); 10: two words the dictionary gives as
# each other's lemma are one lemma (parkovat / zaparkovat);
# 9: the irregular forms of "jíst" capitalized too (Nejezte); 8: the irregular forms of "jíst"
# (jezte, jíte); 7: the possessives in every case form are stopwords; 6: the demonstratives
# ("tohle", "tamten", "takový"; German "dieser", "jene") are stopwords, which have no prefix
# key; 5: Czech verb forms the dictionary lacks lemmatized by their conjugation class, a
# sentence-initial "-ova" noun's own stem; 4: a Czech feminine surname is its own lemma
# (Kučerová, not Kučera); 3: spelling entries (a:)
KEYS_VERSION = 19


@dataclass
class PreparedChunk:
    ordinal: int
    text: str
    token_count: int
    word_keys: str
    embedding: np.ndarray | None = None
    # the sentence analysis judging reads (JSON), when ingestion computes it (analyze_at_ingest)
    analysis: str | None = None


@dataclass
class PreparedDocument:
    doc: LoadedDocument
    lang: str
    content_hash: bytes
    chunks: list[PreparedChunk] = field(default_factory=list)


def content_hash(doc: LoadedDocument, lang: str, settings: Settings) -> bytes:
    """Identity of what ingestion would store: text, title, language, metadata, chunking, keys."""
    h = hashlib.sha256()
    payload = {
        "text": doc.text,
        "title": doc.title,
        "lang": lang,
        "metadata": doc.metadata,
        "chunk": [settings.chunk_size, settings.chunk_overlap, CHUNKING_VERSION],
        "keys": KEYS_VERSION,
    }
    h.update(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str).encode())
    return h.digest()


def prepare(doc: LoadedDocument, settings: Settings) -> PreparedDocument:
    """Chunk a document and compute each chunk's word keys (pure, no I/O)."""
    text = normalize(doc.text)
    if not text.strip():
        raise InputError(f"{doc.origin}: document has no text")
    lang = doc.lang or detect_language(text[:4000])
    prepared = PreparedDocument(doc=doc, lang=lang, content_hash=content_hash(doc, lang, settings))
    analyse: Callable[[str, str], str] | None = None
    if settings.analyze_at_ingest:  # imported only then: it brings the answerability stage
        from rag.search.answerability import analysis_json

        analyse = analysis_json
    for chunk in chunk_text(text, size=settings.chunk_size, overlap=settings.chunk_overlap):
        keys = chunk_keys(chunk.text, lang)
        prepared.chunks.append(
            PreparedChunk(
                chunk.ordinal,
                chunk.text,
                keys.token_count,
                keys.tsvector,
                analysis=analyse(chunk.text, lang) if analyse is not None else None,
            )
        )
    return prepared


def prepare_or_error(
    doc: LoadedDocument, settings: Settings
) -> PreparedDocument | tuple[str, RagError]:
    try:
        return prepare(doc, settings)
    except RagError as e:
        return doc.origin, e


def embed_chunks(chunks: Sequence[PreparedChunk], embedder: Embedder, batch: int) -> str | None:
    """Attach passage vectors; on failure leave the rest unembedded and return why."""
    for start in range(0, len(chunks), batch):
        part = chunks[start : start + batch]
        try:
            vectors = embedder.embed([c.text for c in part], kind="passage")
        except EmbedderError as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 -- a backend bug must not lose the document
            return f"{type(e).__name__}: {e}"
        for c, v in zip(part, vectors, strict=True):
            c.embedding = np.asarray(v, dtype=np.float32)
    return None
