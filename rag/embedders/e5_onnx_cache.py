"""The built ONNX encoder, cached under the data directory and checked before every load.

``<data_dir>/onnx/e5-small-<source sha256[:16]>-<precision>-v<BUILD>.onnx`` beside a manifest
(``.json``) recording the source file's sha256, the precision, and the built file's sha256 and
size. ``BUILD`` changes whenever the graph or the quantization does, so an older build is never
loaded by newer code. A model is written to a temporary file, flushed and renamed into place, and only then is
its manifest written the same way, so a crash leaves either nothing or a file without a
manifest. A file whose size or hash disagrees with its manifest (truncated, flipped bytes, an
older build) is rebuilt, never loaded. One process builds while others wait on a lock file, for
at most ``LOCK_WAIT`` seconds.

int8 is onnxruntime's per-channel dynamic quantization of the fp32 graph's MatMul weights
(activations quantized per call); the 4-bit word table is left as it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rag.embedders.e5_file import file_sha256, read
from rag.errors import EmbedderError

log = logging.getLogger(__name__)

PRECISIONS = ("fp32", "int8")
BUILD = 1
# Building takes seconds (about 10 s for both precisions on one busy core); a process that finds
# another one building waits this long before it gives up with an error.
LOCK_WAIT = 300.0


def cache_dir(data_dir: Path) -> Path:
    """Where built models live."""
    return data_dir / "onnx"


def model_file(directory: Path, source_sha: str, precision: str) -> Path:
    """The built model's path for a source file's hash and a precision."""
    return directory / f"e5-small-{source_sha[:16]}-{precision}-v{BUILD}.onnx"


def manifest_file(model: Path) -> Path:
    return model.with_suffix(".json")


def verified(model: Path, source_sha: str, precision: str) -> bool:
    """Whether ``model`` exists and matches its manifest in source, precision, size and hash."""
    try:
        manifest = json.loads(manifest_file(model).read_text(encoding="utf-8"))
        size = model.stat().st_size
    except (OSError, ValueError):
        return False
    expected = {"source_sha256": source_sha, "precision": precision, "size": size}
    if not isinstance(manifest, dict) or any(manifest.get(k) != v for k, v in expected.items()):
        return False
    return manifest.get("sha256") == file_sha256(model)


def ensure(source: Path, data_dir: Path, precision: str) -> Path:
    """The verified built model of ``source`` at ``precision``, building it if needed.

    Raises:
        EmbedderError: the source is unreadable, the build failed, or another process held the
            build lock for longer than ``LOCK_WAIT`` seconds.
    """
    if precision not in PRECISIONS:
        raise EmbedderError(f"unsupported precision {precision!r} (choose from fp32, int8)")
    source_sha = file_sha256(source)
    directory = cache_dir(data_dir)
    target = model_file(directory, source_sha, precision)
    if verified(target, source_sha, precision):
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with _build_lock(directory / "build.lock"):
        if verified(target, source_sha, precision):  # another process built it meanwhile
            return target
        started = time.monotonic()
        log.info("building the %s ONNX encoder from %s into %s", precision, source, target)
        if precision == "fp32":
            _write(target, lambda tmp: _build_fp32(source, tmp))
        else:
            fp32 = model_file(directory, source_sha, "fp32")
            if not verified(fp32, source_sha, "fp32"):
                _write(fp32, lambda tmp: _build_fp32(source, tmp))
                _write_manifest(fp32, source_sha, "fp32")
            _write(target, lambda tmp: _quantize(fp32, tmp))
        _write_manifest(target, source_sha, precision)
        log.info("built the %s ONNX encoder in %.1f s", precision, time.monotonic() - started)
    return target


def _build_fp32(source: Path, out: Path) -> None:
    import onnx  # the graph builder is only needed when a model is built

    from rag.embedders.e5_graph import build

    started = time.monotonic()
    model = build(read(source))
    log.info("ONNX graph built in %.1f s; writing %s", time.monotonic() - started, out.name)
    onnx.save_model(model, str(out))


def _quantize(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # The quantizer logs a line per tensor to the root logger; only its errors are news here.
    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))
    try:
        quantize_dynamic(
            str(fp32),
            str(out),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
        )
    finally:
        root.setLevel(level)


def _write(target: Path, produce: Callable[[Path], None]) -> None:
    """Produce ``target`` in a temporary file of its directory, flush it and rename it."""
    fd, name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        produce(tmp)
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        manifest_file(target).unlink(missing_ok=True)  # the old manifest no longer applies
        os.replace(tmp, target)
    except EmbedderError:
        raise
    except Exception as exc:
        raise EmbedderError(f"building {target.name} failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _write_manifest(model: Path, source_sha: str, precision: str) -> None:
    manifest = {
        "source_sha256": source_sha,
        "precision": precision,
        "size": model.stat().st_size,
        "sha256": file_sha256(model),
    }
    path = manifest_file(model)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EmbedderError(
                        f"another process has been building the ONNX encoder in {path.parent} "
                        f"for over {LOCK_WAIT:.0f} s"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
