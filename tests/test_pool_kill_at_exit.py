"""Ctrl-C of a command working over processes (``rank --workers 2``) printed, in 2 of 23 runs,
an ``OSError: [Errno 9] Bad file descriptor`` traceback after "interrupted" (issue 31.8): the
pool's manager thread closing its wake-up pipe raced the interpreter's exit writing to it
(``concurrent.futures.process._python_exit``). :func:`elquery.workers.kill` now returns only once
that thread has ended, so the exit finds the pipe closed and leaves it alone."""

from __future__ import annotations

import concurrent.futures.process as futures_process
import time

from elquery.workers import process_pool


def test_after_an_interrupt_the_pools_manager_thread_has_ended_and_its_wakeup_is_closed() -> None:
    ended = 0
    for _ in range(8):
        try:
            with process_pool(2) as pool:
                for _ in range(6):
                    pool.submit(time.sleep, 5)
                time.sleep(0.2)
                manager = pool._executor_manager_thread  # type: ignore[attr-defined]  # CPython's, the thread that races
                raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        assert manager is not None and not manager.is_alive()
        assert all(wakeup._closed for thread, wakeup in futures_process._threads_wakeups.items() if thread is manager)
        ended += 1
    assert ended == 8
