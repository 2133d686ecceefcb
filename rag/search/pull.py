"""The pull of a question's missing focus words toward a passage: is their meaning in it?

The paraphrase rule lets a close vector stand in for focus words a candidate's evidence window
lacks: "Kdy byla zaplacena faktura …" is answered by "… byla uhrazena …". The same closeness
admits a passage about the subject under another attribute: "Kdy se koná zimní firemní
slavnost?" is as close to the record of the summer party, and "kurz účetnictví" to the record
of a project-management course. Word vectors do not tell the two apart (a synonym and a
co-hyponym are equally close: "zaplacena"/"uhrazena" and "zimní"/"letní"), but the sentence
encoder's composition does, by occlusion: embed the question without the missing words and
compare its distance to the passage with the question's own.

* The words mean something the passage says in other words: the question without them is
  *further* from the passage (they pulled it closer): the pull is positive.
* The words name something the passage does not have: the question without them is *closer*
  (they pushed it away): the pull is negative.

``pull = distance(question without the words, passage) - distance(question, passage)``, both
computed by the database from the stored chunk vector. A threshold set may require the pull to be
at least ``paraphrase_min_pull`` before a vector stands in for missing focus words
(:mod:`rag.search.relevance`); :data:`PULL_OFF` turns the check off. It costs one query embedding
per distinct set of missing words and one indexed lookup, only for candidates the paraphrase rule
would otherwise admit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import psycopg

from rag.errors import DatabaseUnavailable, one_line

if TYPE_CHECKING:
    from rag.db import Database
    from rag.embedders.base import Embedder

# No pull is below -2 (cosine distances lie in [0, 2]): a threshold of -2 admits every pull.
PULL_OFF = -2.0
PULL_SQL = """
SELECT c.chunk_id,
       c.embedding::vector({dim}) <=> %(occluded)s::vector({dim}),
       c.embedding::vector({dim}) <=> %(question)s::vector({dim})
FROM chunks c
WHERE c.owner_id = %(owner_id)s AND c.chunk_id = ANY(%(ids)s) AND c.embed_model = %(model)s
"""


def occluded(text: str, words: Sequence[str]) -> str:
    """``text`` without each whole occurrence of ``words`` (case as written), spaces tidied."""
    for w in words:
        text = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)", " ", text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", text)
    return " ".join(text.split())


class PullProbe:
    """Pulls of one question's missing words toward its candidates, each computed once.

    ``text`` is what was embedded for the question and ``vector`` its embedding. A pull that
    cannot be computed (the embedder fails, the chunk has no vector of this model) is None: the
    check then does not apply, as before it existed.
    """

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        owner_id: int,
        text: str,
        vector: np.ndarray,
        embed: Callable[[str], tuple[np.ndarray | None, dict[str, str] | None]] | None = None,
        candidates: Sequence[int] = (),
    ) -> None:
        self.db = db
        self.embedder = embedder
        # how a text is embedded: the search's own bounded call (rag.search.retrieve.embed_question,
        # the embedder's timeout), or the embedder directly
        self.embed = embed
        # the question's candidates: one lookup computes a set of words' pull toward all of them
        self.candidates = tuple(candidates)
        self.owner_id = owner_id
        self.text = text
        self.vector = np.asarray(vector, dtype=np.float32)
        self._vectors: dict[tuple[str, ...], np.ndarray | None] = {}
        self._pulls: dict[tuple[int, tuple[str, ...]], float | None] = {}
        self.errors: list[str] = []

    def forget(self) -> None:
        """Drop every pull computed so far (a benchmark times them afresh)."""
        self._vectors.clear()
        self._pulls.clear()

    def _occluded_vector(self, words: tuple[str, ...]) -> np.ndarray | None:
        if words not in self._vectors:
            rest = occluded(self.text, words)
            vec = None
            if rest and rest != self.text and self.embed is not None:
                got, why = self.embed(rest)
                if got is None:
                    self.errors.append(why["message"] if why else "no vector")
                else:
                    vec = np.asarray(got, np.float32)
            elif rest and rest != self.text:
                try:
                    vec = np.asarray(self.embedder.embed([rest], kind="query")[0], np.float32)
                except Exception as e:  # noqa: BLE001 -- fail open: the check does not apply
                    self.errors.append(one_line(e))
            self._vectors[words] = vec
        return self._vectors[words]

    def __call__(self, chunk_ids: Sequence[int], words: Sequence[str]) -> dict[int, float | None]:
        """The pull of ``words`` toward each of ``chunk_ids``."""
        key = tuple(words)
        asked = [i for i in chunk_ids if (i, key) not in self._pulls]
        todo = list(dict.fromkeys([*asked, *self.candidates])) if asked else []
        if todo:
            vec = self._occluded_vector(key)
            got: dict[int, float] = {}
            if vec is not None:
                got = self._distances(todo, vec)
            for i in todo:
                self._pulls[(i, key)] = got.get(i)
        return {i: self._pulls[(i, key)] for i in chunk_ids}

    def _distances(self, ids: list[int], vec: np.ndarray) -> dict[int, float]:
        from psycopg import sql

        dim = sql.Literal(self.embedder.dim)
        statement = sql.SQL(PULL_SQL).format(dim=dim)
        params = {
            "occluded": vec,
            "question": self.vector,
            "owner_id": self.owner_id,
            "ids": ids,
            "model": self.embedder.model_id,
        }
        try:
            with self.db.connection() as conn:
                rows = conn.execute(statement, params).fetchall()
                conn.commit()
        except (psycopg.Error, DatabaseUnavailable) as e:
            self.errors.append(one_line(e))
            return {}
        return {int(i): float(occ) - float(own) for i, occ, own in rows}
