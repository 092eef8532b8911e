"""Linking on Apache Spark (``elquery link --engine spark``, and a DataFrame API).

Each executor's Python worker builds the linker once from its picklable factory (the one worker
processes use, :mod:`elquery.linking.batch`) and keeps it for every partition it runs
(:func:`elquery.spark.worker_cached`), so the artefacts must be at the same paths on every node (a
shared file system, or copied there before the job; docs/spark.md). The results are those of the
linker's ``result``, so a run written from them is the local run, byte for byte.

:func:`link_dataframe` turns a DataFrame of ``(qid, query)`` into one row per scored mention, per
interpretation or per ranked entity, with the fields of the ``jsonl`` output (docs/formats.md).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from elquery.base import ElqueryError
from elquery.linking.batch import Factory
from elquery.formats.link_output import jsonl_record
from elquery.spark import ordered_partitions, worker_cached

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from elquery.linking.types import LinkResult

T = TypeVar("T")
_MENTION = "struct<text: string, start: int, end: int, char_start: int, char_end: int>"
_ANNOTATION = f"struct<mention: {_MENTION}, entity: string, score: double, commonness: double>"
SCHEMAS = {
    "mentions": f"qid string, mention {_MENTION}, entity string, score double, commonness double",
    "interpretations": f"qid string, interpretation int, score double, annotations array<{_ANNOTATION}>",
    "ranking": f"qid string, rank int, entity string, score double, mention {_MENTION}",
}
"""The rows of :func:`link_dataframe` by level: the ``mentions``, ``interpretations`` (numbered from
0, best first) and ``ranking`` (rank from 1) lists of a ``jsonl`` record, one row per element."""


def _results(queries: Iterable[tuple[str, str]], factory: Factory, key: bytes,
             encode: Callable[[LinkResult], T]) -> Iterator[T]:
    linker = worker_cached(("linker", key), factory)
    for qid, query in queries:
        yield encode(linker.result(query, qid))


def link_spark(factory: Factory, queries: Iterable[tuple[str, str]], encode: Callable[[LinkResult], T],
               master: str | None = None) -> Iterator[T]:
    """``encode(result)`` of every ``(qid, query)``, in input order, linked on Spark (``master``, or
    the session of ``spark-submit``) by linkers that ``factory`` makes on the executors."""
    work = partial(_results, factory=factory, key=pickle.dumps(factory), encode=encode)
    return ordered_partitions(list(queries), master, work)


def _mention(record: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(record[name] for name in ("text", "start", "end", "char_start", "char_end"))


def _annotation(record: dict[str, Any]) -> tuple[Any, ...]:
    return _mention(record["mention"]), record["entity"], float(record["score"]), float(record["commonness"])


def _rows(level: str, result: LinkResult) -> list[tuple[Any, ...]]:
    record = jsonl_record(result)
    qid = record["qid"]
    if level == "mentions":
        return [(qid, *_annotation(m)) for m in record["mentions"]]
    if level == "interpretations":
        return [(qid, number, float(i["score"]), [_annotation(a) for a in i["annotations"]])
                for number, i in enumerate(record["interpretations"])]
    return [(qid, rank, r["entity"], float(r["score"]), _mention(r["mention"]))
            for rank, r in enumerate(record["ranking"], start=1)]


def _row_partition(rows: Iterable[Any], factory: Factory, key: bytes, level: str) -> Iterator[tuple[Any, ...]]:
    for found in _results(((row[0], row[1]) for row in rows), factory, key, partial(_rows, level)):
        yield from found


def link_dataframe(queries: DataFrame, linker: Any, level: str = "ranking") -> DataFrame:
    """The linking results of a DataFrame with string columns ``qid`` and ``query`` as a DataFrame
    of :data:`SCHEMAS` ``[level]`` rows, by copies of ``linker`` (a
    :class:`~elquery.linking.linker.Linker` built from artefact paths, or a
    :class:`~elquery.linking.tagme.annotator.TagmeLinker`) on the executors."""
    if level not in SCHEMAS:
        raise ElqueryError(f"unknown level {level!r}; levels are {', '.join(SCHEMAS)}")
    factory = linker.factory()
    rows = queries.select("qid", "query").rdd.mapPartitions(
        partial(_row_partition, factory=factory, key=pickle.dumps(factory), level=level))
    return queries.sparkSession.createDataFrame(rows, SCHEMAS[level])
