"""Give the memory a large ingest freed back to the operating system (glibc only).

Ingesting a 10 MB upload allocates a few hundred MB for a moment (the text, its chunks, their
keys, the COPY buffers) and frees nearly all of it when the write commits. CPython hands that
memory back to glibc's malloc, but malloc keeps it: in the arena of the thread that freed it,
and each request runs in one of a pool of worker threads, each with an arena of its own. The
process's RSS then stays about 450 MB above its idle size after three such uploads, although the
Python heap has hardly grown. ``malloc_trim(0)`` returns the free pages of every arena to the
kernel. Elsewhere (musl, macOS, Windows) there is no such call and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

# An ingest of this many characters of text or more trims afterwards; smaller ones leave too
# little behind to be worth walking every arena for.
TRIM_AFTER_CHARS = 1 << 20

_lock = threading.Lock()
_trim: Callable[[int], int] | None = None
_looked_up = False


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    global _trim, _looked_up
    with _lock:
        if not _looked_up:
            _looked_up = True
            if sys.platform.startswith("linux"):
                try:
                    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                    trim = libc.malloc_trim  # AttributeError on a libc without it (musl)
                    trim.argtypes = [ctypes.c_size_t]
                    trim.restype = ctypes.c_int
                    _trim = trim
                except (OSError, AttributeError):
                    _trim = None
        return _trim


def release_memory() -> bool:
    """Return malloc's free memory to the operating system; whether the C library could.

    Never raises: a failure only means the memory stays with the process.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    try:
        trim(0)
    except Exception as e:  # noqa: BLE001 - keeping the memory is no error
        log.debug("malloc_trim failed: %s", e)
        return False
    return True
