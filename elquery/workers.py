"""The bottom of the stack, beside :mod:`elquery.base`: worker processes that never outlive their
command and never keep it from stopping.

* A worker dies with its parent: on Linux the kernel sends it SIGKILL when the parent is gone
  (``prctl(PR_SET_PDEATHSIG)``), whether the parent ended normally, by SIGTERM or by SIGKILL.
* Ctrl-C reaches the whole process group; workers ignore SIGINT, so only the parent decides: on
  an interrupt or error it cancels what is queued and kills the workers at once, instead of
  waiting for them to finish (a ``ProcessPoolExecutor`` leaving its ``with`` block waits).
* A spawned worker does not re-run the user's script: every function a pool runs lives in an
  elquery module, so the script that called the API (``__main__``) is not imported in the
  workers, and the API works from a plain script without an ``if __name__ == "__main__"`` guard.
* A worker whose initializer fails (an index that cannot be opened) answers every task with that
  error, so the caller sees it (one line for an :class:`~elquery.base.ElqueryError`) instead of
  ``BrokenProcessPool``.

:func:`ordered_map` is the one way batch work runs over worker processes (linking, ranking, the
index and surface-form builds): results in input order, a bounded number of tasks in flight, and
in this process, without a pool, for one worker.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, TypeVar

from elquery.base import check_workers

_PR_SET_PDEATHSIG = 1
R = TypeVar("R")


def die_with_parent(parent: int) -> None:
    """Make this (worker) process end when process ``parent`` does, and leave SIGINT to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent was gone before the request took effect
        os._exit(1)


_start_error: Exception | None = None
"""In a worker: what its initializer raised, raised again by every task."""


