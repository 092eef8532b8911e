"""The compiled engine's second thread (elquery.linking.ltr.threads.HelperThread): kept between
batches, a query-sized batch of a 1,000-tree forest walked on two threads with scikit-learn's
numbers to the last bit, callers at once each get their own numbers, a failure of either part is
raised on the caller, the parts the thread has not started are run by their caller, and the
thread ends with its engine."""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from elquery.base import ElqueryError
from elquery.linking.ltr.features import FEATURES
from elquery.linking.ltr.forest import PARALLEL_PAIRS, CompiledEngine, from_sklearn
from elquery.linking.ltr.threads import THREADS_VARIABLE, HelperThread, default_threads
from elquery.linking.ltr.model import train_forest

TREES = 1000


def helper_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "elquery-forest"]


@pytest.fixture(scope="module")
def real_size() -> tuple[Any, np.ndarray]:
    """A forest of the size the linker runs (1,000 fully grown trees, three features a split, the
    paper's), on noisy labels, so that the trees are deep and their leaves many; and probe rows,
    some of them training rows (on the thresholds' neighbours)."""
    rng = np.random.default_rng(31)
    matrix = rng.random((3000, len(FEATURES)))
    matrix[:, 5] = np.round(matrix[:, 5] * 8)  # a feature of few values, as counts are
    labels = ((matrix[:, 0] + matrix[:, 3] > 1.0) ^ (rng.random(3000) < 0.05)).astype(np.int8)
    forest = train_forest(matrix, labels, trees=TREES, seed=8)
    probes = np.vstack([matrix[:60], rng.random((200, len(FEATURES)))]).astype(np.float32)
    return forest, probes


def test_a_query_sized_batch_is_walked_on_a_kept_second_thread_with_scikit_learns_numbers(
        real_size: tuple[Any, np.ndarray]) -> None:
    """A 51-row and a 22-row query (the 1M and the full-scale benchmarks' sizes) through a
    1,000-tree forest: on two threads (a kept helper thread: the same one for each batch, still
    there after it), the same numbers as scikit-learn's predict and as one thread. The engine
    tries one thread for its first two batches, then two (ThreadChoice)."""
    forest, probes = real_size
    two, one = CompiledEngine(from_sklearn(forest), threads=2), CompiledEngine(from_sklearn(forest), threads=1)
    before = set(helper_threads())
    seen = set()
    for number, size in enumerate((51, 22, 260, 51, 22, 51)):
        assert size * TREES >= PARALLEL_PAIRS
        rows = probes[:size] if size != 22 else probes[100:122]
        wanted = forest.predict(rows)
        assert np.array_equal(two.predict(rows), wanted), size
        assert np.array_equal(one.predict(rows), wanted), size
        seen |= set(helper_threads()) - before
        assert len(seen) == (number >= 2) and all(thread.is_alive() for thread in seen)  # one thread, kept


def test_callers_at_once_each_get_their_own_numbers(real_size: tuple[Any, np.ndarray]) -> None:
    """Six threads sharing one two-thread engine, each scoring its own batches many times at once
    (the helper thread runs one's parts at a time, the others run theirs): each batch
    scikit-learn's numbers."""
    forest, probes = real_size
    engine = CompiledEngine(from_sklearn(forest), threads=2)
    batches = [probes[start:start + size] for start, size in ((0, 51), (40, 22), (80, 64), (150, 30), (10, 45), (200, 17))]
    wanted = [forest.predict(rows) for rows in batches]

    def score(which: int) -> bool:
        return all(np.array_equal(engine.predict(batches[which]), wanted[which]) for _ in range(15))

    with ThreadPoolExecutor(len(batches)) as pool:
        assert all(pool.map(score, range(len(batches))))


