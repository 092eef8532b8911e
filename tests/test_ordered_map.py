"""The one ordered map of batch work (:func:`elquery.workers.ordered_map`), with real worker
processes: results in input order whatever the tasks' durations, no more tasks taken than the
window while a slow consumer lags, work in this process beside the workers (``here``), a task's
error raised in its place, and no worker left after an error, an abandoned map, Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from elquery.base import ElqueryError
from elquery.workers import ordered_map, worker_pool
from conftest import child_processes, gone  # tests/conftest.py, on the path as pytest loads it

_state: list[int] = []
"""What the initializer left in a worker (or in this process, for one worker)."""


def remember(value: int) -> None:
    _state.append(value)


def forget() -> None:
    _state.clear()


def slow_square(number: int, seconds: float) -> tuple[int, int, int]:
    """``(number, number ** 2, pid)`` after ``seconds``."""
    time.sleep(seconds)
    return number, number * number, os.getpid()


def with_state(number: int) -> tuple[int, list[int]]:
    return number, list(_state)


def refuse_three(number: int) -> int:
    if number == 3:
        raise ElqueryError(f"task {number}: no such thing")
    return number


def divide(number: int) -> float:
    return 12 / (number - 3)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_results_come_in_input_order_whatever_the_durations(workers: int) -> None:
    # the first tasks take longest: the later ones finish first in the other workers
    tasks = [(n, 0.2 if n % 5 == 0 else 0.0) for n in range(23)]
    results = list(ordered_map(slow_square, tasks, workers))
    assert [(n, square) for n, square, _ in results] == [(n, n * n) for n in range(23)]
    pids = {pid for _, _, pid in results}
    if workers == 1:
        assert pids == {os.getpid()}  # no process started
    else:
        assert os.getpid() not in pids and 1 <= len(pids) <= workers
        assert gone(pids)  # a finished map leaves no worker


@pytest.mark.parametrize(("workers", "window", "bound"), [(1, None, 1), (2, None, 4), (2, 3, 3), (3, 10, 10)])
def test_a_slow_consumer_holds_at_most_the_window(workers: int, window: int | None, bound: int) -> None:
    taken = 0

    def tasks() -> Iterator[tuple[int, float]]:
        nonlocal taken
        for n in range(40):
            taken += 1
            yield n, 0.0

    lags = []
    consumed = 0
    for n, _, _ in ordered_map(slow_square, tasks(), workers, window=window):
        consumed += 1
        lags.append(taken - consumed)  # taken from the input, not yet consumed here (this one consumed)
        time.sleep(0.05)
        assert n == consumed - 1
    assert consumed == 40
    assert max(lags) + 1 == bound  # the window is filled, never exceeded (+1: the result being consumed)


def test_the_initializer_runs_once_per_worker_and_the_finalizer_after_one_in_this_process() -> None:
    results = list(ordered_map(with_state, [(n,) for n in range(6)], 2, initializer=remember, initargs=(7,),
                               finalizer=forget))
    assert results == [(n, [7]) for n in range(6)]  # each worker ran it once, before its tasks
    assert _state == []  # nothing of it here
    inline = ordered_map(with_state, [(n,) for n in range(3)], 1, initializer=remember, initargs=(8,),
                         finalizer=forget)
    assert next(inline) == (0, [8])  # in this process, before the first task
    assert _state == [8]
    assert list(inline) == [(1, [8]), (2, [8])]
    assert _state == []  # and undone once the map ends


def test_a_slow_task_does_not_keep_the_other_workers_idle() -> None:
    """While the first task (3 s) holds one worker, the other takes task after task (0.1 s each)
    though their results wait for the first's: a finished task frees its place at once."""
    tasks = [(0, 3.0)] + [(n, 0.1) for n in range(1, 20)]
    results = list(ordered_map(slow_square, tasks, 2, window=20))
    assert [n for n, _, _ in results] == list(range(20))
    slow = results[0][2]
    assert sum(pid == slow for _, _, pid in results[1:]) <= 2


def test_a_pool_serves_several_maps_and_calls() -> None:
    with worker_pool(2, initializer=remember, initargs=(5,)) as pool:
        first = list(ordered_map(with_state, [(n,) for n in range(4)], pool))
        pids = {pid for _, _, pid in ordered_map(slow_square, [(n, 0.1) for n in range(8)], pool)}
        called = pool.call(slow_square, 3, 0.0)
    assert first == [(n, [5]) for n in range(4)]
    assert len(pids) == 2 and os.getpid() not in pids and called[:2] == (3, 9) and called[2] in pids
    assert gone(pids)
    with worker_pool(1, initializer=remember, initargs=(6,), finalizer=forget) as pool:
        assert pool.call(with_state, 1) == (1, [6])  # in this process, no process started
        assert pool.call(slow_square, 2, 0.0) == (2, 4, os.getpid())
    assert _state == []


