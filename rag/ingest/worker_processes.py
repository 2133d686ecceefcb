"""Start-up of the worker processes that chunk and key documents for ``rag ingest``."""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def worker_start(parent_pid: int) -> None:
    """In each worker: die with the parent, and drop the parent's sockets.

    A forked worker inherits the parent's pooled connections. Were the parent killed, a worker
    would keep its socket open, and with it the parent's session, its open transaction and the
    owner's write lock. Workers never talk to PostgreSQL, so every inherited socket is closed
    (the parent's own descriptors are untouched), and the kernel kills a worker whose parent
    dies (PR_SET_PDEATHSIG); elsewhere than Linux a thread watches the parent instead.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watcher below still works
            pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    for fd in _open_fds():
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:
            pass
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def lower_thread_priority(nice: int) -> bool:
    """Run the calling thread ``nice`` steps below its process (Linux: niceness is per thread).

    The embedding worker computes in its own thread (one engine thread computes in its
    caller); at a lower priority it takes only the CPU that questions and PostgreSQL leave.
    Raising niceness needs no privilege. Returns whether it was applied.
    """
    if nice <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        current = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, current + nice))
    except OSError:  # a sandbox without setpriority: the worker runs at the service's priority
        return False
    return True


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: the usual range
        return list(range(3, 256))


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os._exit(1)
