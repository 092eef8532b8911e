"""Raw FACC1 annotations -> commonness counts on Apache Spark (``elquery index facc-counts
--engine spark``): the job of :func:`elquery.indexing.surface_forms.facc_annotations.count_annotations`
for inputs larger than one machine, with the same output bytes and the same report.

One task per annotation file or archive (the same formats: plain, ``.gz``, ``.bz2``, ``.tar``,
``.tgz``; so every executor must see the files at the paths given, on a shared file system). A
task counts its file exactly as a local worker does,
:func:`~elquery.indexing.surface_forms.facc_annotations.count_file` (pyarrow's parsing, checks and
hash aggregation, the same normalization, sorted run files on the executor's local disk within
``memory_mb``), and hands Spark its merged (form, mid) sums followed by the file's
:class:`~elquery.indexing.surface_forms.facc_annotations.FileCounts`: the same malformed lines,
numbers and examples. A file that cannot be read to its end fails the job with the local
engine's one-line error, and nothing is written. Spark adds the sums up over the files
(``reduceByKey``, spilling to disk as it needs) and sorts them by line; the driver
streams them, one partition at a time, into ``out`` (written atomically).
"""

from __future__ import annotations

import operator
import tempfile
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.indexing.surface_forms.facc_annotations import (
    DEFAULT_MEMORY_MB,
    CountReport,
    annotation_files,
    count_file,
    merged_pairs,
)
from elquery.spark import session

_PAIR, _REPORT, _ERROR = 0, 1, 2


def _file_records(path: str, min_posterior: float, memory_mb: int) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """``((0, form<TAB>mid), count)`` records of one file, then ``((1, path), FileCounts)``; or,
    for a file that cannot be read (truncated, corrupt), only ``((2, path), message)``: the driver
    raises it as the local engine does, one line instead of an executor's stack trace."""
    with tempfile.TemporaryDirectory(prefix="elquery-facc-") as directory:
        try:
            counts, runs = count_file(Path(path), min_posterior, memory_mb, Path(directory))
        except ElqueryError as exc:
            yield (_ERROR, path), str(exc)
            return
        yield from (((_PAIR, key), total) for key, total in merged_pairs(runs, memory_mb))
    yield (_REPORT, path), counts


def _line(record: tuple[tuple[Any, ...], int]) -> str:
    (_, key), count = record
    return f"{key}\t{count}\n"


def count_annotations_spark(paths: Iterable[Path | str], out: Path | str, *, min_posterior: float = 0.0,
                            memory_mb: int = DEFAULT_MEMORY_MB, master: str | None = None) -> CountReport:
    """Count the raw FACC1 annotations under ``paths`` into ``out`` on Spark (``master``, or the
    session of ``spark-submit``), each task within ``memory_mb`` of pairs: the counts file and
    report of the local engine."""
    if not 0.0 <= min_posterior <= 1.0:
        raise ElqueryError(f"--min-posterior must be between 0 and 1, not {min_posterior:g}")
    if memory_mb < 1:
        raise ElqueryError("--memory must be at least 1")
    files = [str(f) for f in annotation_files(paths)]
    context = session(master).sparkContext
    summed = (context.parallelize(files, len(files))
              .flatMap(partial(_file_records, min_posterior=min_posterior, memory_mb=memory_mb))
              .reduceByKey(operator.add)
              .persist())
    try:
        errors = dict(summed.filter(lambda record: record[0][0] == _ERROR)
                      .map(lambda record: (record[0][1], record[1])).collect())
        for f in files:  # the first damaged file, in the local engine's order
            if f in errors:
                raise ElqueryError(errors[f])
        by_file = dict(summed.filter(lambda record: record[0][0] == _REPORT)
                       .map(lambda record: (record[0][1], record[1])).collect())
        report = CountReport(files=[by_file[f] for f in files])
        lines = summed.filter(lambda record: record[0][0] == _PAIR).map(_line).sortBy(lambda line: line)
        with atomic_output(out) as sink:
            for line in lines.toLocalIterator():
                sink.write(line)
                report.pairs += 1
    finally:
        summed.unpersist()
    return report