def _start(parent: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    global _start_error
    die_with_parent(parent)
    if initializer is not None:
        try:
            initializer(*initargs)
        except Exception as exc:  # a raise here would only break the pool, the reason lost
            _start_error = exc


def _task(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    if _start_error is not None:
        raise _start_error
    return function(*args, **kwargs)


class _Pool(ProcessPoolExecutor):
    """Spawns its workers without the ``__main__`` script, and answers each task with the
    initializer's error when it failed (see the module docstring)."""

    def _spawn_process(self) -> None:
        with _signals_deferred(), _script_hidden():
            super()._spawn_process()  # type: ignore[misc]  # private in CPython, not in typeshed

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return super().submit(_task, fn, *args, **kwargs)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ctrl-C or SIGTERM arriving while a worker is started is taken once the pool knows the
    worker, so that an interrupt kills it: taken in between, it left a launched worker unknown
    to the pool, which then read its parent's half-sent start data and printed a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []
    previous = {number: signal.signal(number, lambda signum, frame: arrived.append(signum))
                for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        for signum in arrived:
            os.kill(os.getpid(), signum)  # now to the handler it had (which may ignore it)


@contextmanager
def _script_hidden() -> Iterator[None]:
    """While a worker is started, a plain script's ``__main__`` shows no ``__file__``, so
    multiprocessing does not import it in the worker (a module run with ``-m`` is unaffected)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(main, "__spec__", None) is not None:
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


@contextmanager
def process_pool(workers: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` spawned processes (see the module docstring); each runs
    ``initializer(*initargs)`` first. Leaving the block normally waits for the work; leaving it
    by an exception (KeyboardInterrupt included) kills the workers."""
    pool = _Pool(workers, mp_context=get_context("spawn"), initializer=_start,
                 initargs=(os.getpid(), initializer, initargs))
    try:
        yield pool
    except BaseException:
        kill(pool)
        raise
    pool.shutdown(wait=True)


def kill(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued work and kill the pool's processes now."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    result_queue = getattr(pool, "_result_queue", None)  # shutdown() drops it, and the manager thread
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()
    for process in processes:
        process.join(timeout=5)
    # The pool's manager thread may be inside a read of a result a killed worker was writing; this
    # process holds the last writing end of that pipe: closing it ends the read (EOF). Otherwise
    # the thread, and the interpreter's exit that joins it, would wait forever.
    if result_queue is not None:
        result_queue._writer.close()
    # Then wait for the manager thread to end: it closes its wake-up pipe on the way out, and the
    # interpreter's exit (concurrent.futures' _python_exit) writes to that pipe unless it is closed;
    # the two racing printed "OSError: [Errno 9] Bad file descriptor" after "interrupted".
    if manager is not None:
        manager.join(timeout=5)


@dataclass(frozen=True)
class WorkerPool:
    """Worker processes kept for several maps (:func:`worker_pool`); ``executor`` is None for one
    worker: the work then runs in this process."""

    executor: ProcessPoolExecutor | None
    size: int

    def call(self, function: Callable[..., R], *args: Any) -> R:
        """``function(*args)`` as one task: in a worker (in this process for one worker)."""
        return next(ordered_map(function, [args], self))


@contextmanager
def worker_pool(workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = (),
                finalizer: Callable[[], None] | None = None) -> Iterator[WorkerPool]:
    """``workers`` processes for the :func:`ordered_map` calls of the block (phases of a build),
    each running ``initializer(*initargs)`` once (:func:`process_pool`); for one worker, no
    process: ``initializer`` runs here and ``finalizer`` at the end of the block. An exception
    leaving the block (KeyboardInterrupt included) kills the workers at once."""
    check_workers(workers)
    if workers > 1:
        with process_pool(workers, initializer, initargs) as executor:
            yield WorkerPool(executor, workers)
        return
    try:
        if initializer is not None:
            initializer(*initargs)
        yield WorkerPool(None, 1)
    finally:
        if finalizer is not None:
            finalizer()


def ordered_map(function: Callable[..., R], tasks: Iterable[tuple[Any, ...]], workers: int | WorkerPool, *,
                initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = (),
                finalizer: Callable[[], None] | None = None, here: Callable[..., R] | None = None,
                window: int | None = None) -> Iterator[R]:
    """``function(*task)`` of every task, in input order: the one way batch work runs over
    processes (linking, ranking, the index and surface-form builds).

    ``workers`` is a count, for a pool of this map alone, or a pool open for several maps
    (:func:`worker_pool`, whose initializer is then the one that ran). One worker runs the tasks
    in this process, one at a time as the results are consumed, and starts no process:
    ``here(*task)`` if given, else ``function(*task)`` after ``initializer(*initargs)``, and
    ``finalizer()`` once the map ends (finished, failed or abandoned). More are spawned
    processes (:func:`process_pool`), each running ``initializer(*initargs)`` once; with
    ``here``, ``workers - 1`` of them and this process, which runs ``here(*task)`` on the tasks
    after the one whose result is next while that one is still being computed elsewhere (so a
    worker warming up does not stall the batch).

    At most ``window`` tasks (default: two per process) are taken from ``tasks`` and not yet
    consumed, so memory stays bounded whatever their number (``tasks`` may be a generator) and
    an interrupt finds little to cancel; the workers are kept busy with up to two tasks each
    while the window allows. A task's exception is raised here, in the place of its result (an
    :class:`~elquery.base.ElqueryError` stays one line). Ctrl-C, SIGTERM under
    :func:`~elquery.base.sigterm_interrupts`, or closing the iterator kills the map's workers
    at once (a pool of :func:`worker_pool`: leaving its block)."""
    size = workers.size if isinstance(workers, WorkerPool) else check_workers(workers)
    window = 2 * size if window is None else window
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    if isinstance(workers, WorkerPool):
        if workers.executor is None:
            yield from (function(*task) for task in tasks)
        else:
            yield from _in_order(workers.executor, size, function, iter(tasks), window, None)
    elif here is None:
        with worker_pool(workers, initializer, initargs, finalizer) as pool:
            yield from ordered_map(function, tasks, pool, window=window)
    elif workers == 1:
        yield from (here(*task) for task in tasks)
    else:
        with process_pool(workers - 1, initializer, initargs) as executor:
            yield from _in_order(executor, workers - 1, function, iter(tasks), window, here)


_END: Any = object()


def _in_order(pool: ProcessPoolExecutor, pool_size: int, function: Callable[..., R], tasks: Iterator[tuple[Any, ...]],
              window: int, here: Callable[..., R] | None) -> Iterator[R]:
    """The loop of :func:`ordered_map` over a process pool of ``pool_size`` workers."""
    pending: deque[Future[R]] = deque()  # taken and not yet consumed, in input order
    exhausted = False
    while True:
        running = [future for future in pending if not future.done()]
        while not exhausted and len(pending) < window and len(running) < 2 * pool_size:
            task = next(tasks, _END)
            if task is _END:
                exhausted = True
            else:
                running.append(pool.submit(function, *task))
                pending.append(running[-1])
        if not pending:
            return
        head = pending[0]
        if not head.done() and not exhausted and len(pending) < window:
            if here is None:  # a task may be taken as soon as a worker is free
                wait(running, return_when=FIRST_COMPLETED)
                continue
            task = next(tasks, _END)
            if task is _END:
                exhausted = True
            else:
                pending.append(_done(here(*task)))
            continue
        pending.popleft()
        yield head.result()


def _done(result: R) -> Future[R]:
    future: Future[R] = Future()
    future.set_result(result)
    return future