def test_a_failure_of_any_part_is_raised_on_the_caller_and_the_thread_goes_on() -> None:
    """A part's exception on the thread is raised by run_beside; the first part's at once, the
    parts not started then not run (the one the thread runs ends there); then the next batch runs
    as before, a part on the thread."""
    helper = HelperThread("elquery-forest")

    def failing() -> None:
        raise ValueError("a part")

    with pytest.raises(ValueError, match="a part"):
        helper.run_beside(lambda: threading.Event().wait(0.2), [failing])
    started, ran = threading.Event(), []

    def slow() -> None:
        started.set()
        threading.Event().wait(0.3)
        ran.append("slow")

    def failing_first() -> None:
        assert started.wait(10)  # the thread has the first of the other parts
        raise KeyError("first part")

    with pytest.raises(KeyError, match="first part"):
        helper.run_beside(failing_first, [slow, lambda: ran.append("not started")])
    threading.Event().wait(0.5)
    assert ran == ["slow"]
    started.clear()

    def on_the_thread() -> None:
        ran.append(threading.current_thread().name)
        started.set()

    helper.run_beside(lambda: started.wait(10), [on_the_thread])
    assert ran == ["slow", "elquery-forest"]
    helper.stop()


def test_the_thread_takes_parts_in_order_and_the_caller_those_not_started_from_the_end() -> None:
    """The thread held up in the first of six parts: the caller, its own part done, runs the other
    five on its thread, from the last, each once, and waits for the thread's; a caller whose parts
    the thread cannot start (it runs another caller's) runs them all itself."""
    helper = HelperThread("elquery-forest")
    held, release = threading.Event(), threading.Event()
    runs: list[tuple[int, str]] = []

    def part(number: int) -> Callable[[], None]:
        def run() -> None:
            if number == 1:
                held.set()
                assert release.wait(10)
            runs.append((number, threading.current_thread().name))
            if number == 2:
                release.set()
        return run

    caller = threading.current_thread().name

    def first() -> None:  # long enough for the caller to wait for the thread's part (PATIENCE)
        assert held.wait(10)
        threading.Event().wait(2.0)

    helper.run_beside(first, [part(k) for k in range(1, 7)])
    assert runs == [(6, caller), (5, caller), (4, caller), (3, caller), (2, caller), (1, "elquery-forest")]
    held.clear()
    release.clear()
    holder = threading.Thread(target=helper.run_beside, args=(lambda: release.wait(10) and threading.Event().wait(0.3),
                                                              [part(1)]))
    holder.start()
    assert held.wait(10)
    runs.clear()
    helper.run_beside(lambda: None, [part(5), part(2)])  # the thread is busy: both here, from the end
    holder.join(10)
    assert runs == [(2, caller), (5, caller), (1, "elquery-forest")]
    helper.stop()


def test_a_part_the_thread_holds_too_long_is_run_again_by_the_caller() -> None:
    """The thread has started a part but does not end it (it lost its core, here: it waits): the
    caller, after PATIENCE times its own time for a part, runs the part itself and returns, not
    waiting for the thread."""
    from elquery.linking.ltr.threads import PATIENCE

    helper = HelperThread("elquery-forest")
    started, release = threading.Event(), threading.Event()
    runs: list[str] = []

    def part() -> None:
        if threading.current_thread().name == "elquery-forest":
            started.set()
            assert release.wait(10)
        runs.append(threading.current_thread().name)

    def first() -> None:
        assert started.wait(10)
        threading.Event().wait(0.1)

    begun = time.perf_counter()
    helper.run_beside(first, [part])
    waited = time.perf_counter() - begun
    assert runs == [threading.current_thread().name]
    assert 0.1 * (1 + PATIENCE) <= waited < 5
    release.set()
    helper.run_beside(lambda: threading.Event().wait(0.2), [part])  # the thread is free again
    assert runs[1:] == ["elquery-forest", "elquery-forest"]
    helper.stop()


