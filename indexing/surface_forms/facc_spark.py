"""Raw FACC1 annotations -> commonness counts on Apache Spark (``elquery index facc-counts
--engine spark``): the job of :func:`elquery.indexing.surface_forms.facc_annotations.count_annotations`
for inputs larger than one machine, with the same output bytes and the same report.

One task per annotation file or archive (the same formats: plain, ``.gz``, ``.bz2``, ``.tar``,
``.tgz``; so every executor must see the files at the paths given, on a shared file system). A
task applies :func:`~elquery.indexing.surface_forms.facc_annotations.annotation_pair` (the local
engine's rules, one line at a time) to each line in order, sums its (form, mid) pairs in a table of
at most :data:`PAIRS_PER_FLUSH` entries (emitted and cleared when full, so memory is bounded), and
tallies the file's :class:`~elquery.indexing.surface_forms.facc_annotations.FileCounts` with the
first malformed lines quoted. Spark sums the pairs over the files (``reduceByKey``, spilling to
disk as it needs), sorts them by line, and the driver streams them, one partition at a time, into
``out`` (written atomically).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from elquery.base import ElqueryError
from elquery.files import atomic_output
from elquery.indexing.surface_forms.facc_annotations import (
    CountReport,
    FileCounts,
    Rejected,
    annotation_streams,
    annotation_files,
    annotation_pair,
)
from elquery.spark import session

PAIRS_PER_FLUSH = 1_000_000
"""Distinct (form, mid) pairs a task sums in memory before handing them to Spark."""
_PAIR, _REPORT = 0, 1


def _file_records(path: str, min_posterior: float) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """``((0, form, mid), count)`` records of one file, then ``((1, path), FileCounts)``."""
    counts = FileCounts(path)
    pairs: dict[tuple[str, str], int] = {}
    for stream in annotation_streams(Path(path)):
        for line in stream:
            counts.lines += 1
            pair = annotation_pair(line, min_posterior)
            if isinstance(pair, Rejected):
                if pair is Rejected.MALFORMED:
                    counts.malformed_line(counts.lines, line.rstrip(b"\r\n"))
                else:
                    setattr(counts, pair.value, getattr(counts, pair.value) + 1)
                continue
            counts.counted += 1
            pairs[pair] = pairs.get(pair, 0) + 1
            if len(pairs) >= PAIRS_PER_FLUSH:
                yield from (((_PAIR, form, mid), n) for (form, mid), n in pairs.items())
                pairs.clear()
    yield from (((_PAIR, form, mid), n) for (form, mid), n in pairs.items())
    yield (_REPORT, path), counts


def _line(record: tuple[tuple[Any, ...], int]) -> str:
    (_, form, mid), count = record
    return f"{form}\t{mid}\t{count}\n"


def count_annotations_spark(paths: Iterable[Path | str], out: Path | str, *, min_posterior: float = 0.0,
                            master: str | None = None) -> CountReport:
    """Count the raw FACC1 annotations under ``paths`` into ``out`` on Spark (``master``, or the
    session of ``spark-submit``): the counts file and report of the local engine."""
    if not 0.0 <= min_posterior <= 1.0:
        raise ElqueryError(f"--min-posterior must be between 0 and 1, not {min_posterior:g}")
    files = [str(f) for f in annotation_files(paths)]
    context = session(master).sparkContext
    summed = (context.parallelize(files, len(files))
              .flatMap(partial(_file_records, min_posterior=min_posterior))
              .reduceByKey(operator.add)
              .persist())
    try:
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
