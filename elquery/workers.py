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
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from typing import Any

_PR_SET_PDEATHSIG = 1


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
        with _script_hidden():
            super()._spawn_process()  # type: ignore[misc]

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return super().submit(_task, fn, *args, **kwargs)


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
    result_queue = getattr(pool, "_result_queue", None)  # shutdown() drops it
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