def test_the_helper_thread_ends_with_its_engine(real_size: tuple[Any, np.ndarray]) -> None:
    forest, probes = real_size
    engine = CompiledEngine(from_sklearn(forest), threads=2)
    before = set(helper_threads())
    for _ in range(4):  # two on one thread, then two on two (ThreadChoice)
        engine.predict(probes[:51])
    (thread,) = set(helper_threads()) - before
    del engine
    gc.collect()
    thread.join(10)
    assert not thread.is_alive()


def test_the_threads_variable_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_VARIABLE, "1")
    assert default_threads() == 1
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    assert default_threads() == 2
    monkeypatch.setenv(THREADS_VARIABLE, "3")
    with pytest.raises(ElqueryError, match=f"^{THREADS_VARIABLE} must be 1 or 2, not '3'$"):
        default_threads()


@pytest.mark.parametrize(("workers", "threads"), [(1, None), (2, "1"), (3, "1"), (None, "1")])
def test_serve_gives_a_worker_one_forest_thread_when_the_workers_fill_the_cores(
        workers: int | None, threads: str | None, sample_link_artefacts: tuple[object, object],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On 2 cores, `elquery serve --workers 1` leaves its forest two threads; 2 or more workers
    (the default: one per core) fill the cores, and each walks its forest on one (the variable its
    worker processes inherit), as a second thread per worker would only contend for the cores."""
    import uvicorn

    import elquery.serve.cli as serve_cli
    import elquery.serve.workers as serve_workers
    from elquery.base import run

    for name in (THREADS_VARIABLE, "ELQUERY_SERVE_HOST", *serve_cli._ENV.values()):  # restored afterwards
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(serve_cli.os, "cpu_count", lambda: 2)
    started: list[str | None] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: started.append(serve_cli.os.environ.get(THREADS_VARIABLE)))
    monkeypatch.setattr(serve_workers, "run", lambda config, sock: started.append(serve_cli.os.environ.get(THREADS_VARIABLE)))
    monkeypatch.setattr(serve_cli, "_listening_socket", lambda host, port: None)
    index, surface_forms = sample_link_artefacts
    asked = [] if workers is None else ["--workers", str(workers)]
    assert run([serve_cli.register], "elquery", ["serve", "--index", str(index), "--surface-forms", str(surface_forms),
                                                 *asked]) == 0
    assert started == [threads]
    if threads is not None:
        assert default_threads() == 1


def test_serve_refuses_a_bad_threads_variable_in_one_line(sample_link_artefacts: tuple[object, object],
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import uvicorn

    import elquery.serve.cli as serve_cli
    from elquery.base import run

    for name in ("ELQUERY_SERVE_HOST", *serve_cli._ENV.values()):  # restored afterwards
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(THREADS_VARIABLE, "two")
    monkeypatch.setattr(uvicorn.Server, "run", lambda server: pytest.fail("the server started"))
    index, surface_forms = sample_link_artefacts
    assert run([serve_cli.register], "elquery", ["serve", "--index", str(index), "--surface-forms",
                                                 str(surface_forms)]) == 2
    assert capsys.readouterr().err == f"elquery: error: {THREADS_VARIABLE} must be 1 or 2, not 'two'\n"


@pytest.mark.parametrize(("workers", "threads"), [(1, None), (2, "1"), (3, "1")])
def test_a_batch_linking_worker_gets_one_forest_thread_when_the_workers_fill_the_cores(
        workers: int, threads: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """On 2 cores, `elquery link --workers 2` (or more) makes each worker's linker walk its forest on
    one thread, as serve does; one worker keeps two. The worker's linker is made after the rule."""
    import os

    import elquery.linking.batch as batch
    from elquery.linking.ltr.threads import THREADS_VARIABLE

    monkeypatch.delenv(THREADS_VARIABLE, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    seen: list[str | None] = []
    monkeypatch.setattr(batch, "_worker_linker", None)
    batch._start_worker(lambda: seen.append(os.environ.get(THREADS_VARIABLE)), workers)  # type: ignore[arg-type, return-value]
    assert seen == [threads]
    monkeypatch.setenv(THREADS_VARIABLE, "2")  # the user's value is kept
    batch._start_worker(lambda: seen.append(os.environ.get(THREADS_VARIABLE)), workers)  # type: ignore[arg-type, return-value]
    assert seen[-1] == "2"


def test_a_bad_threads_variable_stops_a_batch_in_one_line_whatever_its_workers(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`ELQUERY_LTR_THREADS=x elquery link --queries FILE` stops before linking with one line and
    exit 2, also when the batch is too small for a second worker (where no worker's start checks it)."""
    from elquery.cli import main as elquery
    from elquery.linking.ltr.threads import THREADS_VARIABLE

    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tnew york pizza\nq2\ttotal recall\n", encoding="utf-8")
    monkeypatch.setenv(THREADS_VARIABLE, "x")
    out = tmp_path / "links.tsv"
    assert elquery(["link", "--queries", str(queries), "--workers", "2", "--out", str(out)]) == 2
    assert not out.exists()


def test_the_faster_way_is_chosen_the_other_tried_every_explore_every_th_batch() -> None:
    """ThreadChoice: one thread twice, two threads twice (the first batch of each not counted),
    then the way of the lower average wall time per pair, the other one batch in EXPLORE_EVERY;
    when the chosen way slows down (the machine got busy), the other is taken within a few of
    its tries; a single very slow batch moves an average by SMOOTHING of it at most."""
    from elquery.linking.ltr.forest import EXPLORE_EVERY, SMOOTHING, ThreadChoice

    choice = ThreadChoice()
    pairs = 51_000

    def walk(seconds_one: float, seconds_two: float) -> int:
        threads = choice.threads()
        choice.record(threads, seconds_one if threads == 1 else seconds_two, pairs)
        return threads

    assert [walk(9.0, 9.0) if n % 2 == 0 else walk(1.7e-3, 1.0e-3) for n in range(4)] == [1, 1, 2, 2]
    assert choice.seconds == [1.7e-3 / pairs, 1.0e-3 / pairs]  # the first batches (9 s) not counted
    ways = [walk(1.7e-3, 1.0e-3) for _ in range(4 * EXPLORE_EVERY)]
    assert ways.count(1) == 4 and all(ways[n] == 1 for n in range(len(ways)) if (n + 5) % EXPLORE_EVERY == 0)
    before = choice.seconds[1]
    walk(1.7e-3, 1.0)  # one batch of two threads 1,000 times slower
    assert choice.seconds[1] == pytest.approx(before * (1 + SMOOTHING))
    ways = [walk(1.7e-3, 4.0e-3) for _ in range(40)]  # two threads now slower than one
    assert ways[-20:].count(2) <= 2 and ways[-20:].count(1) >= 18


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs")
def test_the_helper_thread_is_kept_off_the_callers_cpu() -> None:
    """Handed a batch, the thread may run on any of the main thread's CPUs but the caller's (else the
    scheduler often wakes it on the caller's, where the two take turns); when the caller has moved
    to another CPU, the thread is kept off that one instead."""
    import ctypes

    cpus = sorted(os.sched_getaffinity(0))
    helper = HelperThread("elquery-forest")
    seen: list[tuple[int, int]] = []  # the thread's id and CPU

    def note() -> None:
        seen.append((threading.get_native_id(), ctypes.CDLL(None).sched_getcpu()))

    def caller(cpu: int) -> None:  # a thread of its own, held on one CPU
        os.sched_setaffinity(0, {cpu})
        done = threading.Event()
        helper.hand(lambda: note() or done.set())
        assert done.wait(10)

    for cpu in cpus[:2]:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(caller, cpu).result()
        thread, ran_on = seen[-1]
        assert os.sched_getaffinity(thread) == set(cpus) - {cpu}
        assert ran_on != cpu
    helper.stop()
