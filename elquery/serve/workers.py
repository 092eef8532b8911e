"""The worker processes of ``elquery serve --workers N`` (N > 1): uvicorn's supervisor (health
checks, restarts, signals), each worker listening on a socket of its own, bound with
``SO_REUSEPORT`` to the service's address, so that the kernel spreads new connections over the
workers.

With one listening socket shared by the workers (uvicorn's way), a worker whose event loop is idle
accepts every pending connection at once; a client that keeps a few connections open (a proxy,
a load generator) then loads one worker and leaves the others idle. On 2 cores with 2 workers,
``/link?method=ltr`` under 8 keep-alive connections ran at 488 requests/s in one run and 1,168 in
the next, as the connections happened to fall (both workers busy, or one).

The parent binds the address (an address in use is one line before any worker starts) without
listening on it; each worker binds its own socket to the same address and listens. Where the
system has no ``SO_REUSEPORT``, the workers share the parent's socket, as uvicorn does.

SIGTERM or SIGINT ends the server within seconds whatever its workers do (:class:`Supervisor`):
uvicorn's supervisor asks each worker in turn whether it is alive and waits up to the health-check
time for the answer, the signal queued meanwhile (a worker whose start held the GIL, or starved
on a loaded machine, kept ``elquery serve --model`` running for over a minute after SIGTERM);
then it waited for every worker to end, however long. Here a health check gives way to a signal,
and a worker still running :data:`STOP_SECONDS` after its SIGTERM is killed.
"""

from __future__ import annotations

import pickle
import signal
import socket
import threading
import time

from uvicorn.config import Config
from uvicorn.supervisors import multiprocess

REUSE_PORT = hasattr(socket, "SO_REUSEPORT")
HEALTH_CHECK_SECONDS = 60
"""How long uvicorn's supervisor waits for a worker's answer to its health check (every half
second) before it kills the worker as hung (uvicorn's default: 5 s). The answer comes from a
thread of the worker, which needs Python's GIL; one C call holds it throughout: over all of
DBpedia, sorting the 4.6M entity ids for the searcher's tie order takes seconds (the warm-up
does it), and a busy machine makes it longer. With 5 s, a worker still warming up would be
killed, and its replacement too."""


STOP_SECONDS = 10.0
"""How long a worker has to end after its SIGTERM (answering the requests in flight, whose work
stops at once: :func:`elquery.serve.service.stop_work_on_signals`) before it is killed."""
_SIGNALLED = threading.Event()
"""Set in the supervisor when a signal arrives, until it has handled the signals queued."""


def bound_socket(family: int, address: tuple[object, ...] | str, reuse_port: bool = REUSE_PORT) -> socket.socket:
    """A TCP socket bound to ``address``, made with protocol TCP (uvicorn's own leaves it 0), so
    asyncio sets TCP_NODELAY on the connections it accepts: without that, every response waits for
    a delayed ACK (about 40 ms); with ``reuse_port``, others can bind the same address."""
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


class Responsive(multiprocess.Process):
    """A uvicorn worker whose health check gives way to a signal of the supervisor."""

    def _healthcheck(self, timeout: float) -> bool | None:
        """The worker's startup flag, None if it does not answer within ``timeout``; True (no
        verdict needed) as soon as the supervisor has a signal to handle."""
        try:
            self.parent_conn.send(b"ping")
            deadline = time.monotonic() + timeout
            while not _SIGNALLED.is_set():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if self.parent_conn.poll(min(remaining, 0.1)):
                    started: bool = self.parent_conn.recv()
                    return started
            return True
        except (OSError, EOFError, pickle.UnpicklingError):
            return None

    def join(self) -> None:
        """Wait :data:`STOP_SECONDS` for the worker to end after its SIGTERM, then kill it."""
        self.process.join(STOP_SECONDS)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join()


class Worker(Responsive):
    """A uvicorn worker serving a socket of its own, bound to the address of each socket the
    supervisor hands it (the parent's, bound with ``SO_REUSEPORT`` and not listening)."""

    def target(self, sockets: list[socket.socket] | None = None) -> None:  # runs in the worker process
        own = [bound_socket(sock.family, sock.getsockname()) for sock in sockets or []]
        super().target(own)


class Supervisor(multiprocess.Multiprocess):
    """uvicorn's supervisor, whose signals also cut short a health check under way
    (:class:`Responsive`)."""

    def __init__(self, config: Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        for number in multiprocess.SIGNALS:
            signal.signal(number, self._arrived)

    def _arrived(self, number: int, frame: object) -> None:
        self.signal_queue.append(number)
        _SIGNALLED.set()

    def handle_signals(self) -> None:
        _SIGNALLED.clear()
        super().handle_signals()


def run(config: Config, sock: socket.socket) -> None:
    """Serve ``config``'s application in ``config.workers`` processes on ``sock``'s address."""
    # uvicorn's supervisor makes its workers by this name; mypy refuses a class assigned over another class
    multiprocess.Process = Worker if REUSE_PORT else Responsive  # type: ignore[misc]
    config.timeout_worker_healthcheck = HEALTH_CHECK_SECONDS
    Supervisor(config, sockets=[sock]).run()