def here_square(number: int, seconds: float) -> tuple[int, int, int]:
    return number, number * number, -1  # -1: computed in the consuming process


def test_here_works_beside_the_workers_while_the_next_result_is_elsewhere() -> None:
    # a worker needs 0.5 s for each of its tasks, this process none: it links ahead, in order
    tasks = [(n, 0.5) for n in range(30)]
    results = list(ordered_map(slow_square, tasks, 2, here=here_square, window=40))
    assert [(n, square) for n, square, _ in results] == [(n, n * n) for n in range(30)]
    here = [n for n, _, pid in results if pid == -1]
    workers = {pid for _, _, pid in results if pid != -1}
    assert len(workers) == 1 and os.getpid() not in workers  # workers - 1 processes in the pool
    assert 20 <= len(here) < 30  # most done here while the worker slept, the first in the worker
    assert results[0][2] != -1


def test_here_alone_for_one_worker() -> None:
    results = list(ordered_map(slow_square, [(n, 1.0) for n in range(5)], 1, here=here_square))
    assert results == [(n, n * n, -1) for n in range(5)]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_error_is_raised_in_its_place_and_no_worker_is_left(workers: int) -> None:
    results: list[int] = []
    before = set(child_processes(os.getpid()))
    with pytest.raises(ElqueryError) as raised:
        for result in ordered_map(refuse_three, [(n,) for n in range(8)], workers):
            results.append(result)
            started = set(child_processes(os.getpid())) - before
    assert str(raised.value) == "task 3: no such thing"  # the error itself, not BrokenProcessPool
    assert results == [0, 1, 2]
    assert len(started) == (workers if workers > 1 else 0)
    assert gone(started)
    with pytest.raises(ZeroDivisionError):
        list(ordered_map(divide, [(n,) for n in range(8)], workers))


def test_a_task_error_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_ordered_map import refuse_three
        from elquery.base import run
        from elquery.workers import ordered_map

        def register(commands):
            command = commands.add_parser("go")
            command.set_defaults(func=lambda args: print(list(ordered_map(refuse_three, [(n,) for n in range(8)], 2))))

        sys.exit(run([register], prog="prog", argv=["go"]))
    """))
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (completed.returncode, completed.stdout, completed.stderr) == (2, "", "prog: error: task 3: no such thing\n")


def test_an_abandoned_map_kills_its_workers() -> None:
    before = set(child_processes(os.getpid()))
    results = ordered_map(slow_square, [(n, 0.3) for n in range(100)], 2)
    next(results)
    started = set(child_processes(os.getpid())) - before
    results.close()  # the consumer stops early (a break, an error downstream)
    assert len(started) == 2 and gone(started, 2)


def test_window_and_workers_are_checked() -> None:
    with pytest.raises(ElqueryError, match="^--workers must be between 1 and 256, got 0$"):
        next(ordered_map(slow_square, [(1, 0.0)], 0))
    with pytest.raises(ValueError, match="window must be at least 1"):
        next(ordered_map(slow_square, [(1, 0.0)], 2, window=0))


INTERRUPTIBLE = """
import sys, time
sys.path.insert(0, {tests!r})
from test_ordered_map import slow_square
from elquery.base import interrupted, sigterm_interrupts
from elquery.workers import ordered_map

try:
    with sigterm_interrupts():
        for n, _, pid in ordered_map(slow_square, [(n, 0.5) for n in range(10_000)], 2):
            print(pid, flush=True)
except KeyboardInterrupt:
    sys.exit(interrupted("prog"))
"""


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupt_ends_the_map_and_its_workers_at_once(how: str, tmp_path: Path) -> None:
    script = tmp_path / "interruptible.py"
    script.write_text(INTERRUPTIBLE.format(tests=str(Path(__file__).parent)))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    assert process.stdout is not None
    workers: set[int] = set()
    while len(workers) < 2:  # both workers have answered
        workers.add(int(process.stdout.readline()))
    assert workers <= set(child_processes(process.pid))
    if how == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    else:
        os.kill(process.pid, signal.SIGTERM)
    started = time.monotonic()
    _, err = process.communicate(timeout=30)
    assert time.monotonic() - started < 5  # the queued tasks are cancelled, not run
    assert (process.returncode, err) == (130, "prog: interrupted\n")
    assert gone(workers)
