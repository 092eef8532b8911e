"""The second thread of learning to rank's per-query work: a :class:`HelperThread` that runs parts
of a batch beside its caller (the compiled forest's blocks of trees, :mod:`elquery.linking.ltr.forest`;
the features' second half, :mod:`elquery.linking.ltr.features`), and how many threads a process
uses by default (:data:`THREADS_VARIABLE`, :func:`share_cores`)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import cast

from elquery.base import ElqueryError, default_workers

PATIENCE = 1.5
"""How long the caller of a :class:`HelperThread` waits for a part (or a block of trees) the thread
has started before it runs it itself, in times its own time for a part (a block)."""
THREADS_VARIABLE = "ELQUERY_LTR_THREADS"
"""An environment variable that sets the default threads (1 or 2) of the compiled forest engine and
of the LTR features: ``elquery serve`` sets it to 1 when its workers alone occupy the cores."""


@dataclass
class _Part:
    """A part of a batch, for a :class:`HelperThread`: ``run`` by whichever of the thread and the
    caller takes ``claim`` first; ``done`` released when the thread has run it (``failure``: what
    it raised)."""

    run: Callable[[], None]
    claim: threading.Lock = field(default_factory=threading.Lock)
    done: threading.Lock = field(default_factory=threading.Lock)
    failure: BaseException | None = None


class HelperThread:
    """A thread, started at the first batch it is given and kept waiting between batches, that runs
    parts of a batch while the caller runs its first part (a batch is handed over in a queue: a few
    microseconds, where starting a thread took some 100). The thread takes the other parts in order;
    the caller, its first part done, takes them from the end, those the thread has not started: a
    batch does not wait for the thread to get a core (it then runs on the caller's alone) nor for
    another caller's batch that the thread runs. A part the thread has started but not ended in
    :data:`PATIENCE` times the time the caller took for one of its own (it lost its core meanwhile)
    the caller runs again itself: parts must be idempotent (each writes its results, the same ones
    whoever runs it, to a place of its own). A process forked meanwhile starts a thread of its own.

    The thread is kept off the CPU its caller runs on when handing it a batch (on Linux, its
    affinity: the main thread's CPUs but that one, set again when the caller has moved): woken by the
    caller, the scheduler otherwise put it on the caller's CPU in 65-80% of the batches (measured,
    2 cores, load 2.5-3.6), where the two threads took turns instead of running at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        """The thread's name."""
        self._batches: queue.SimpleQueue[list[_Part] | None] | None = None
        self._pid = -1
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._off = -1  # the CPU the thread is kept off (-1: none)

    def run_beside(self, first: Callable[[], None], rest: Sequence[Callable[[], None]]) -> None:
        """``first`` on the caller's thread, each of ``rest`` (idempotent) on the helper thread or
        on the caller's; an exception of a part is raised here once the caller has run or waited
        for the others (the first one raised: the parts not started then are not run)."""
        parts = [_Part(run) for run in rest]
        for part in parts:
            part.done.acquire()
        self._put(parts)
        failure: BaseException | None = None
        start = time.perf_counter()
        try:
            first()
        except BaseException as exc:
            failure = exc
        patience = PATIENCE * (time.perf_counter() - start) / max(1, len(parts))
        for part in reversed(parts):
            if part.claim.acquire(blocking=False) or not part.done.acquire(timeout=patience):  # the caller's
                if failure is None:
                    try:
                        part.run()
                    except BaseException as exc:
                        failure = exc
            else:  # the thread ran it
                failure = failure or part.failure
        if failure is not None:
            raise failure

    def hand(self, work: Callable[[], None]) -> None:
        """``work`` to the thread, not waited for: the caller learns what the thread did through
        what ``work`` writes (an exception of ``work`` is dropped: the caller must not rely on it
        being run, as the thread may be busy or without a core)."""
        part = _Part(work)
        part.done.acquire()
        self._put([part])

    def stop(self) -> None:
        """End the thread once it has run the parts given before."""
        with self._lock:
            if self._batches is not None and self._pid == os.getpid():
                self._batches.put(None)
            self._batches = None

    def _put(self, parts: list[_Part]) -> None:
        """``parts`` to this process's thread (started first if there is none), kept off the
        caller's CPU."""
        with self._lock:
            if self._batches is None or self._pid != os.getpid():
                self._batches, self._pid, self._off = queue.SimpleQueue(), os.getpid(), -1
                self._thread = threading.Thread(target=_serve, args=(self._batches,), name=self.name,
                                                daemon=True)
                self._thread.start()
            batches, thread = self._batches, self._thread
        cpu = _current_cpu()
        if cpu != self._off and cpu >= 0 and thread is not None and thread.native_id is not None:
            with contextlib.suppress(OSError):  # a thread has ended, or the CPUs are not ours to set
                others = os.sched_getaffinity(os.getpid()) - {cpu}  # the process's CPUs (its main thread's)
                if others:
                    os.sched_setaffinity(thread.native_id, others)
                    self._off = cpu
        batches.put(parts)


@cache
def _cpu_function() -> Callable[[], int] | None:
    """The C library's ``sched_getcpu`` (Linux), or None where there is none."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        function = ctypes.CDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = ctypes.c_int, []
    return cast(Callable[[], int], function)


def _current_cpu() -> int:
    """The CPU the calling thread runs on, -1 where that cannot be known."""
    function = _cpu_function()
    return -1 if function is None else function()


def _serve(batches: queue.SimpleQueue[list[_Part] | None]) -> None:
    """A :class:`HelperThread`'s loop: the parts of each batch given that its caller has not taken
    back, in order, until None."""
    while (parts := batches.get()) is not None:
        _run_unclaimed(parts)
        parts = None  # nothing of the caller's kept while waiting


def _run_unclaimed(parts: list[_Part]) -> None:
    """Each part its caller has not taken, in order, its exception kept for the caller."""
    for part in parts:
        if part.claim.acquire(blocking=False):
            try:
                part.run()
            except BaseException as exc:  # raised on the caller's thread
                part.failure = exc
            finally:
                part.done.release()


def default_threads() -> int:
    """The threads of the compiled engine and of the LTR features when none are asked for:
    :data:`THREADS_VARIABLE` if set (1 or 2), else two on a machine of two cores or more, else one."""
    value = os.environ.get(THREADS_VARIABLE, "")
    if not value:
        return min(2, default_workers())
    if value not in ("1", "2"):
        raise ElqueryError(f"{THREADS_VARIABLE} must be 1 or 2, not {value!r}")
    return int(value)


def share_cores(processes: int) -> None:
    """For ``processes`` processes about to link at once: check :data:`THREADS_VARIABLE` (one line
    if it is bad) and, when they would walk forests on more threads than the machine has cores
    (two each), make one thread the default of this process and those it starts (a value the user
    set is kept)."""
    default_threads()
    if 2 * processes > default_workers():
        os.environ.setdefault(THREADS_VARIABLE, "1")


def threads_of(owner: object, threads: int | None, name: str, what: str) -> tuple[int, HelperThread | None]:
    """The threads ``owner`` (described as ``what`` in an error) runs on, ``threads`` or
    :func:`default_threads`, 1 or 2 (one line if not), and for two a :class:`HelperThread` named
    ``name`` that ends with ``owner``."""
    count = default_threads() if threads is None else threads
    if count not in (1, 2):
        raise ElqueryError(f"{what} runs on 1 or 2 threads, not {count}")
    helper = HelperThread(name) if count == 2 else None
    if helper is not None:
        weakref.finalize(owner, helper.stop)
    return count, helper
