"""Work that stops when its time is up: a deadline for the work of one call (a request of the
service), checked by the long loops of linking (:func:`check_deadline`), and a process-wide stop
(:func:`stop_all_work`, on SIGTERM of the server) that ends every such work at its next check.

Without a deadline (the command line, the Python API) a check costs a clock read and never
raises. The deadline is a context variable: it holds in the thread that :func:`within` runs
the work in, and in no other.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_DEADLINE: ContextVar[float] = ContextVar("elquery_deadline", default=math.inf)
_STOPPING = threading.Event()


class OutOfTime(Exception):
    """The work passed its deadline, or the process is stopping; the work is abandoned."""


def check_deadline() -> None:
    """Raise :class:`OutOfTime` if the deadline of the running work has passed or the process is
    stopping; a no-op otherwise."""
    if time.monotonic() > _DEADLINE.get() or _STOPPING.is_set():
        raise OutOfTime("the process is stopping" if _STOPPING.is_set() else "the deadline passed")


@contextmanager
def deadline(at: float) -> Iterator[None]:
    """Within the block, :func:`check_deadline` raises once :func:`time.monotonic` passes ``at``
    (an enclosing earlier deadline still holds)."""
    token = _DEADLINE.set(min(at, _DEADLINE.get()))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def within(at: float, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` under :func:`deadline` ``at`` (for a worker thread to run)."""
    with deadline(at):
        return function(*args)


def stop_all_work() -> None:
    """Make every check of this process raise from now on: the server is stopping."""
    _STOPPING.set()


def stopping() -> bool:
    """Whether :func:`stop_all_work` was called."""
    return _STOPPING.is_set()
