"""A source an answer cites: the chunk, its document and the evidence that admitted it.

Its own module, so the LLM client (rag.answer.llm) and the engine (rag.answer.engine) both use it without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Source:
    source_id: str
    document_id: int
    chunk_id: int
    title: str | None
    text: str
    evidence: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "document_id": self.document_id,
            "chunk_id": self.chunk_id,
            "title": self.title,
            "text": self.text,
            "evidence": self.evidence,
        }
